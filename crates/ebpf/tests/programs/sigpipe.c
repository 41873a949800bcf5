/* A child writes to a pipe whose reading end is closed and dies of the
 * kernel's SIGPIPE, which comes with no siginfo of its own: the kernel
 * names the writer as its sender, and both back ends must record that.
 * The parent reaps it and exits 0. Usage: sigpipe DIR */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0 || close(fds[0]) != 0)
        return 2;
    pid_t child = fork();
    if (child < 0)
        return 3;
    if (child == 0) {
        /* On the stack: a string constant's page may not be resident,
         * and a write that fails reads none of it. */
        char byte = 'x';
        (void)write(fds[1], &byte, 1);
        _exit(4);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFSIGNALED(status) ||
        WTERMSIG(status) != SIGPIPE)
        return 5;
    return 0;
}
