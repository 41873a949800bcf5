/* Linux AIO through raw system calls (no libaio): io_setup, io_submit of
 * PWRITE, PWRITEV and FDSYNC requests, io_getevents, then PREAD and a
 * PREADV that ends short at end of file, a request on a bad descriptor,
 * an empty submission, a poll with a zero timeout, io_destroy. Each
 * completion is reported as "event_<data> res" and read data in hex, so
 * the test can compare the trace with what the program saw. */
#include "common.h"

#include <linux/aio_abi.h>
#include <sys/uio.h>
#include <time.h>

static void prep(struct iocb *cb, int op, long fd, void *buf, long n, long off, long data)
{
    memset(cb, 0, sizeof *cb);
    cb->aio_lio_opcode = op;
    cb->aio_fildes = fd;
    cb->aio_buf = (unsigned long)buf;
    cb->aio_nbytes = n;
    cb->aio_offset = off;
    cb->aio_data = data;
}

/* Reaps exactly `want` completions, reporting each. */
static void reap(aio_context_t ctx, long want)
{
    struct io_event ev[8];
    long got = 0;
    while (got < want) {
        long n = SYS5(SYS_io_getevents, ctx, want - got, 8, ev, NULL);
        check(n > 0, "io_getevents");
        for (long i = 0; i < n; i++)
            rep("event_%llu %lld", (unsigned long long)ev[i].data, (long long)ev[i].res);
        got += n;
    }
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: aio DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS4(SYS_openat, AT_FDCWD, in_dir(dir, "aio.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create aio.dat");
    rep("fd %ld", fd);

    aio_context_t ctx = 0;
    long r = SYS2(SYS_io_setup, 16, &ctx);
    check(r == 0, "io_setup");

    static unsigned char w0[8192], w1a[3000], w1b[5192];
    fill(w0, sizeof w0, 1);
    fill(w1a, sizeof w1a, 2);
    fill(w1b, sizeof w1b, 3);
    struct iovec wv[2] = { { w1a, sizeof w1a }, { w1b, sizeof w1b } };
    struct iocb cbs[5];
    struct iocb *ptrs[5];
    prep(&cbs[0], IOCB_CMD_PWRITE, fd, w0, sizeof w0, 0, 100);
    prep(&cbs[1], IOCB_CMD_PWRITEV, fd, wv, 2, 8192, 101);
    prep(&cbs[2], IOCB_CMD_FDSYNC, fd, NULL, 0, 0, 102);
    for (int i = 0; i < 3; i++)
        ptrs[i] = &cbs[i];
    /* FDSYNC may complete before the writes: what it syncs is not
     * ordered, and the program does not care. */
    rep("submit_writes %ld", SYS3(SYS_io_submit, ctx, 3, ptrs));
    reap(ctx, 3);

    static unsigned char r0[8192], r1a[100], r1b[20000];
    struct iovec rv[2] = { { r1a, sizeof r1a }, { r1b, sizeof r1b } };
    prep(&cbs[3], IOCB_CMD_PREAD, fd, r0, sizeof r0, 4096, 103);
    prep(&cbs[4], IOCB_CMD_PREADV, fd, rv, 2, 12000, 104);
    ptrs[0] = &cbs[3];
    ptrs[1] = &cbs[4];
    rep("submit_reads %ld", SYS3(SYS_io_submit, ctx, 2, ptrs));
    reap(ctx, 2);
    rep_hex("pread", r0, sizeof r0);
    rep_hex("preadv_0", r1a, sizeof r1a);
    rep_hex("preadv_1", r1b, 16384 - 12000 - sizeof r1a);

    /* The first request failing fails the call. */
    prep(&cbs[0], IOCB_CMD_PWRITE, 9999, w0, 16, 0, 105);
    ptrs[0] = &cbs[0];
    r = SYS3(SYS_io_submit, ctx, 1, ptrs);
    rep("submit_bad %ld %d", r, r < 0 ? errno : 0);
    rep("submit_none %ld", SYS3(SYS_io_submit, ctx, 0, ptrs));
    struct timespec zero = { 0, 0 };
    struct io_event ev[1];
    rep("poll_none %ld", SYS5(SYS_io_getevents, ctx, 0, 1, ev, &zero));
    rep("destroy %ld", SYS1(SYS_io_destroy, ctx));
    return 0;
}
