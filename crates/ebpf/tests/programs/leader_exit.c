/* The leader thread ends with a raw exit(3) while another thread lives on,
 * writes a file and ends the process with exit_group(0). The process
 * exits 0, and so must the leader's exit record under both back ends:
 * ptrace hears of the leader's end only with the process's, and the
 * kernel hook sees the leader's own exit first. Usage: leader_exit DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel clears it and wakes its waiters when the leader ends
 * (set_tid_address). */
static volatile int leader_tid;
static const char *dir;

static void *outlive(void *arg)
{
    (void)arg;
    int tid;
    while ((tid = leader_tid) != 0)
        syscall(SYS_futex, &leader_tid, FUTEX_WAIT, tid, NULL, NULL, 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/after", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "leader gone\n", 12) != 12)
        syscall(SYS_exit_group, 4);
    syscall(SYS_exit_group, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    leader_tid = gettid();
    syscall(SYS_set_tid_address, &leader_tid);
    pthread_t th;
    if (pthread_create(&th, NULL, outlive, NULL) != 0)
        return 3;
    syscall(SYS_exit, 3);
    return 5;
}
