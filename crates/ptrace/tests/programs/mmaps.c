/* Memory mapping: a shared file mapping at an offset, mprotect, munmap,
 * an anonymous mapping, and calls that fail. */
#include "common.h"
#include <sys/mman.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: mmaps DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS3(SYS_open, in_dir(dir, "m.dat"), O_CREAT | O_RDWR, 0644);
    check(fd >= 0, "create m.dat");
    check(SYS2(SYS_ftruncate, fd, 20480) == 0, "ftruncate");
    rep("fd %ld", fd);

    long p = SYS6(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
    check(p != -1, "mmap file");
    ((volatile char *)p)[0] = 'x';
    rep("mmap_file %ld", p);
    rep("mprotect %ld", SYS3(SYS_mprotect, p, 4096, PROT_READ));
    rep("munmap %ld", SYS2(SYS_munmap, p, 8192));

    long q = SYS6(SYS_mmap, 0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(q != -1, "mmap anonymous");
    memset((void *)q, 7, 65536);
    rep("mmap_anon %ld", q);
    rep("munmap_anon %ld", SYS2(SYS_munmap, q, 65536));
    long r = SYS3(SYS_mprotect, q, 4096, PROT_READ);
    rep("mprotect_unmapped %ld %d", r, errno);
    r = SYS6(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED, 9999, 0);
    rep("mmap_badfd %ld %d", r, errno);
    return 0;
}
