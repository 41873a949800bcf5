/* An io_uring ring driven through raw system calls (no liburing), for the
 * test programs: set up and mapped as liburing maps it (one mapping for
 * both rings when the kernel allows), requests prepared and published,
 * completions taken from the ring and reported. Include after common.h. */
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <sys/mman.h>

struct ring {
    long fd;
    unsigned entries;
    unsigned *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

static void ring_setup(struct ring *r, unsigned entries, unsigned flags)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = flags;
    p.sq_thread_idle = 1000;
    r->fd = SYS2(SYS_io_uring_setup, entries, &p);
    check(r->fd >= 0, "io_uring_setup");
    r->entries = p.sq_entries;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    int single = p.features & IORING_FEAT_SINGLE_MMAP;
    if (single && cq_len > sq_len)
        sq_len = cq_len;
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    check(sq != MAP_FAILED, "mmap sq ring");
    char *cq = single ? sq
                      : mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                             IORING_OFF_CQ_RING);
    check(cq != MAP_FAILED, "mmap cq ring");
    r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    check(r->sqes != MAP_FAILED, "mmap sqes");
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

/* Prepares the request k places after the tail; returns it for flags. */
static struct io_uring_sqe *ring_prep(struct ring *r, unsigned k, int op, long fd, void *addr, unsigned len,
                                      long off, long data)
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
    return s;
}

/* Publishes `n` prepared requests. */
static void ring_publish(struct ring *r, unsigned n)
{
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, *r->sq_tail + n, memory_order_release);
}

/* Takes every completion in the ring, reporting each as "cqe_DATA RES"
 * (with `who`: "WHO_cqe_DATA RES"); returns how many. */
static unsigned ring_drain(struct ring *r, const char *who)
{
    unsigned head = *r->cq_head, n = 0;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire);
    for (; head != tail; head++, n++) {
        struct io_uring_cqe *c = &r->cqes[head & *r->cq_mask];
        rep("%s%scqe_%llu %d", who ? who : "", who ? "_" : "", (unsigned long long)c->user_data, c->res);
    }
    atomic_store_explicit((_Atomic unsigned *)r->cq_head, head, memory_order_release);
    return n;
}

/* Waits with io_uring_enter until `want` completions have been taken. */
static void ring_reap(struct ring *r, const char *who, unsigned want, unsigned flags)
{
    unsigned seen = ring_drain(r, who);
    while (seen < want) {
        long got = SYS6(SYS_io_uring_enter, r->fd, 0, want - seen, IORING_ENTER_GETEVENTS | flags, NULL, 0);
        check(got >= 0, "wait");
        seen += ring_drain(r, who);
    }
}
