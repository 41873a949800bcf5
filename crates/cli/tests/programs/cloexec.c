/* Descriptors of every kind, made twice: without close-on-exec, then
 * with (pipe2, socket, socketpair, epoll, eventfd, signalfd, timerfd,
 * inotify, memfd, open, mq_open, dup3, F_DUPFD; the descriptors of mq_open
 * and pidfd_open are close-on-exec whatever the flags). Then the program executes itself, which asks
 * F_GETFD of every number and writes what is open to `report`: replay
 * must keep exactly what the exec kept. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc > 1) {
        /* Asked before the report is opened, which would take the lowest
         * number the exec freed. */
        int flags[40];
        for (int fd = 3; fd < 40; fd++)
            flags[fd] = fcntl(fd, F_GETFD);
        int out = open("report", O_WRONLY | O_CREAT | O_APPEND, 0644);
        for (int fd = 3; fd < 40; fd++)
            if (flags[fd] >= 0)
                dprintf(out, "%d open, flags %d\n", fd, flags[fd]);
        return 0;
    }
    char queue[64];
    snprintf(queue, sizeof queue, "/reanimator-cloexec-%d", (int)getpid());
    for (int with = 0; with < 2; with++) {
        int p[2], sv[2];
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        if (pipe2(p, with ? O_CLOEXEC : 0) != 0 ||
            socket(AF_UNIX, SOCK_STREAM | (with ? SOCK_CLOEXEC : 0), 0) < 0 ||
            socketpair(AF_UNIX, SOCK_STREAM | (with ? SOCK_CLOEXEC : 0), 0, sv) != 0 ||
            epoll_create1(with ? EPOLL_CLOEXEC : 0) < 0 ||
            eventfd(0, with ? EFD_CLOEXEC : 0) < 0 ||
            signalfd(-1, &usr1, with ? SFD_CLOEXEC : 0) < 0 ||
            timerfd_create(CLOCK_MONOTONIC, with ? TFD_CLOEXEC : 0) < 0 ||
            inotify_init1(with ? IN_CLOEXEC : 0) < 0 ||
            memfd_create("m", with ? MFD_CLOEXEC : 0) < 0 ||
            open(".", O_RDONLY | O_DIRECTORY | (with ? O_CLOEXEC : 0)) < 0 ||
            mq_open(queue, O_RDWR | O_CREAT | (with ? O_CLOEXEC : 0), 0600, NULL) < 0 ||
            dup3(0, 35 + with, with ? O_CLOEXEC : 0) < 0 ||
            fcntl(0, with ? F_DUPFD_CLOEXEC : F_DUPFD, 37 + with) < 0 ||
            syscall(SYS_pidfd_open, getpid(), 0) < 0)
            return 2;
    }
    mq_unlink(queue);
    execl("/proc/self/exe", argv[0], "check", (char *)NULL);
    return 3;
}
