/* For attaching: opens DIR/ticks, starts THREADS-1 more threads, says
 * "ready FD" on stdout once all run, then each thread k (main is 0)
 * writes "tick K NNNNN\n" there every 10 ms, COUNT times. Exits 0. */
#include "common.h"
#include <pthread.h>
#include <time.h>

static long fd, count;
static pthread_barrier_t started;

static void tick(long k)
{
    for (long i = 0; i < count; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "tick %ld %05ld\n", k, i);
        check(SYS3(SYS_write, fd, line, n) == n, "write tick");
        struct timespec ts = {0, 10 * 1000 * 1000};
        SYS2(SYS_nanosleep, &ts, NULL);
    }
}

static void *worker(void *arg)
{
    pthread_barrier_wait(&started);
    tick((long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    check(argc == 4, "usage: ticker DIR COUNT THREADS");
    count = atol(argv[2]);
    long threads = atol(argv[3]);
    fd = SYS3(SYS_open, in_dir(argv[1], "ticks"), O_CREAT | O_WRONLY | O_TRUNC | O_APPEND, 0644);
    check(fd >= 0, "open ticks");
    check(pthread_barrier_init(&started, NULL, threads) == 0, "barrier");
    pthread_t th[16];
    check(threads >= 1 && threads <= 16, "1 to 16 threads");
    for (long k = 1; k < threads; k++)
        check(pthread_create(&th[k], NULL, worker, (void *)k) == 0, "pthread_create");
    /* Every thread is up: announce, and tick as thread 0. */
    pthread_barrier_wait(&started);
    dprintf(1, "ready %ld\n", fd);
    close(1);
    tick(0);
    for (long k = 1; k < threads; k++)
        check(pthread_join(th[k], NULL) == 0, "pthread_join");
    return 0;
}
