/* Children under seccomp filters that refuse `unlink`: one with an errno
 * (EPERM), one with a signal it handles (SECCOMP_RET_TRAP), one killed
 * (SECCOMP_RET_KILL_PROCESS). Each tries to remove its own file, which
 * must survive; the parent writes what each saw to `out`. Runs in the
 * current directory; stops at the first call that fails unexpectedly. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t trapped;

static void on_sigsys(int sig) { (void)sig; trapped = 1; }

static void refuse_unlink(unsigned action) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlink, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
        perror("seccomp");
        _exit(99);
    }
}

int main(void) {
    const char *names[] = {"victim-errno", "victim-trap", "victim-kill"};
    const unsigned actions[] = {SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_TRAP, SECCOMP_RET_KILL_PROCESS};
    FILE *out = fopen("out", "w");
    if (!out)
        return 99;
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(names[i], "w");
        if (!f || fputs("keep\n", f) < 0 || fclose(f))
            return 99;
        fflush(out);
        pid_t pid = fork();
        if (pid < 0)
            return 99;
        if (pid == 0) {
            signal(SIGSYS, on_sigsys);
            refuse_unlink(actions[i]);
            long r = syscall(SYS_unlink, names[i]);
            int e = errno;
            /* Allowed calls go on as usual. */
            FILE *note = fopen(names[i], "a");
            if (!note)
                _exit(99);
            fprintf(note, "unlink %ld errno %d trapped %d\n", r == -1 ? -1 : 0, r == -1 ? e : 0, (int)trapped);
            fclose(note);
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid)
            return 99;
        fprintf(out, "%s: %s %d\n", names[i], WIFSIGNALED(status) ? "signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    return fclose(out) ? 99 : 0;
}
