/* A parent passes two descriptors to its child over a socket pair
 * (SCM_RIGHTS, received with MSG_CMSG_CLOEXEC): a file open read-write,
 * whose offset both then share, and one open for appending. The child
 * writes through both and says so; the parent then writes through its
 * own copy, after the child's bytes. Before, it sends the appending one
 * over another socket pair that nobody reads: a receive must take what
 * crossed its own pair. Then the child sends a file of its own back,
 * which the parent first peeks at (MSG_PEEK leaves it queued), while a
 * descriptor the parent sent waits for the child: each end receives
 * what the other sent. With an argument (`named`), the socket pairs are
 * connections to a listening socket named `s.sock` instead: the child's
 * first, accepted before the parent connects its unread one. Runs in the
 * current directory; stops at the first call that fails. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)

static void put(int fd, const char *s) { CK(write(fd, s, strlen(s))); }

/* Receives one descriptor and a byte over socket `sock` with `flags`. */
static int receive_fd(int sock, int flags) {
    char byte;
    struct iovec io = {&byte, 1};
    char control[CMSG_SPACE(sizeof(int))];
    struct msghdr m = {0};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    CK(recvmsg(sock, &m, flags));
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}

/* Sends descriptors `fds[0..n]` and one byte over socket `sock`. */
static void send_fds(int sock, const int *fds, int n) {
    char byte = 'x';
    struct iovec io = {&byte, 1};
    char control[CMSG_SPACE(2 * sizeof(int))];
    memset(control, 0, sizeof control);
    struct msghdr m = {0};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    CK(sendmsg(sock, &m, 0));
}

static const struct sockaddr_un name = {AF_UNIX, "s.sock"};

/* A socket connected to `s.sock`. */
static int connected(void) {
    int s;
    CK(s = socket(AF_UNIX, SOCK_STREAM, 0));
    CK(connect(s, (const struct sockaddr *)&name, sizeof name));
    return s;
}

/* A connected pair: a socket pair, or a connection to `listener`
 * (`sv[0]`) and the end it accepted (`sv[1]`). */
static void pair(int listener, int sv[2]) {
    if (listener < 0) {
        CK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
        return;
    }
    sv[0] = connected();
    CK(sv[1] = accept(listener, NULL, NULL));
}

int main(int argc, char **argv) {
    (void)argv;
    int listener = -1;
    int sv[2];
    if (argc > 1) {
        CK(listener = socket(AF_UNIX, SOCK_STREAM, 0));
        CK(bind(listener, (const struct sockaddr *)&name, sizeof name));
        CK(listen(listener, 4));
    } else {
        CK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    }
    pid_t pid;
    CK(pid = fork());
    if (pid == 0) {
        if (listener >= 0) {
            CK(close(listener));
            sv[1] = connected();
        } else {
            CK(close(sv[0]));
        }
        char byte;
        struct iovec io = {&byte, 1};
        char control[CMSG_SPACE(2 * sizeof(int))];
        struct msghdr m = {0};
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = sizeof control;
        CK(recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC));
        int fds[2];
        memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fds);
        put(fds[0], "child\n");
        put(fds[1], "child appends\n");
        int flags;
        CK(flags = fcntl(fds[0], F_GETFD));
        int note;
        CK(note = open("child.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644));
        put(note, flags & FD_CLOEXEC ? "close-on-exec\n" : "inherited\n");
        CK(close(note));
        int mine;
        CK(mine = open("from-child.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644));
        send_fds(sv[1], &mine, 1);
        int back = receive_fd(sv[1], 0);
        put(back, "child got the parent's\n");
        _exit(0);
    }
    if (listener >= 0)
        CK(sv[0] = accept(listener, NULL, NULL));
    else
        CK(close(sv[1]));
    int a, b;
    CK(a = open("a.txt", O_RDWR | O_CREAT | O_TRUNC, 0644));
    CK(b = open("b.txt", O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644));
    put(a, "parent\n");
    int unread[2];
    pair(listener, unread);
    send_fds(unread[0], &b, 1);
    int fds[2] = {a, b};
    send_fds(sv[0], fds, 2);
    CK(close(b));
    int theirs;
    CK(theirs = open("from-parent.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644));
    send_fds(sv[0], &theirs, 1);
    int peeked = receive_fd(sv[0], MSG_PEEK);
    put(peeked, "parent peeked\n");
    int got = receive_fd(sv[0], 0);
    put(got, "parent received\n");
    put(a, "parent again\n");
    int status;
    CK(waitpid(pid, &status, 0));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 98;
}
