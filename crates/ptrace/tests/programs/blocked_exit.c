/* The main thread calls exit_group while three other threads are blocked:
 * two in read on an empty pipe, one in nanosleep. Main waits until
 * /proc shows each of them sleeping in its call. */
#include "common.h"
#include <pthread.h>
#include <time.h>

static int fds[2];
static volatile long tids[3];

static void *reader(void *arg)
{
    long i = (long)arg;
    char buf[100];
    tids[i] = SYS0(SYS_gettid);
    SYS3(SYS_read, fds[0], buf, sizeof buf);
    fail("read returned");
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec ts = {100, 0};
    tids[2] = SYS0(SYS_gettid);
    SYS2(SYS_nanosleep, &ts, NULL);
    fail("nanosleep returned");
    return NULL;
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: blocked_exit DIR");
    rep_open(argv[1]);
    check(pipe(fds) == 0, "pipe");
    pthread_t th;
    check(pthread_create(&th, NULL, reader, (void *)0) == 0, "pthread_create");
    check(pthread_create(&th, NULL, reader, (void *)1) == 0, "pthread_create");
    check(pthread_create(&th, NULL, sleeper, NULL) == 0, "pthread_create");
    long nrs[3] = {SYS_read, SYS_read, SYS_nanosleep};
    for (int i = 0; i < 3; i++) {
        int spins = 0;
        while (tids[i] == 0 || !blocked_in(tids[i], nrs[i])) {
            check(++spins < 20000, "thread never blocked");
            usleep(1000);
        }
    }
    rep("pipe_rd %d", fds[0]);
    rep("tids %ld %ld %ld", tids[0], tids[1], tids[2]);
    SYS1(SYS_exit_group, 0);
    return 1;
}
