/* Copies between descriptors inside the kernel, each in one call whose
 * count is not a whole number of blocks: copy_file_range with the files'
 * offsets and with offsets passed by pointer, sendfile, and splice into a
 * pipe and out of it. A file system may move less per call than asked
 * (btrfs's copy_file_range stops at the last whole block). Prints what
 * each call returned. Runs in the current directory. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <unistd.h>
#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
int main(void) {
    static char data[100000];
    for (int i = 0; i < (int)sizeof data; i++) data[i] = (char)(i * 7 + i / 4096);
    int src = open("src", O_RDWR | O_CREAT | O_TRUNC, 0644); CK(src);
    CK(write(src, data, sizeof data));
    CK(fsync(src));
    CK(lseek(src, 0, SEEK_SET));
    int dst = open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644); CK(dst);
    ssize_t a = copy_file_range(src, NULL, dst, NULL, 50000, 0); CK(a);
    loff_t in = 50000, out = 50000;
    ssize_t b = copy_file_range(src, &in, dst, &out, 30000, 0); CK(b);
    off_t from = 80000;
    CK(lseek(dst, 80000, SEEK_SET));
    ssize_t c = sendfile(dst, src, &from, 15000); CK(c);
    int p[2]; CK(pipe(p));
    loff_t at = 95000;
    ssize_t d = splice(src, &at, p[1], NULL, 5000, 0); CK(d);
    ssize_t e = splice(p[0], NULL, dst, NULL, 5000, 0); CK(e);
    printf("%zd %zd %zd %zd %zd\n", a, b, c, d, e);
    return 0;
}
