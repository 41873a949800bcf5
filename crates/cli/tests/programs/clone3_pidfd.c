/* clone3 with CLONE_PIDFD, as glibc's pidfd_spawn makes a child: the
 * kernel stores the pidfd inside struct clone_args, where no recorder
 * reads it. The parent waits through it, dups and closes it, and writes
 * what it saw to `out`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int pidfd = -1;
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_PIDFD;
    args.pidfd = (unsigned long)&pidfd;
    args.exit_signal = SIGCHLD;
    pid_t child = syscall(SYS_clone3, &args, sizeof args);
    if (child < 0)
        return 2;
    if (child == 0)
        _exit(7);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PIDFD, pidfd, &si, WEXITED) != 0)
        return 3;
    int copy = dup(pidfd);
    int out = open("out", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    dprintf(out, "status %d, dup %s\n", si.si_status, copy > pidfd ? "ok" : "failed");
    if (close(copy) != 0 || close(pidfd) != 0)
        return 4;
    return 0;
}
