/* Directories and links: mkdir, mkdirat, rename, renameat2, link,
 * symlink, readlink, getdents64, rmdir, unlinkat, unlink. */
#include "common.h"

int main(int argc, char **argv)
{
    check(argc == 2, "usage: dirs DIR");
    const char *dir = argv[1];
    rep_open(dir);

    long dfd = SYS3(SYS_open, dir, O_RDONLY | O_DIRECTORY, 0);
    check(dfd >= 0, "open dir");
    rep("dfd %ld", dfd);
    rep("mkdir %ld", SYS2(SYS_mkdir, in_dir(dir, "d1"), 0755));
    long again = SYS2(SYS_mkdir, in_dir(dir, "d1"), 0755);
    rep("mkdir_again %ld %d", again, errno);
    rep("mkdirat %ld", SYS3(SYS_mkdirat, dfd, "d2", 0700));

    long fd = SYS3(SYS_open, in_dir(dir, "d1/f"), O_CREAT | O_WRONLY, 0644);
    check(fd >= 0, "create d1/f");
    check(SYS1(SYS_close, fd) == 0, "close");
    rep("rename %ld", SYS2(SYS_rename, in_dir(dir, "d1/f"), in_dir(dir, "d1/g")));
    rep("renameat2 %ld", SYS5(SYS_renameat2, dfd, "d1/g", dfd, "d2/h", RENAME_NOREPLACE));
    rep("link %ld", SYS2(SYS_link, in_dir(dir, "d2/h"), in_dir(dir, "d2/hl")));
    rep("symlink %ld", SYS2(SYS_symlink, "d2/h-link-target", in_dir(dir, "sl")));

    char target[256];
    long n = SYS3(SYS_readlink, in_dir(dir, "sl"), target, sizeof target);
    rep("readlink %ld", n);
    rep_hex("readlink_data", target, n > 0 ? n : 0);

    long d2 = SYS3(SYS_openat, dfd, "d2", O_RDONLY | O_DIRECTORY);
    check(d2 >= 0, "open d2");
    rep("d2 %ld", d2);
    static char dents[4096];
    n = SYS3(SYS_getdents64, d2, dents, sizeof dents);
    rep("getdents1 %ld", n);
    rep_hex("getdents1_data", dents, n > 0 ? n : 0);
    n = SYS3(SYS_getdents64, d2, dents, sizeof dents);
    rep("getdents2 %ld", n);
    check(SYS1(SYS_close, d2) == 0, "close d2");

    rep("rmdir %ld", SYS1(SYS_rmdir, in_dir(dir, "d1")));
    rep("unlinkat_hl %ld", SYS3(SYS_unlinkat, dfd, "d2/hl", 0));
    rep("unlinkat_h %ld", SYS3(SYS_unlinkat, dfd, "d2/h", 0));
    rep("unlinkat_d2 %ld", SYS3(SYS_unlinkat, dfd, "d2", AT_REMOVEDIR));
    rep("unlink_sl %ld", SYS1(SYS_unlink, in_dir(dir, "sl")));
    return 0;
}
