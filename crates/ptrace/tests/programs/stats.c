/* The stat family: stat, fstat, lstat, newfstatat (path and AT_EMPTY_PATH),
 * statx, and a stat that fails. Each struct the kernel filled is
 * reported in hex, exactly as the program got it. */
#include "common.h"
#include <sys/stat.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: stats DIR");
    const char *dir = argv[1];
    rep_open(dir);
    const char *file = in_dir(dir, "s.dat");
    const char *link = in_dir(dir, "s.lnk");
    long fd = SYS3(SYS_open, file, O_CREAT | O_RDWR, 0640);
    check(fd >= 0, "create s.dat");
    static unsigned char data[1234];
    fill(data, sizeof data, 11);
    check(SYS3(SYS_write, fd, data, sizeof data) == sizeof data, "write");
    check(SYS2(SYS_symlink, "s.dat", link) == 0, "symlink");
    long dfd = SYS3(SYS_open, dir, O_RDONLY | O_DIRECTORY, 0);
    check(dfd >= 0, "open dir");
    rep("fd %ld", fd);
    rep("dfd %ld", dfd);

    struct stat st;
    check(sizeof st == 144, "struct stat is 144 bytes");
    memset(&st, 0xa5, sizeof st);
    rep("stat %ld", SYS2(SYS_stat, file, &st));
    rep_hex("stat_data", &st, sizeof st);
    memset(&st, 0xa5, sizeof st);
    rep("fstat %ld", SYS2(SYS_fstat, fd, &st));
    rep_hex("fstat_data", &st, sizeof st);
    memset(&st, 0xa5, sizeof st);
    rep("lstat %ld", SYS2(SYS_lstat, link, &st));
    rep_hex("lstat_data", &st, sizeof st);
    memset(&st, 0xa5, sizeof st);
    rep("fstatat %ld", SYS4(SYS_newfstatat, dfd, "s.lnk", &st, 0));
    rep_hex("fstatat_data", &st, sizeof st);
    memset(&st, 0xa5, sizeof st);
    rep("fstatat_empty %ld", SYS4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH));
    rep_hex("fstatat_empty_data", &st, sizeof st);

    struct statx stx;
    check(sizeof stx == 256, "struct statx is 256 bytes");
    memset(&stx, 0xa5, sizeof stx);
    rep("statx %ld", SYS5(SYS_statx, AT_FDCWD, file, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &stx));
    rep_hex("statx_data", &stx, sizeof stx);

    long bad = SYS2(SYS_stat, in_dir(dir, "missing"), &st);
    rep("stat_missing %ld %d", bad, errno);
    return 0;
}
