/* A thread that unshares its working directory and umask (CLONE_FS),
 * moves into `sub` with umask 077 and makes a file there, then unshares
 * its descriptor table (CLONE_FILES) and closes its copy of the log.
 * The main thread, unchanged, makes `in_top` where it was and writes the
 * log through the descriptor it still has. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int log_fd;

static void *apart(void *arg)
{
    (void)arg;
    if (unshare(CLONE_FS) != 0 || chdir("sub") != 0)
        _exit(3);
    umask(077);
    close(open("in_sub", O_CREAT | O_WRONLY, 0666));
    if (unshare(CLONE_FILES) != 0 || close(log_fd) != 0)
        _exit(4);
    return NULL;
}

int main(void)
{
    if (mkdir("sub", 0755) != 0)
        return 2;
    log_fd = open("log", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    pthread_t th;
    if (log_fd < 0 || pthread_create(&th, NULL, apart, NULL) != 0 ||
        pthread_join(th, NULL) != 0)
        return 5;
    close(open("in_top", O_CREAT | O_WRONLY, 0666));
    dprintf(log_fd, "still open\n");
    return 0;
}
