/* The program exits at once; its child outlives it, writes "late" to
 * DIR/late after 200 ms and exits 5. */
#include "common.h"
#include <time.h>

int main(int argc, char **argv)
{
    check(argc == 2, "usage: orphan DIR");
    rep_open(argv[1]);
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        SYS2(SYS_nanosleep, &ts, NULL);
        long fd = SYS3(SYS_open, in_dir(argv[1], "late"), O_CREAT | O_WRONLY, 0644);
        check(fd >= 0, "open late");
        check(SYS3(SYS_write, fd, "late", 4) == 4, "write late");
        _exit(5);
    }
    rep("child %d", (int)child);
    return 0;
}
