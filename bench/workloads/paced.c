/* Benchmark workload for timing fidelity: COUNT pwrite64 calls of SIZE
 * bytes to FILE, each PAUSE_US microseconds after the previous one was
 * due. The pause is a busy wait, so the recorded issue times are the
 * schedule itself, not a sleep's late wake-ups.
 * Usage: paced FILE COUNT SIZE PAUSE_US */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: paced FILE COUNT SIZE PAUSE_US\n");
        return 2;
    }
    long count = atol(argv[2]), size = atol(argv[3]);
    long long pause = atoll(argv[4]) * 1000;
    char *buf = malloc(size);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!buf || fd < 0) {
        perror("paced");
        return 1;
    }
    memset(buf, 'x', size);
    long long due = now_ns();
    for (long i = 0; i < count; i++) {
        while (now_ns() < due)
            ;
        due += pause;
        buf[0] = 'a' + i % 26;
        if (pwrite(fd, buf, size, i * size) != size) {
            perror("paced: pwrite");
            return 1;
        }
    }
    return close(fd) != 0;
}
