/* A reaping thread blocks in io_uring_enter(GETEVENTS) for one
 * completion while the main thread first makes N pwrite + fdatasync
 * calls (a second or more, replayed as long), then submits the write the
 * reaper collects. Replay starts the reaping call at once and must wait
 * for the submission as long as replay moves on; it gave up after 1 s
 * and left the completion unverified. Writes "reaped" with what the
 * reaper saw. Usage: uring_late_submit N */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ring;
static unsigned *cq_head, *cq_tail, *cq_mask;
static struct io_uring_cqe *cqes;

static void *reap(void *unused) {
    (void)unused;
    while (syscall(SYS_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        ;
    unsigned head = *cq_head;
    unsigned tail = atomic_load((_Atomic unsigned *)cq_tail);
    FILE *out = fopen("reaped", "w");
    for (; head != tail; head++) {
        struct io_uring_cqe *c = &cqes[head & *cq_mask];
        fprintf(out, "user_data=%llu res=%d\n", (unsigned long long)c->user_data, c->res);
    }
    fclose(out);
    atomic_store((_Atomic unsigned *)cq_head, head);
    return NULL;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    ring = syscall(SYS_io_uring_setup, 8, &p);
    if (ring < 0) {
        perror("io_uring_setup");
        return 1;
    }
    char *sq = mmap(0, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    char *cq = mmap(0, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                                     IORING_OFF_SQES);
    unsigned *sq_tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned *sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *sq_array = (unsigned *)(sq + p.sq_off.array);
    cq_head = (unsigned *)(cq + p.cq_off.head);
    cq_tail = (unsigned *)(cq + p.cq_off.tail);
    cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    pthread_t reaper;
    pthread_create(&reaper, NULL, reap, NULL);
    usleep(100000);
    int busy = open("busy.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (long i = 0; i < n; i++) {
        pwrite(busy, "abcd", 4, (i % 1024) * 4);
        fdatasync(busy);
    }
    close(busy);
    int out = open("out.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    static char buf[4096];
    memset(buf, 'z', sizeof buf);
    unsigned t = *sq_tail;
    struct io_uring_sqe *s = &sqes[t & *sq_mask];
    memset(s, 0, sizeof *s);
    s->opcode = IORING_OP_WRITE;
    s->fd = out;
    s->addr = (unsigned long)buf;
    s->len = sizeof buf;
    s->user_data = 42;
    sq_array[t & *sq_mask] = t & *sq_mask;
    atomic_store((_Atomic unsigned *)sq_tail, t + 1);
    if (syscall(SYS_io_uring_enter, ring, 1, 0, 0, NULL, 0) != 1) {
        perror("io_uring_enter");
        return 1;
    }
    pthread_join(reaper, NULL);
    return 0;
}
