/* Signals: a SIGUSR1 sent to itself with kill, and a blocking pipe read
 * interrupted by SIGALRM whose handler has no SA_RESTART. */
#include "common.h"
#include <signal.h>
#include <sys/time.h>

static volatile sig_atomic_t usr1, alrm;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}

static void on_alrm(int sig)
{
    (void)sig;
    alrm++;
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: signals DIR");
    rep_open(argv[1]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    check(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction SIGUSR1");
    sa.sa_handler = on_alrm;
    check(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction SIGALRM");

    long pid = SYS0(SYS_getpid);
    rep("pid %ld", pid);
    rep("kill %ld", SYS2(SYS_kill, pid, SIGUSR1));
    rep("usr1 %d", (int)usr1);

    int fds[2];
    check(pipe(fds) == 0, "pipe");
    rep("pipe_rd %d", fds[0]);
    /* Nothing is ever written: only the timer ends the read. */
    struct itimerval it = {{0, 0}, {0, 300000}};
    check(SYS3(SYS_setitimer, ITIMER_REAL, &it, NULL) == 0, "setitimer");
    char buf[16];
    long n = SYS3(SYS_read, fds[0], buf, sizeof buf);
    rep("read %ld %d", n, errno);
    rep("alrm %d", (int)alrm);
    return 0;
}
