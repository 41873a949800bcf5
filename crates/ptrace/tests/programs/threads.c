/* Four threads, each doing 1000 pwrite64 calls of 4 KiB with its own
 * patterns: thread t, call i writes fill(4096, t * 100000 + i + 1000) at
 * offset (t * 1000 + i) * 4096. Each reports the CPU it ran on last (the
 * recorder places threads) and the CPUs it may run on as the kernel
 * showed it (the first word of its mask). */
#include "common.h"
#include <pthread.h>
#include <sched.h>

#define THREADS 4
#define CALLS 1000

static long fd;
static long tids[THREADS];
static unsigned long cpus[THREADS];
static int ran_on[THREADS];

static void *worker(void *arg)
{
    long t = (long)arg;
    tids[t] = SYS0(SYS_gettid);
    check(SYS3(SYS_sched_getaffinity, 0, sizeof cpus[t], &cpus[t]) > 0, "sched_getaffinity");
    static unsigned char bufs[THREADS][4096];
    unsigned char *buf = bufs[t];
    for (long i = 0; i < CALLS; i++) {
        fill(buf, 4096, (unsigned)(t * 100000 + i + 1000));
        check(SYS4(SYS_pwrite64, fd, buf, 4096, (t * CALLS + i) * 4096) == 4096, "pwrite64");
    }
    ran_on[t] = sched_getcpu();
    return NULL;
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: threads DIR");
    const char *dir = argv[1];
    rep_open(dir);
    fd = SYS3(SYS_open, in_dir(dir, "t.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "create t.dat");
    rep("fd %ld", fd);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        check(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (long t = 0; t < THREADS; t++)
        check(pthread_join(th[t], NULL) == 0, "pthread_join");
    for (long t = 0; t < THREADS; t++)
        rep("tid%ld %ld", t, tids[t]);
    for (long t = 0; t < THREADS; t++)
        rep("cpus%ld %lu", t, cpus[t]);
    for (long t = 0; t < THREADS; t++)
        rep("cpu%ld %d", t, ran_on[t]);
    return 0;
}
