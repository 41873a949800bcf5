/* Benchmark workload (b): THREADS threads, each doing COUNT pwrite64 calls
 * of 4 KiB to one shared file, at offsets that wrap at 4 MiB per thread.
 * Usage: mtpwrite FILE [THREADS] [COUNT] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;
static long count = 50000;

static void *worker(void *arg)
{
    long id = (long)arg;
    char buf[4096];
    for (long i = 0; i < count; i++) {
        memset(buf, 'a' + (int)((id + i) % 26), sizeof buf);
        memcpy(buf, &i, sizeof i);
        off_t off = (off_t)id * (4 << 20) + (off_t)(i % 1024) * 4096;
        if (pwrite(fd, buf, sizeof buf, off) != sizeof buf) {
            perror("pwrite");
            exit(1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [THREADS] [COUNT]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    if (argc > 3)
        count = atol(argv[3]);
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    pthread_t t[64];
    for (long i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
    return close(fd) != 0;
}
