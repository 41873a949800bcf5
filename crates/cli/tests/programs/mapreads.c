/* Reads of a file that a shared writable mapping stores into, before any
 * munmap, msync or exit has captured the stores: the process's own read,
 * a forked child's read and pread (the shape of Go's telemetry counter
 * files, which the go command maps and stores into and a child process
 * reads). Prints what each read saw. Runs in the current directory. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
static void show(const char *who, const char *buf, int n) {
    printf("%s:", who);
    for (int i = 0; i < n; i++) printf(" %d", buf[i]);
    printf("\n");
}
int main(void) {
    int fd = open("counters", O_RDWR | O_CREAT | O_TRUNC, 0644); CK(fd);
    CK(ftruncate(fd, 16384));
    char *m = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) { perror("mmap"); return 99; }
    m[100] = 7; m[101] = 8; m[8000] = 9;
    char buf[16];
    CK(pread(fd, buf, 4, 99)); show("own", buf, 4);
    fflush(stdout);
    pid_t c = fork(); CK(c);
    if (c == 0) {
        int r = open("counters", O_RDONLY); CK(r);
        CK(lseek(r, 98, SEEK_SET));
        CK(read(r, buf, 5)); show("child read", buf, 5);
        CK(pread(r, buf, 2, 7999)); show("child pread", buf, 2);
        fflush(stdout);
        _exit(0);
    }
    int st; CK(waitpid(c, &st, 0));
    m[100] = 10;
    CK(munmap(m, 16384));
    CK(pread(fd, buf, 3, 99)); show("after", buf, 3);
    return 0;
}
