/* THREADS threads each issue CALLS pwrite64 calls of SIZE bytes as fast as
 * they can: thread t, call i writes byte j = (t*31 + i*7 + j) & 0xff at
 * offset (t*CALLS + i) * SIZE. Usage: storm FILE THREADS CALLS SIZE */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd;
static long calls, size;

static void *worker(void *arg)
{
    long t = (long)arg;
    unsigned char *buf = malloc(size);
    for (long i = 0; i < calls; i++) {
        for (long j = 0; j < size; j++)
            buf[j] = (unsigned char)(t * 31 + i * 7 + j);
        if (pwrite(fd, buf, size, (t * calls + i) * size) != size)
            exit(3);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    fd = open(argv[1], O_CREAT | O_RDWR | O_TRUNC, 0644);
    long threads = atol(argv[2]);
    calls = atol(argv[3]);
    size = atol(argv[4]);
    pthread_t th[64];
    for (long t = 0; t < threads && t < 64; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (long t = 0; t < threads && t < 64; t++)
        pthread_join(th[t], NULL);
    return close(fd);
}
