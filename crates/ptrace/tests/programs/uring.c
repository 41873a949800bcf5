/* io_uring through raw system calls (no liburing): io_uring_setup, the
 * rings mapped as liburing maps them (one mapping for both rings when the
 * kernel allows), then
 *   1. WRITE and WRITEV submitted together, reaped in the same call;
 *   2. FSYNC, READ and a READV that ends short at end of file;
 *   3. a WRITE whose completion the program takes from the ring itself,
 *      with no call (as liburing's io_uring_peek_cqe does), then a NOP
 *      reaped by a call: the recorder sees the first completion late;
 *   4. a READ on a bad descriptor.
 * Each completion is reported as "cqe_<user_data> res" and read data in
 * hex, so the test can compare the trace with what the program saw. */
#include "common.h"
#include "ring.h"

#include <sys/uio.h>

static struct ring r;

/* Submits `n` prepared requests and waits for `want` completions,
 * reporting them. */
static void submit_and_reap(const char *what, unsigned n, unsigned want)
{
    ring_publish(&r, n);
    long got = SYS6(SYS_io_uring_enter, r.fd, n, want, IORING_ENTER_GETEVENTS, NULL, 0);
    rep("%s %ld", what, got);
    ring_reap(&r, NULL, want, 0);
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: uring DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS4(SYS_openat, AT_FDCWD, in_dir(dir, "uring.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create uring.dat");
    rep("fd %ld", fd);

    ring_setup(&r, 8, 0);
    rep("ring %ld", r.fd);

    /* 1. Writes. */
    static unsigned char w0[8192], w1a[3000], w1b[5192];
    fill(w0, sizeof w0, 1);
    fill(w1a, sizeof w1a, 2);
    fill(w1b, sizeof w1b, 3);
    struct iovec wv[2] = { { w1a, sizeof w1a }, { w1b, sizeof w1b } };
    ring_prep(&r, 0, IORING_OP_WRITE, fd, w0, sizeof w0, 0, 100);
    ring_prep(&r, 1, IORING_OP_WRITEV, fd, wv, 2, 8192, 101);
    submit_and_reap("submit_writes", 2, 2);

    /* 2. FSYNC first, drained before the reads (IOSQE_IO_DRAIN). */
    static unsigned char r0[8192], r1a[100], r1b[20000];
    struct iovec rv[2] = { { r1a, sizeof r1a }, { r1b, sizeof r1b } };
    ring_prep(&r, 0, IORING_OP_FSYNC, fd, NULL, 0, 0, 102);
    ring_prep(&r, 1, IORING_OP_READ, fd, r0, sizeof r0, 4096, 103)->flags = IOSQE_IO_DRAIN;
    ring_prep(&r, 2, IORING_OP_READV, fd, rv, 2, 12000, 104);
    submit_and_reap("submit_reads", 3, 3);
    rep_hex("read", r0, sizeof r0);
    rep_hex("readv_0", r1a, sizeof r1a);
    rep_hex("readv_1", r1b, 16384 - 12000 - sizeof r1a);

    /* 3. A completion taken with no call. */
    static unsigned char w2[4096];
    fill(w2, sizeof w2, 4);
    ring_prep(&r, 0, IORING_OP_WRITE, fd, w2, sizeof w2, 16384, 105);
    ring_publish(&r, 1);
    rep("submit_quiet %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 0, 0, NULL, 0));
    while (ring_drain(&r, NULL) == 0)
        ;
    ring_prep(&r, 0, IORING_OP_NOP, -1, NULL, 0, 0, 106);
    submit_and_reap("submit_nop", 1, 1);

    /* 4. A bad descriptor fails in its completion, not in the call. */
    ring_prep(&r, 0, IORING_OP_READ, 999, r0, 16, 0, 107);
    submit_and_reap("submit_bad", 1, 1);

    check(munmap(r.sqes, r.entries * sizeof(struct io_uring_sqe)) == 0, "munmap");
    check(close(r.fd) == 0, "close ring");
    return 0;
}
