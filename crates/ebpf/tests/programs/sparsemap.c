/* A large shared file mapping of which the program touches three pages
 * (as LMDB maps its whole map size): stores to the first, middle and
 * last page, msync of the whole mapping, one more store, munmap of the
 * whole mapping. Page p holds byte (p & 0xff) + 1 after the first
 * stores; the first page holds 0xee after the last one.
 * Usage: sparsemap FILE SIZE */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long size = atol(argv[2]);
    int fd = open(argv[1], O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, size))
        return 3;
    unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return 4;
    long pages[] = {0, size / 4096 / 2, size / 4096 - 1};
    for (int i = 0; i < 3; i++)
        for (long j = 0; j < 4096; j++)
            m[pages[i] * 4096 + j] = (unsigned char)((pages[i] & 0xff) + 1);
    if (msync(m, size, MS_SYNC))
        return 5;
    m[0] = 0xee;
    if (munmap(m, size))
        return 6;
    return close(fd);
}
