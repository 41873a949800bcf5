/* A process under a seccomp filter that refuses pause(2) with EPERM
 * creates three threads that live at once: their calls are recorded and
 * they run as they would untraced (the recorder cannot move such a thread
 * to another tracer, since that parks it in pause). Reports their tids. */
#include "common.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>

#define THREADS 3

static long tids[THREADS];
static pthread_barrier_t all_up;

static void *worker(void *arg)
{
    tids[(long)arg] = SYS0(SYS_gettid);
    pthread_barrier_wait(&all_up);
    return (void *)42;
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: seccomp DIR");
    rep_open(argv[1]);
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pause, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs");
    check(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0, "seccomp");
    check(pthread_barrier_init(&all_up, NULL, THREADS) == 0, "barrier");
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        check(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (long t = 0; t < THREADS; t++) {
        void *ret = NULL;
        check(pthread_join(th[t], &ret) == 0, "pthread_join");
        check(ret == (void *)42, "the thread's result");
    }
    rep("tids %ld %ld %ld", tids[0], tids[1], tids[2]);
    return 0;
}
