/* shared_map_exit SIZE_MIB STRIDE_KIB [random|unmap]: makes `m.bin`
 * SIZE_MIB long, maps it shared, stores one byte every STRIDE_KIB and
 * exits with the mapping still there, so only the recorders' capture at
 * exit_group holds the stores. `random` asks for no read-ahead
 * (MADV_RANDOM), so only the pages stored to are resident; `unmap`
 * unmaps it first, so the capture at munmap holds them. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    size_t size = (size_t)atoi(argv[1]) << 20, stride = (size_t)atoi(argv[2]) << 10;
    int fd = open("m.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, size) != 0)
        return 3;
    unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 4;
    if (argc > 3 && strcmp(argv[3], "random") == 0 && madvise(p, size, MADV_RANDOM) != 0)
        return 5;
    for (size_t at = 0; at < size; at += stride)
        p[at] = (unsigned char)(1 + at / stride);
    if (argc > 3 && strcmp(argv[3], "unmap") == 0 && munmap(p, size) != 0)
        return 6;
    return 0;
}
