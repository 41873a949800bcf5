/* Processes taking turns on a counter file under file locks: four
 * children, each opening the file itself, 50 turns each, under flock,
 * then under an open-file-description lock (F_OFD_SETLKW), then under a
 * POSIX record lock (lockf). Replay runs every process in one process,
 * so executing these locks would block one replay thread on a lock
 * another holds while it waits for its turn. Runs in the current
 * directory; prints the final counts. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/wait.h>

#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
enum { CHILDREN = 4, TURNS = 50 };

/* One turn: read the count, write it back one higher. */
static void bump(int fd) {
    char buf[32] = {0};
    CK(pread(fd, buf, sizeof buf - 1, 0));
    int len = snprintf(buf, sizeof buf, "%d\n", atoi(buf) + 1);
    CK(ftruncate(fd, 0));
    CK(pwrite(fd, buf, len, 0));
}

static void take_turns(const char *path, int how) {
    for (int i = 0; i < TURNS; i++) {
        int fd = open(path, O_RDWR | O_CREAT, 0644); CK(fd);
        struct flock fl = { .l_whence = SEEK_SET };
        switch (how) {
        case 0: CK(flock(fd, LOCK_EX)); break;
        case 1: fl.l_type = F_WRLCK; CK(fcntl(fd, F_OFD_SETLKW, &fl)); break;
        default: CK(lockf(fd, F_LOCK, 0)); break;
        }
        bump(fd);
        switch (how) {
        case 0: CK(flock(fd, LOCK_UN)); break;
        case 1: fl.l_type = F_UNLCK; CK(fcntl(fd, F_OFD_SETLK, &fl)); break;
        default: CK(lockf(fd, F_ULOCK, 0)); break;
        }
        CK(close(fd));
    }
}

int main(void) {
    const char *paths[] = { "flock.count", "ofd.count", "lockf.count" };
    for (int how = 0; how < 3; how++) {
        for (int c = 0; c < CHILDREN; c++) {
            pid_t p = fork(); CK(p);
            if (p == 0) { take_turns(paths[how], how); _exit(0); }
        }
        for (int c = 0; c < CHILDREN; c++) {
            int status;
            CK(wait(&status));
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) exit(98);
        }
        FILE *f = fopen(paths[how], "r");
        if (!f) exit(97);
        char line[32] = {0};
        if (!fgets(line, sizeof line, f)) exit(96);
        fclose(f);
        printf("%s %s", paths[how], line);
    }
    return 0;
}
