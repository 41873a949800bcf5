/* Job control: the child stops itself with SIGSTOP; the parent waits for
 * the stop with WUNTRACED, continues it with SIGCONT, and reaps it. */
#include "common.h"
#include <signal.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: stopcont DIR");
    rep_open(argv[1]);
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        SYS2(SYS_kill, SYS0(SYS_getpid), SIGSTOP);
        _exit(0);
    }
    rep("child %d", (int)child);
    int status = -1;
    long r = SYS4(SYS_wait4, child, &status, WUNTRACED, NULL);
    rep("stopped %ld %d", r, status);
    rep("cont %ld", SYS2(SYS_kill, child, SIGCONT));
    r = SYS4(SYS_wait4, child, &status, 0, NULL);
    rep("exited %ld %d", r, status);
    return 0;
}
