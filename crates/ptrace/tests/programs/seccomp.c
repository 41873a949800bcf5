/* A process under a seccomp filter that refuses pause(2) with EPERM
 * creates a thread: the thread's calls are recorded and it runs as it
 * would untraced (the recorder cannot move such a thread to another
 * tracer, since that parks it in pause). Reports the thread's tid and
 * what it computed. */
#include "common.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>

static long tid;

static void *worker(void *arg)
{
    (void)arg;
    tid = SYS0(SYS_gettid);
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
    pthread_t th;
    void *ret = NULL;
    check(pthread_create(&th, NULL, worker, NULL) == 0, "pthread_create");
    check(pthread_join(th, &ret) == 0, "pthread_join");
    check(ret == (void *)42, "the thread's result");
    rep("tid %ld", tid);
    return 0;
}
