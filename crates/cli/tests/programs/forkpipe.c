/* Go's os/exec pattern, in two threads at once: each makes a
 * close-on-exec pipe, starts a child that execs /bin/true (with vfork, or
 * fork when given `fork`), closes the pipe's write end and reads the pipe
 * to its end of file, which comes once the child's exec has closed its
 * copy. One thread's fork often overlaps the other's pipe2 or close, so
 * which descriptors the child got depends on when its table was copied.
 * Writes `done.txt` in the current directory. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int use_fork;

static void *starter(void *unused) {
    (void)unused;
    for (int i = 0; i < 100; i++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC))
            exit(99);
        pid_t pid = use_fork ? fork() : vfork();
        if (pid == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        if (pid < 0)
            exit(98);
        close(p[1]);
        char b;
        if (read(p[0], &b, 1) != 0)
            exit(97);
        close(p[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid || status != 0)
            exit(96);
    }
    return NULL;
}

int main(int argc, char **argv) {
    use_fork = argc > 1 && strcmp(argv[1], "fork") == 0;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, starter, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    FILE *f = fopen("done.txt", "w");
    fprintf(f, "200 children\n");
    return fclose(f) ? 95 : 0;
}
