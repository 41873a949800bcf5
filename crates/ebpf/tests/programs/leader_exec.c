/* The leader thread of a child process ends with a raw exit(0) while
 * another thread lives on and calls execve, which makes that thread the
 * new leader under the same process id. The new image's leader ends
 * with exit(0) too, and its other thread ends the process with
 * exit_group(9). The parent checks that it sees 9. Both back ends must
 * record one end of the process, with status 9, after its last thread:
 * the first leader's end is superseded by the exec (before the fix, the
 * eBPF back end kept that leader's mark and emitted the second leader's
 * end at once with status 0, and the process's end never).
 * Usage: /path/to/leader_exec DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The kernel clears it and wakes its waiters when the leader ends
 * (set_tid_address). */
static volatile int leader_tid;
static const char *dir;
static const char *stage;
/* The program's path, as it was run (/proc/self/exe is gone with the
 * leader). */
static const char *self;

static void wait_leader_gone(void)
{
    int tid;
    while ((tid = leader_tid) != 0)
        syscall(SYS_futex, &leader_tid, FUTEX_WAIT, tid, NULL, NULL, 0);
}

static void *outlive(void *arg)
{
    (void)arg;
    wait_leader_gone();
    if (strcmp(stage, "first") == 0) {
        /* On the stack: a constant in a page the program never touched
         * is read at the call's exit by the eBPF back end, which would
         * order its captures differently. */
        char second[] = "second";
        execl(self, self, dir, second, (char *)NULL);
        syscall(SYS_exit_group, 4);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/after", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "leaders gone\n", 13) != 13)
        syscall(SYS_exit_group, 4);
    syscall(SYS_exit_group, 9);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    self = argv[0];
    if (argc == 2) {
        pid_t child = fork();
        if (child < 0)
            return 3;
        if (child == 0) {
            char first[] = "first";
            execl(self, self, dir, first, (char *)NULL);
            _exit(5);
        }
        int status;
        if (waitpid(child, &status, 0) != child)
            return 6;
        return WIFEXITED(status) && WEXITSTATUS(status) == 9 ? 0 : 7;
    }
    stage = argv[2];
    leader_tid = gettid();
    syscall(SYS_set_tid_address, &leader_tid);
    pthread_t th;
    if (pthread_create(&th, NULL, outlive, NULL) != 0)
        return 3;
    syscall(SYS_exit, 0);
    return 5;
}
