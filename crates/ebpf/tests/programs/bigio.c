/* THREADS threads each pwrite one SIZE-byte buffer and pread it back, so
 * one call's data is larger than the recorder's ring: thread t writes
 * byte j = (t*13 + j/4096 + j) & 0xff at offset t*SIZE. Exits 4 if a
 * read-back differs. Usage: bigio FILE THREADS SIZE */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;
static long size;

static void *worker(void *arg)
{
    long t = (long)arg;
    unsigned char *out = malloc(size), *in = malloc(size);
    for (long j = 0; j < size; j++)
        out[j] = (unsigned char)(t * 13 + j / 4096 + j);
    if (pwrite(fd, out, size, t * size) != size)
        exit(3);
    memset(in, 0, size);
    if (pread(fd, in, size, t * size) != size || memcmp(in, out, size))
        exit(4);
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    fd = open(argv[1], O_CREAT | O_RDWR | O_TRUNC, 0644);
    long threads = atol(argv[2]);
    size = atol(argv[3]);
    pthread_t th[16];
    for (long t = 0; t < threads && t < 16; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (long t = 0; t < threads && t < 16; t++)
        pthread_join(th[t], NULL);
    return close(fd);
}
