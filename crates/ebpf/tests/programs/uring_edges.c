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
#include "../../../ptrace/tests/programs/ring.h"

#include <sys/wait.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: uring_edges DIR");
    const char *dir = argv[1];
    rep_open(dir);
    long fd = SYS4(SYS_openat, AT_FDCWD, in_dir(dir, "edges.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create edges.dat");

    /* 1. A child uses its parent's ring. */
    struct ring r;
    ring_setup(&r, 4, 0);
    static unsigned char w[6000], back[6000], piped[64];
    fill(w, sizeof w, 7);
    int p[2];
    check(pipe(p) == 0, "pipe");
    ring_prep(&r, 0, IORING_OP_READ, p[0], piped, sizeof piped, -1, 299);
    ring_publish(&r, 1);
    rep("pipe_read %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 0, 0, NULL, 0));
    long child = SYS0(SYS_fork);
    check(child >= 0, "fork");
    if (child == 0) {
        /* Always one call, whether or not the read has completed yet. */
        rep("child_wait %ld", SYS6(SYS_io_uring_enter, r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        check(ring_drain(&r, "child") == 1, "pipe read completion");
        rep_hex("child_piped", piped, sizeof piped);
        ring_prep(&r, 0, IORING_OP_WRITE, fd, w, sizeof w, 0, 300);
        ring_publish(&r, 1);
        rep("child_write %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        ring_reap(&r, "child", 1, 0);
        ring_prep(&r, 0, IORING_OP_READ, fd, back, sizeof back, 0, 301);
        ring_publish(&r, 1);
        rep("child_read %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
        ring_reap(&r, "child", 1, 0);
        rep_hex("child_back", back, sizeof back);
        _exit(0);
    }
    static unsigned char msg[40];
    fill(msg, sizeof msg, 9);
    check(write(p[1], msg, sizeof msg) == sizeof msg, "write pipe");
    int status;
    check(SYS4(SYS_wait4, child, &status, 0, NULL) == child && status == 0, "wait child");
    rep_hex("parent_piped", piped, sizeof msg);
    ring_prep(&r, 0, IORING_OP_NOP, -1, NULL, 0, 0, 302);
    ring_publish(&r, 1);
    rep("parent_nop %ld", SYS6(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
    ring_reap(&r, "parent", 1, 0);

    /* 2. The ring named by its registered index. */
    struct io_uring_rsrc_update reg = { .offset = -1U, .data = (unsigned long)r.fd };
    check(SYS4(SYS_io_uring_register, r.fd, IORING_REGISTER_RING_FDS, &reg, 1) == 1, "register ring");
    rep("ring_index %u", reg.offset);
    ring_prep(&r, 0, IORING_OP_NOP, -1, NULL, 0, 0, 303);
    ring_publish(&r, 1);
    rep("registered_nop %ld", SYS6(SYS_io_uring_enter, reg.offset, 1, 1,
                                   IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING, NULL, 0));
    ring_reap(&r, "registered", 1, 0);

    /* 3. A ring a kernel thread polls. */
    struct ring s;
    ring_setup(&s, 4, IORING_SETUP_SQPOLL);
    ring_prep(&s, 0, IORING_OP_WRITE, fd, w, 512, 8192, 400);
    ring_publish(&s, 1);
    rep("sqpoll_write %ld",
        SYS6(SYS_io_uring_enter, s.fd, 1, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP, NULL, 0));
    ring_reap(&s, "sqpoll", 1, 0);
    return 0;
}
