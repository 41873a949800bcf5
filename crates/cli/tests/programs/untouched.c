/* Writes with writev and sendmsg from file mappings the program never
 * touched: the eBPF recorder cannot fault such a page in at the call's
 * entry, so it reads those bytes again when the call returns (the call
 * faulted the page in). Then execs /bin/true with an argument from such a
 * page, which the old address space no longer holds when the exec
 * returns. Needs `in.bin` (3 bytes or more, no NUL) in the current
 * directory; writes `out.txt` and `sent.txt`. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int main(void) {
    int in = open("in.bin", O_RDONLY);
    int out = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int sent = open("sent.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int sv[2];
    if (in < 0 || out < 0 || sent < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return 99;
    /* Two mappings: each page is untouched in its own mapping. */
    char *page = mmap(0, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    char *other = mmap(0, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    char *arg = mmap(0, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    if (page == MAP_FAILED || other == MAP_FAILED || arg == MAP_FAILED)
        return 99;
    struct iovec v[2] = {{"hi", 2}, {page, 3}};
    if (writev(out, v, 2) != 5)
        return 98;
    struct iovec m[1] = {{other, 3}};
    struct msghdr msg = {.msg_iov = m, .msg_iovlen = 1};
    char buf[8];
    if (sendmsg(sv[0], &msg, 0) != 3 || read(sv[1], buf, sizeof buf) != 3)
        return 97;
    if (write(sent, buf, 3) != 3)
        return 96;
    /* A write that fails takes none of its bytes, which the eBPF
     * recorder could not read either (the kernel never faulted the page
     * in): no loss to report. */
    char *unused = mmap(0, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    if (unused == MAP_FAILED || write(77, unused, 3) != -1)
        return 94;
    /* The page past the file's end reads as zeros: the argument ends. */
    char *args[] = {"true", arg, NULL};
    execv("/bin/true", args);
    return 95;
}
