/* Pipes and descriptor duplication: pipe2, dup, dup2, dup3, data through
 * duplicated ends. */
#include "common.h"

int main(int argc, char **argv)
{
    check(argc == 2, "usage: pipes DIR");
    rep_open(argv[1]);
    int fds[2] = {-1, -1};
    rep("pipe2 %ld", SYS2(SYS_pipe2, fds, O_CLOEXEC));
    rep("fds %d %d", fds[0], fds[1]);
    long dupfd = SYS1(SYS_dup, fds[1]);
    rep("dup %ld", dupfd);
    rep("dup2 %ld", SYS2(SYS_dup2, fds[1], 50));
    rep("dup3 %ld", SYS3(SYS_dup3, fds[0], 51, O_CLOEXEC));
    long r = SYS3(SYS_dup3, 51, 51, 0);
    rep("dup3_same %ld %d", r, errno);

    static unsigned char m1[300], m2[7], m3[4096], got[8192];
    fill(m1, sizeof m1, 21);
    fill(m2, sizeof m2, 22);
    fill(m3, sizeof m3, 23);
    rep("write_dup %ld", SYS3(SYS_write, dupfd, m1, sizeof m1));
    rep("write_50 %ld", SYS3(SYS_write, 50, m2, sizeof m2));
    long n = SYS3(SYS_read, 51, got, 1000);
    rep("read_51 %ld", n);
    rep_hex("read_51_data", got, n > 0 ? n : 0);
    rep("write_orig %ld", SYS3(SYS_write, fds[1], m3, sizeof m3));
    n = SYS3(SYS_read, fds[0], got, sizeof got);
    rep("read_orig %ld", n);
    rep_hex("read_orig_data", got, n > 0 ? n : 0);
    return 0;
}
