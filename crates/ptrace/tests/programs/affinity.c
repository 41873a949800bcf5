/* What a program is told about the CPUs it may run on: the main thread,
 * three threads (which the recorder may hand to another tracer), a child
 * process; then the main thread sets its own mask (the lowest CPU it may
 * use) and asks again, as does a child it makes after. Each reports the
 * number of CPUs it was shown ("main 2", "thread0 2", ..., "own 1",
 * "own_child 1"); the main thread also reports its first mask in hex.
 * The test compares the report with that of an untraced run. */
#include "common.h"
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#define THREADS 3

static int shown(cpu_set_t *set)
{
    CPU_ZERO(set);
    long n = SYS3(SYS_sched_getaffinity, 0, sizeof *set, set);
    check(n > 0, "sched_getaffinity");
    return CPU_COUNT(set);
}

static int counts[THREADS];

static void *worker(void *arg)
{
    cpu_set_t set;
    counts[(long)arg] = shown(&set);
    return NULL;
}

/* A child that exits with the count it was shown. */
static int child_count(void)
{
    pid_t pid = fork();
    check(pid >= 0, "fork");
    if (pid == 0) {
        cpu_set_t set;
        _exit(shown(&set));
    }
    int status;
    check(waitpid(pid, &status, 0) == pid, "waitpid");
    check(WIFEXITED(status), "child exited");
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: affinity DIR");
    rep_open(argv[1]);
    cpu_set_t set;
    int n = shown(&set);
    rep("main %d", n);
    rep_hex("main_mask", &set, sizeof set);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        check(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (long t = 0; t < THREADS; t++)
        check(pthread_join(th[t], NULL) == 0, "pthread_join");
    for (long t = 0; t < THREADS; t++)
        rep("thread%ld %d", t, counts[t]);
    rep("child %d", child_count());
    int lowest = 0;
    while (!CPU_ISSET(lowest, &set))
        lowest++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(lowest, &one);
    check(SYS3(SYS_sched_setaffinity, 0, sizeof one, &one) == 0, "sched_setaffinity");
    rep("own %d", shown(&set));
    rep("own_child %d", child_count());
    return 0;
}
