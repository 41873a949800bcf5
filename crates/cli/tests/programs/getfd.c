/* A parent takes its child's descriptor with pidfd_open and pidfd_getfd
 * and writes through it, while the child waits on a pipe; then it lets
 * the child go and reaps it. Writes `fromchild`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int there[2], back[2];
    if (pipe(there) != 0 || pipe(back) != 0)
        return 2;
    pid_t child = fork();
    if (child == 0) {
        int fd = open("fromchild", O_CREAT | O_RDWR | O_TRUNC, 0644);
        char c;
        if (write(there[1], &fd, sizeof fd) != sizeof fd || read(back[0], &c, 1) != 1)
            _exit(3);
        _exit(0);
    }
    int fd;
    if (read(there[0], &fd, sizeof fd) != sizeof fd)
        return 4;
    int pidfd = syscall(SYS_pidfd_open, child, 0);
    int mine = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (mine < 0 || write(mine, "via getfd\n", 10) != 10 || write(back[1], "x", 1) != 1)
        return 5;
    int status;
    return waitpid(child, &status, 0) == child && status == 0 ? 0 : 6;
}
