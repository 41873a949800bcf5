/* Extended attributes: setxattr, getxattr (size query, value, missing
 * name), fgetxattr, listxattr. Each result is reported as "ret errno"
 * (errno 0 on success), so a file system without user xattrs (ENOTSUP)
 * still gives the test something exact to check. */
#include "common.h"

static void rep_call(const char *key, long r)
{
    rep("%s %ld %d", key, r, r < 0 ? errno : 0);
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: xattrs DIR");
    const char *dir = argv[1];
    rep_open(dir);
    const char *file = in_dir(dir, "x.dat");
    long fd = SYS3(SYS_open, file, O_CREAT | O_RDWR, 0644);
    check(fd >= 0, "create x.dat");
    rep("fd %ld", fd);

    unsigned char value[37];
    fill(value, sizeof value, 9);
    rep_call("setxattr", SYS5(SYS_setxattr, file, "user.reanimator", value, sizeof value, 0));
    rep_call("getxattr_size", SYS4(SYS_getxattr, file, "user.reanimator", NULL, 0));
    unsigned char got[256];
    long n = SYS4(SYS_getxattr, file, "user.reanimator", got, sizeof got);
    rep_call("getxattr", n);
    rep_hex("getxattr_data", got, n > 0 ? n : 0);
    rep_call("getxattr_missing", SYS4(SYS_getxattr, file, "user.missing", got, sizeof got));
    n = SYS4(SYS_fgetxattr, fd, "user.reanimator", got, sizeof got);
    rep_call("fgetxattr", n);
    rep_hex("fgetxattr_data", got, n > 0 ? n : 0);
    char list[1024];
    n = SYS3(SYS_listxattr, file, list, sizeof list);
    rep_call("listxattr", n);
    rep_hex("listxattr_data", list, n > 0 ? n : 0);
    return 0;
}
