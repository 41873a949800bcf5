/* File I/O: open/creat/openat, write, pwrite64, writev, lseek, read,
 * pread64, readv, fsync, ftruncate, close, unlink, unlinkat.
 * Patterns come from fill() with seeds 1 (4096 bytes), 2 (100), 3 (1),
 * 4 (pwrite64, 512 bytes at 10000) and 5, 6, 7 (writev, 10/20/30 bytes). */
#include "common.h"
#include <sys/uio.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: files DIR");
    const char *dir = argv[1];
    rep_open(dir);

    long fd = SYS3(SYS_open, in_dir(dir, "a.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "open");
    long fd_b = SYS2(SYS_creat, in_dir(dir, "b.dat"), 0600);
    check(fd_b >= 0, "creat");
    long dfd = SYS3(SYS_open, dir, O_RDONLY | O_DIRECTORY, 0);
    check(dfd >= 0, "open dir");
    long fd_c = SYS4(SYS_openat, dfd, "c.dat", O_CREAT | O_RDWR, 0640);
    check(fd_c >= 0, "openat");
    rep("fd %ld", fd);
    rep("fd_b %ld", fd_b);
    rep("dfd %ld", dfd);
    rep("fd_c %ld", fd_c);

    static unsigned char a[4096], b[100], c[1], p[512], v0[10], v1[20], v2[30];
    fill(a, sizeof a, 1);
    fill(b, sizeof b, 2);
    fill(c, sizeof c, 3);
    fill(p, sizeof p, 4);
    fill(v0, sizeof v0, 5);
    fill(v1, sizeof v1, 6);
    fill(v2, sizeof v2, 7);

    rep("write1 %ld", SYS3(SYS_write, fd, a, sizeof a));
    rep("write2 %ld", SYS3(SYS_write, fd, b, sizeof b));
    rep("write3 %ld", SYS3(SYS_write, fd, c, sizeof c));
    rep("pwrite %ld", SYS4(SYS_pwrite64, fd, p, sizeof p, 10000));
    struct iovec wv[3] = {{v0, sizeof v0}, {v1, sizeof v1}, {v2, sizeof v2}};
    rep("writev %ld", SYS3(SYS_writev, fd, wv, 3));
    rep("lseek %ld", SYS3(SYS_lseek, fd, 0, SEEK_SET));

    static unsigned char r[5000], pr[600], rv0[100], rv1[200], rv2[50000];
    long n = SYS3(SYS_read, fd, r, sizeof r);
    rep("read %ld", n);
    rep_hex("read_data", r, n > 0 ? n : 0);
    n = SYS4(SYS_pread64, fd, pr, sizeof pr, 9990);
    rep("pread %ld", n);
    rep_hex("pread_data", pr, n > 0 ? n : 0);
    struct iovec rv[3] = {{rv0, sizeof rv0}, {rv1, sizeof rv1}, {rv2, sizeof rv2}};
    n = SYS3(SYS_readv, fd, rv, 3);
    rep("readv %ld", n);
    rep_hex("readv_data0", rv0, sizeof rv0);
    rep_hex("readv_data1", rv1, sizeof rv1);
    rep_hex("readv_data2", rv2, n > 300 ? n - 300 : 0);

    rep("fsync %ld", SYS1(SYS_fsync, fd));
    rep("ftruncate %ld", SYS2(SYS_ftruncate, fd, 3000));
    rep("close %ld", SYS1(SYS_close, fd));
    rep("close_b %ld", SYS1(SYS_close, fd_b));
    rep("close_c %ld", SYS1(SYS_close, fd_c));
    /* Errors are recorded too: a closed descriptor. */
    long bad = SYS3(SYS_write, fd, a, 16);
    rep("bad_write %ld %d", bad, errno);
    rep("unlink %ld", SYS1(SYS_unlink, in_dir(dir, "a.dat")));
    rep("unlink_b %ld", SYS1(SYS_unlink, in_dir(dir, "b.dat")));
    rep("unlinkat %ld", SYS3(SYS_unlinkat, dfd, "c.dat", 0));
    return 0;
}
