/* Calls the path gate lets through unheld and the recorder records late
 * (queries, and opens that only read), each followed by what could make
 * the late record wrong, were it not for the calls the gate still holds:
 *   1. in DIR (chdir, held): access, readlink and a read-only open of
 *      relative paths, then r.dat truncated and rewritten (an open for
 *      writing: held, so the recorder first records the late paths);
 *   2. a stat of "same" in DIR, then fchdir into DIR/sub, which also
 *      holds a "same": the late stat must resolve against DIR (fchdir is
 *      held);
 *   3. a child that stats c.dat and exits at once (exit_group is held:
 *      its working directory is still there when the late stat is read).
 * Usage: latepaths DIR (DIR/q.dat, DIR/r.dat, DIR/c.dat, DIR/same,
 * DIR/sub/same and the symlink DIR/link must exist). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2 || chdir(argv[1]) != 0)
        return 2;
    char buf[64];
    if (access("q.dat", R_OK) != 0 || readlink("link", buf, sizeof buf) <= 0)
        return 3;
    int fd = open("r.dat", O_RDONLY);
    if (fd < 0 || read(fd, buf, sizeof buf) <= 0 || close(fd) != 0)
        return 4;
    fd = open("r.dat", O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, "new", 3) != 3 || close(fd) != 0)
        return 5;

    struct stat st;
    int sub = open("sub", O_RDONLY | O_DIRECTORY);
    if (sub < 0 || stat("same", &st) != 0 || fchdir(sub) != 0 || unlink("same") != 0)
        return 6;

    pid_t child = fork();
    if (child == 0) {
        if (chdir(argv[1]) != 0)
            _exit(1);
        syscall(SYS_newfstatat, AT_FDCWD, "c.dat", &st, 0);
        syscall(SYS_exit_group, 0);
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
        return 7;
    return 0;
}
