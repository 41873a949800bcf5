/* Edge cases of capture and process ends:
 * - one 12 MiB write and one 12 MiB read (fill seed 41);
 * - a write whose buffer runs into a PROT_NONE page: the kernel writes
 *   the 100 readable bytes (fill seed 42) and returns 100;
 * - a child killed with SIGKILL while blocked in read;
 * - a child killed with SIGKILL inside a 1 MiB write into a pipe, after
 *   part of it went through: the write returns what it wrote;
 * - a child killed with SIGKILL after storing into a shared mapping of
 *   mapped.dat (fill seed 43), with no msync: the stores reach the file. */
#include "common.h"
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>

#define BIG (12 << 20)

int main(int argc, char **argv)
{
    check(argc == 2, "usage: edges DIR");
    const char *dir = argv[1];
    rep_open(dir);

    long fd = SYS3(SYS_open, in_dir(dir, "big.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0, "open big.dat");
    rep("fd %ld", fd);
    unsigned char *big = malloc(BIG), *back = malloc(BIG);
    check(big && back, "malloc");
    fill(big, BIG, 41);
    rep("big_write %ld", SYS3(SYS_write, fd, big, BIG));
    check(SYS3(SYS_lseek, fd, 0, SEEK_SET) == 0, "lseek");
    rep("big_read %ld", SYS3(SYS_read, fd, back, BIG));
    check(memcmp(big, back, BIG) == 0, "read back");

    long g = SYS3(SYS_open, in_dir(dir, "guard.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(g >= 0, "open guard.dat");
    rep("guard_fd %ld", g);
    unsigned char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(p != MAP_FAILED, "mmap");
    check(mprotect(p + 4096, 4096, PROT_NONE) == 0, "mprotect");
    fill(p + 4096 - 100, 100, 42);
    long r = SYS3(SYS_write, g, p + 4096 - 100, 200);
    rep("guard_write %ld %d", r, r < 0 ? errno : 0);

    int fds[2];
    check(pipe(fds) == 0, "pipe");
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        char buf[8];
        SYS3(SYS_read, fds[0], buf, sizeof buf);
        _exit(1);
    }
    int spins = 0;
    while (!blocked_in(child, SYS_read)) {
        check(++spins < 20000, "child never blocked");
        usleep(1000);
    }
    rep("child %d", (int)child);
    rep("child_rd %d", fds[0]);
    rep("kill %ld", SYS2(SYS_kill, child, SIGKILL));
    int status = -1;
    r = SYS4(SYS_wait4, child, &status, 0, NULL);
    rep("wait %ld %d", r, status);

    /* Killed inside a write that had moved part of its bytes. */
    enum { PART = 1 << 20 };
    check(pipe(fds) == 0, "pipe");
    child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        unsigned char *out = malloc(PART);
        check(out != NULL, "malloc");
        fill(out, PART, 44);
        SYS3(SYS_write, fds[1], out, PART);
        _exit(1);
    }
    close(fds[1]);
    long got = SYS3(SYS_read, fds[0], back, 4096);
    check(got > 0, "read from the writer");
    spins = 0;
    while (!blocked_in(child, SYS_write)) {
        check(++spins < 20000, "writer never blocked");
        usleep(1000);
    }
    rep("writer %d", (int)child);
    rep("writer_fd %d", fds[1]);
    SYS2(SYS_kill, child, SIGKILL);
    for (long n; (n = SYS3(SYS_read, fds[0], back + got, BIG - got)) > 0;)
        got += n;
    rep("written %ld", got);
    check(SYS4(SYS_wait4, child, &status, 0, NULL) == child, "wait for the writer");

    /* Killed with stores in a shared mapping that no call wrote back. */
    long m = SYS3(SYS_open, in_dir(dir, "mapped.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(m >= 0, "open mapped.dat");
    check(SYS2(SYS_ftruncate, m, 8192) == 0, "ftruncate mapped.dat");
    check(pipe(fds) == 0, "pipe");
    child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        unsigned char *shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
        check(shared != MAP_FAILED, "mmap mapped.dat");
        fill(shared, 8192, 43);
        char buf[8];
        SYS3(SYS_read, fds[0], buf, sizeof buf);
        _exit(1);
    }
    spins = 0;
    while (!blocked_in(child, SYS_read)) {
        check(++spins < 20000, "mapper never blocked");
        usleep(1000);
    }
    rep("mapper %d", (int)child);
    SYS2(SYS_kill, child, SIGKILL);
    check(SYS4(SYS_wait4, child, &status, 0, NULL) == child, "wait for the mapper");
    check(SYS4(SYS_pread64, m, back, 8192, 0) == 8192, "read mapped.dat");
    fill(big, 8192, 43);
    check(memcmp(big, back, 8192) == 0, "the stores reached mapped.dat");
    return 0;
}
