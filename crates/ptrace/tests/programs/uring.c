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

#include <linux/io_uring.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/uio.h>

static struct {
    long fd;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
} r;

static struct io_uring_sqe *next_sqe(unsigned k)
{
    unsigned tail = *r.sq_tail + k;
    unsigned i = tail & *r.sq_mask;
    r.sq_array[i] = i;
    struct io_uring_sqe *s = &r.sqes[i];
    memset(s, 0, sizeof *s);
    return s;
}

static void prep(struct io_uring_sqe *s, int op, long fd, void *addr, unsigned len, long off, long data)
{
    s->opcode = op;
    s->fd = fd;
    s->addr = (unsigned long)addr;
    s->len = len;
    s->off = off;
    s->user_data = data;
}

/* Publishes `n` prepared SQEs. */
static void publish(unsigned n)
{
    atomic_store_explicit((_Atomic unsigned *)r.sq_tail, *r.sq_tail + n, memory_order_release);
}

/* Takes every CQE in the ring, reporting each; returns how many. */
static unsigned drain(void)
{
    unsigned head = *r.cq_head, n = 0;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r.cq_tail, memory_order_acquire);
    for (; head != tail; head++, n++) {
        struct io_uring_cqe *c = &r.cqes[head & *r.cq_mask];
        rep("cqe_%llu %d", (unsigned long long)c->user_data, c->res);
    }
    atomic_store_explicit((_Atomic unsigned *)r.cq_head, head, memory_order_release);
    return n;
}

/* Submits `n` SQEs and waits for `want` completions, reporting them. */
static void submit_and_reap(const char *what, unsigned n, unsigned want)
{
    publish(n);
    long got = SYS6(SYS_io_uring_enter, r.fd, n, want, IORING_ENTER_GETEVENTS, NULL, 0);
    rep("%s %ld", what, got);
    unsigned seen = 0;
    while (seen < want) {
        seen += drain();
        if (seen < want)
            check(SYS6(SYS_io_uring_enter, r.fd, 0, want - seen, IORING_ENTER_GETEVENTS, NULL, 0) >= 0, "wait");
    }
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: uring DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS4(SYS_openat, AT_FDCWD, in_dir(dir, "uring.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create uring.dat");
    rep("fd %ld", fd);

    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    r.fd = SYS2(SYS_io_uring_setup, 8, &p);
    check(r.fd >= 0, "io_uring_setup");
    rep("ring %ld", r.fd);
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    int single = p.features & IORING_FEAT_SINGLE_MMAP;
    if (single && cq_len > sq_len)
        sq_len = cq_len;
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQ_RING);
    check(sq != MAP_FAILED, "mmap sq ring");
    char *cq = single ? sq : mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_CQ_RING);
    check(cq != MAP_FAILED, "mmap cq ring");
    r.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                  r.fd, IORING_OFF_SQES);
    check(r.sqes != MAP_FAILED, "mmap sqes");
    r.sq_head = (unsigned *)(sq + p.sq_off.head);
    r.sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r.sq_array = (unsigned *)(sq + p.sq_off.array);
    r.cq_head = (unsigned *)(cq + p.cq_off.head);
    r.cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);

    /* 1. Writes. */
    static unsigned char w0[8192], w1a[3000], w1b[5192];
    fill(w0, sizeof w0, 1);
    fill(w1a, sizeof w1a, 2);
    fill(w1b, sizeof w1b, 3);
    struct iovec wv[2] = { { w1a, sizeof w1a }, { w1b, sizeof w1b } };
    prep(next_sqe(0), IORING_OP_WRITE, fd, w0, sizeof w0, 0, 100);
    prep(next_sqe(1), IORING_OP_WRITEV, fd, wv, 2, 8192, 101);
    submit_and_reap("submit_writes", 2, 2);

    /* 2. FSYNC first, drained before the reads (IOSQE_IO_DRAIN). */
    static unsigned char r0[8192], r1a[100], r1b[20000];
    struct iovec rv[2] = { { r1a, sizeof r1a }, { r1b, sizeof r1b } };
    prep(next_sqe(0), IORING_OP_FSYNC, fd, NULL, 0, 0, 102);
    struct io_uring_sqe *read = next_sqe(1);
    prep(read, IORING_OP_READ, fd, r0, sizeof r0, 4096, 103);
    read->flags = IOSQE_IO_DRAIN;
    prep(next_sqe(2), IORING_OP_READV, fd, rv, 2, 12000, 104);
    submit_and_reap("submit_reads", 3, 3);
    rep_hex("read", r0, sizeof r0);
    rep_hex("readv_0", r1a, sizeof r1a);
    rep_hex("readv_1", r1b, 16384 - 12000 - sizeof r1a);

    /* 3. A completion taken with no call. */
    static unsigned char w2[4096];
    fill(w2, sizeof w2, 4);
    prep(next_sqe(0), IORING_OP_WRITE, fd, w2, sizeof w2, 16384, 105);
    publish(1);
    rep("submit_quiet %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 0, 0, NULL, 0));
    while (drain() == 0)
        ;
    prep(next_sqe(0), IORING_OP_NOP, -1, NULL, 0, 0, 106);
    submit_and_reap("submit_nop", 1, 1);

    /* 4. A bad descriptor fails in its completion, not in the call. */
    prep(next_sqe(0), IORING_OP_READ, 999, r0, 16, 0, 107);
    submit_and_reap("submit_bad", 1, 1);

    check(munmap(r.sqes, p.sq_entries * sizeof(struct io_uring_sqe)) == 0, "munmap");
    check(close(r.fd) == 0, "close ring");
    return 0;
}
