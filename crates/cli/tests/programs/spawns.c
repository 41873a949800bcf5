/* Processes that come and go fast, as Go's runtime and os/exec make them:
 * - a child made by clone(CLONE_PIDFD) that exits at once, waited for
 *   through its pidfd, which is then closed (replay must know the pidfd);
 * - a vfork child that exits at once (its stops may reach the recorder
 *   before its parent's vfork event);
 * - a child whose threads are blocked when its main thread calls
 *   exit_group (they end after the leader; each must have its end in the
 *   trace).
 * Each round writes a line to out.txt. Runs in the current directory. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x1000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static void die(const char *what) { perror(what); exit(99); }

static void *blocked(void *arg) { (void)arg; for (;;) pause(); return NULL; }

int main(void)
{
    int out = open("out.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (out < 0) die("open");
    for (int round = 0; round < 20; round++) {
        int pidfd = -1;
        long pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
        if (pid < 0) die("clone");
        if (pid == 0) syscall(SYS_exit_group, 0);
        siginfo_t si;
        if (waitid(P_PIDFD, pidfd, &si, WEXITED) < 0) die("waitid");
        if (close(pidfd) < 0) die("close pidfd");

        pid_t v = vfork();
        if (v < 0) die("vfork");
        if (v == 0) _exit(0);
        if (waitpid(v, NULL, 0) != v) die("waitpid vfork");

        pid_t g = fork();
        if (g < 0) die("fork");
        if (g == 0) {
            pthread_t t;
            for (int i = 0; i < 3; i++)
                if (pthread_create(&t, NULL, blocked, NULL) != 0) _exit(98);
            usleep(1000);
            syscall(SYS_exit_group, 0);
        }
        int status;
        if (waitpid(g, &status, 0) != g || !WIFEXITED(status)) die("waitpid group");
        dprintf(out, "round %d\n", round);
    }
    return 0;
}
