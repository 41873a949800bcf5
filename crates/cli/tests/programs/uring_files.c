/* Writes two files through io_uring with raw system calls (liburing may
 * be missing): 4096 bytes of 'u' to `out.dat` on its descriptor, then
 * 4096 bytes of 'f' to `fixed.dat` as registered file 0
 * (IORING_REGISTER_FILES, IOSQE_FIXED_FILE). Each request is submitted
 * by one io_uring_enter and waited for by another, so the trace holds
 * calls whose requests name the file only inside the ring. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct io_uring_params p;
static unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;

/* Submits one write of `len` bytes at offset 0, then waits for it;
 * returns its result. */
static int write_through(int ring, int fd, unsigned char flags, const char *buf, unsigned len,
                         unsigned long long user_data)
{
    unsigned t = *sq_tail;
    struct io_uring_sqe *s = &sqes[t & *sq_mask];
    memset(s, 0, sizeof *s);
    s->opcode = IORING_OP_WRITE;
    s->flags = flags;
    s->fd = fd;
    s->addr = (unsigned long)buf;
    s->len = len;
    s->user_data = user_data;
    sq_array[t & *sq_mask] = t & *sq_mask;
    atomic_store((_Atomic unsigned *)sq_tail, t + 1);
    if (syscall(SYS_io_uring_enter, ring, 1, 0, 0, NULL, 0) != 1)
        return -1000;
    /* Waits even when the completion is already there, so a call sees it
     * before the next request is submitted: a call that submits to one
     * file and sees another's completion is about no path. */
    do
        if (syscall(SYS_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
            return -1001;
    while (atomic_load((_Atomic unsigned *)cq_tail) == *cq_head);
    unsigned h = *cq_head;
    int res = cqes[h & *cq_mask].user_data == user_data ? cqes[h & *cq_mask].res : -1002;
    atomic_store((_Atomic unsigned *)cq_head, h + 1);
    return res;
}

int main(void)
{
    int ring = syscall(SYS_io_uring_setup, 8, &p);
    if (ring < 0)
        return 2;
    char *sq = mmap(0, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    char *cq = mmap(0, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
        return 3;
    sq_tail = (unsigned *)(sq + p.sq_off.tail);
    sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    sq_array = (unsigned *)(sq + p.sq_off.array);
    cq_head = (unsigned *)(cq + p.cq_off.head);
    cq_tail = (unsigned *)(cq + p.cq_off.tail);
    cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);

    static char buf[4096];
    int out = open("out.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    memset(buf, 'u', sizeof buf);
    if (out < 0 || write_through(ring, out, 0, buf, sizeof buf, 42) != sizeof buf)
        return 4;
    int fixed = open("fixed.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fixed < 0 || syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fixed, 1) != 0)
        return 5;
    memset(buf, 'f', sizeof buf);
    if (write_through(ring, 0, IOSQE_FIXED_FILE, buf, sizeof buf, 43) != sizeof buf)
        return 6;
    return 0;
}
