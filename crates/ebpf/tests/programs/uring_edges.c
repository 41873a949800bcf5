/* io_uring rings the recorders follow in less common ways (the common
 * ones are in crates/ptrace/tests/programs/uring.c), through raw system
 * calls:
 *   1. a forked child uses the ring its parent set up and mapped: it
 *      reaps a READ of a pipe its parent submitted before the fork (and
 *      completes after it, into the parent's memory: the child's copy of
 *      the buffer keeps its old bytes, and that is what both recorders
 *      read), then submits and reaps a WRITE and a READ; then the parent
 *      reaps a NOP and sees the child's completions too (as consumed: the
 *      child took them);
 *   2. a ring whose descriptor is registered (IORING_REGISTER_RING_FDS)
 *      and named by its index (IORING_ENTER_REGISTERED_RING): neither
 *      recorder can tell which ring it is;
 *   3. a ring polled by a kernel thread (IORING_SETUP_SQPOLL): its
 *      requests are taken with no call, so neither recorder sees them,
 *      but its completions are read as any ring's.
 * Usage: uring_edges DIR */
#include "../../../ptrace/tests/programs/common.h"

#include <linux/io_uring.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

struct ring {
    long fd;
    unsigned *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

static void setup(struct ring *r, unsigned flags)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = flags;
    p.sq_thread_idle = 1000;
    r->fd = SYS2(SYS_io_uring_setup, 4, &p);
    check(r->fd >= 0, "io_uring_setup");
    check(p.features & IORING_FEAT_SINGLE_MMAP, "single mmap");
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *q = mmap(NULL, sq_len > cq_len ? sq_len : cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   r->fd, IORING_OFF_SQ_RING);
    check(q != MAP_FAILED, "mmap rings");
    r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    check(r->sqes != MAP_FAILED, "mmap sqes");
    r->sq_tail = (unsigned *)(q + p.sq_off.tail);
    r->sq_mask = (unsigned *)(q + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(q + p.sq_off.array);
    r->cq_head = (unsigned *)(q + p.cq_off.head);
    r->cq_tail = (unsigned *)(q + p.cq_off.tail);
    r->cq_mask = (unsigned *)(q + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(q + p.cq_off.cqes);
}

/* Prepares the request k places after the tail. */
static void prep(struct ring *r, unsigned k, int op, long fd, void *addr, unsigned len, long off, long data)
{
    unsigned i = (*r->sq_tail + k) & *r->sq_mask;
    r->sq_array[i] = i;
    struct io_uring_sqe *s = &r->sqes[i];
    memset(s, 0, sizeof *s);
    s->opcode = op;
    s->fd = fd;
    s->addr = (unsigned long)addr;
    s->len = len;
    s->off = off;
    s->user_data = data;
}

static void publish(struct ring *r, unsigned n)
{
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, *r->sq_tail + n, memory_order_release);
}

/* Takes every completion in the ring, reporting each as WHO_cqe_DATA RES. */
static unsigned drain(struct ring *r, const char *who)
{
    unsigned head = *r->cq_head, n = 0;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire);
    for (; head != tail; head++, n++) {
        struct io_uring_cqe *c = &r->cqes[head & *r->cq_mask];
        rep("%s_cqe_%llu %d", who, (unsigned long long)c->user_data, c->res);
    }
    atomic_store_explicit((_Atomic unsigned *)r->cq_head, head, memory_order_release);
    return n;
}

/* Waits with io_uring_enter until `want` completions have been taken. */
static void reap(struct ring *r, const char *who, unsigned want, unsigned flags)
{
    unsigned seen = drain(r, who);
    while (seen < want) {
        long got = SYS6(SYS_io_uring_enter, r->fd, 0, want - seen, IORING_ENTER_GETEVENTS | flags, NULL, 0);
        check(got >= 0, "wait");
        seen += drain(r, who);
    }
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: uring_edges DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS4(SYS_openat, AT_FDCWD, in_dir(dir, "edges.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create edges.dat");

    /* 1. A child uses its parent's ring. */
    struct ring r;
    setup(&r, 0);
    static unsigned char w[6000], back[6000], piped[64];
    fill(w, sizeof w, 7);
    int p[2];
    check(pipe(p) == 0, "pipe");
    prep(&r, 0, IORING_OP_READ, p[0], piped, sizeof piped, -1, 299);
    publish(&r, 1);
    rep("pipe_read %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 0, 0, NULL, 0));
    long child = SYS0(SYS_fork);
    check(child >= 0, "fork");
    if (child == 0) {
        /* Always one call, whether or not the read has completed yet. */
        rep("child_wait %ld", SYS6(SYS_io_uring_enter, r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        check(drain(&r, "child") == 1, "pipe read completion");
        rep_hex("child_piped", piped, sizeof piped);
        prep(&r, 0, IORING_OP_WRITE, fd, w, sizeof w, 0, 300);
        publish(&r, 1);
        rep("child_write %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        reap(&r, "child", 1, 0);
        prep(&r, 0, IORING_OP_READ, fd, back, sizeof back, 0, 301);
        publish(&r, 1);
        rep("child_read %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        reap(&r, "child", 1, 0);
        rep_hex("child_back", back, sizeof back);
        _exit(0);
    }
    static unsigned char msg[40];
    fill(msg, sizeof msg, 9);
    check(write(p[1], msg, sizeof msg) == sizeof msg, "write pipe");
    int status;
    check(SYS4(SYS_wait4, child, &status, 0, NULL) == child && status == 0, "wait child");
    rep_hex("parent_piped", piped, sizeof msg);
    prep(&r, 0, IORING_OP_NOP, -1, NULL, 0, 0, 302);
    publish(&r, 1);
    rep("parent_nop %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
    reap(&r, "parent", 1, 0);

    /* 2. The ring named by its registered index. */
    struct io_uring_rsrc_update reg = { .offset = -1U, .data = (unsigned long)r.fd };
    check(SYS4(SYS_io_uring_register, r.fd, IORING_REGISTER_RING_FDS, &reg, 1) == 1, "register ring");
    rep("ring_index %u", reg.offset);
    prep(&r, 0, IORING_OP_NOP, -1, NULL, 0, 0, 303);
    publish(&r, 1);
    rep("registered_nop %ld", SYS6(SYS_io_uring_enter, reg.offset, 1, 1,
                                   IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING, NULL, 0));
    reap(&r, "registered", 1, 0);

    /* 3. A ring a kernel thread polls. */
    struct ring s;
    setup(&s, IORING_SETUP_SQPOLL);
    prep(&s, 0, IORING_OP_WRITE, fd, w, 512, 8192, 400);
    publish(&s, 1);
    rep("sqpoll_write %ld",
        SYS6(SYS_io_uring_enter, s.fd, 1, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP, NULL, 0));
    reap(&s, "sqpoll", 1, 0);
    return 0;
}
