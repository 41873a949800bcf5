/* Unix sockets: socketpair, sendmsg/recvmsg with iovecs, sendto/recvfrom
 * with a source address. */
#include "common.h"
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: sockets DIR");
    rep_open(argv[1]);
    int sv[2] = {-1, -1};
    rep("socketpair %ld", SYS4(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, sv));
    rep("sv %d %d", sv[0], sv[1]);

    static unsigned char s0[5], s1[300], s2[7000], r0[100], r1[8000], d[1000], got[4096];
    fill(s0, sizeof s0, 31);
    fill(s1, sizeof s1, 32);
    fill(s2, sizeof s2, 33);
    fill(d, sizeof d, 34);

    struct iovec siov[3] = {{s0, sizeof s0}, {s1, sizeof s1}, {s2, sizeof s2}};
    struct msghdr smsg = {0};
    smsg.msg_iov = siov;
    smsg.msg_iovlen = 3;
    rep("sendmsg %ld", SYS3(SYS_sendmsg, sv[0], &smsg, 0));

    struct iovec riov[2] = {{r0, sizeof r0}, {r1, sizeof r1}};
    struct msghdr rmsg = {0};
    rmsg.msg_iov = riov;
    rmsg.msg_iovlen = 2;
    long n = SYS3(SYS_recvmsg, sv[1], &rmsg, 0);
    rep("recvmsg %ld", n);
    rep_hex("recvmsg_data0", r0, sizeof r0);
    rep_hex("recvmsg_data1", r1, n > 100 ? n - 100 : 0);

    rep("sendto %ld", SYS6(SYS_sendto, sv[1], d, sizeof d, 0, NULL, 0));
    struct sockaddr_un from;
    memset(&from, 0, sizeof from);
    socklen_t fromlen = sizeof from;
    rep("fromlen_before %u", fromlen);
    n = SYS6(SYS_recvfrom, sv[0], got, sizeof got, 0, &from, &fromlen);
    rep("recvfrom %ld", n);
    rep_hex("recvfrom_data", got, n > 0 ? n : 0);
    rep("fromlen %u", fromlen);
    rep_hex("from", &from, fromlen);
    return 0;
}
