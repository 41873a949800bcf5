/* Shared helpers of the recorder's test programs.
 *
 * Every program takes a working directory as argv[1] and writes what it
 * did (return values, descriptors, addresses, the bytes the kernel gave
 * it) to DIR/report as "key value" lines, so the test can compare the
 * trace with the program's own view. The report goes through plain
 * write(2) on a descriptor announced as the first line ("report_fd N"),
 * so tests can tell report writes from the calls under test.
 *
 * Calls under test are made with syscall(2) and every argument cast to
 * long, so the recorded argument words are exactly the values below and
 * the syscall number does not depend on what glibc chooses. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int rep_fd = -1;

/* Stops the program with status 99 and a message on stderr. */
static inline void fail(const char *what)
{
    dprintf(2, "test program failed: %s: %s\n", what, strerror(errno));
    _exit(99);
}

static inline void check(int ok, const char *what)
{
    if (!ok)
        fail(what);
}

static inline void rep(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    check(n > 0 && n < (int)sizeof line - 1, "report line too long");
    line[n++] = '\n';
    check(write(rep_fd, line, n) == n, "write report");
}

/* "key HEX" with the bytes of p in hex ("-" for none). */
static inline void rep_hex(const char *key, const void *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t klen = strlen(key);
    char *line = malloc(klen + 2 * n + 3);
    check(line != NULL, "malloc");
    memcpy(line, key, klen);
    size_t at = klen;
    line[at++] = ' ';
    if (n == 0)
        line[at++] = '-';
    for (size_t i = 0; i < n; i++) {
        line[at++] = digits[((const unsigned char *)p)[i] >> 4];
        line[at++] = digits[((const unsigned char *)p)[i] & 15];
    }
    line[at++] = '\n';
    check(write(rep_fd, line, at) == (ssize_t)at, "write report");
    free(line);
}

/* Opens DIR/report and announces its descriptor. */
static inline void rep_open(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/report", dir);
    rep_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(rep_fd >= 0, "open report");
    rep("report_fd %d", rep_fd);
}

/* A deterministic pattern: xorshift32 from a seed, one byte per step.
 * The tests compute the same bytes. */
static inline void fill(unsigned char *buf, size_t n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;
    if (x == 0)
        x = 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)(x >> 24);
    }
}

/* "DIR/name" in a static buffer (one of four, so a call may use several). */
static inline const char *in_dir(const char *dir, const char *name)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 4096, "%s/%s", dir, name);
    return b;
}

/* Whether task id (a process or a thread) sleeps (state S) inside system
 * call nr, from /proc: how programs wait for another task to block. */
static inline int blocked_in(long id, long nr)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    check(fd >= 0, "open stat");
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    check(n > 0, "read stat");
    text[n] = 0;
    char *state = strrchr(text, ')');
    if (state == NULL || state[1] != ' ' || state[2] != 'S')
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/syscall", id);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    check(fd >= 0, "open syscall");
    n = read(fd, text, sizeof text - 1);
    close(fd);
    check(n > 0, "read syscall");
    text[n] = 0;
    return strtol(text, NULL, 10) == nr;
}

/* syscall(2) with every argument widened to long. */
#define SYS0(nr) syscall((long)(nr))
#define SYS1(nr, a) syscall((long)(nr), (long)(a))
#define SYS2(nr, a, b) syscall((long)(nr), (long)(a), (long)(b))
#define SYS3(nr, a, b, c) syscall((long)(nr), (long)(a), (long)(b), (long)(c))
#define SYS4(nr, a, b, c, d) syscall((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d))
#define SYS5(nr, a, b, c, d, e) \
    syscall((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))
#define SYS6(nr, a, b, c, d, e, f) \
    syscall((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
