/* A non-leader thread calls execve while the main thread is blocked in
 * read on an empty pipe. The exec kills the main thread; the execing
 * thread takes over the process id. Before exec, the report holds the
 * pipe descriptor and both thread ids. */
#include "common.h"
#include <pthread.h>

static int fds[2];
static long main_tid;

static void *execer(void *arg)
{
    (void)arg;
    int spins = 0;
    while (!blocked_in(main_tid, SYS_read)) {
        check(++spins < 20000, "main thread never blocked");
        usleep(1000);
    }
    rep("pipe_rd %d", fds[0]);
    rep("tids %ld %ld", main_tid, SYS0(SYS_gettid));
    char *args[] = {"true", "from-thread", NULL};
    SYS3(SYS_execve, "/bin/true", args, environ);
    fail("execve");
    return NULL;
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: thread_exec DIR");
    rep_open(argv[1]);
    check(pipe(fds) == 0, "pipe");
    main_tid = SYS0(SYS_gettid);
    pthread_t th;
    check(pthread_create(&th, NULL, execer, NULL) == 0, "pthread_create");
    char buf[10];
    SYS3(SYS_read, fds[0], buf, sizeof buf);
    fail("read returned");
    return 1;
}
