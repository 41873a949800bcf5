/* Stats that the path gate lets through unheld (AT_EMPTY_PATH): one on a
 * descriptor (glibc's fstat), one that names a path all the same. Then
 * the named file is truncated and rewritten, so its recorded initial
 * state must be the old one. Usage: emptypath DIR (DIR/old.dat must
 * exist). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
    struct stat st;
    if (dfd < 0 || syscall(SYS_newfstatat, dfd, "", &st, AT_EMPTY_PATH) != 0)
        return 3;
    if (syscall(SYS_newfstatat, dfd, "old.dat", &st, AT_EMPTY_PATH) != 0)
        return 4;
    int fd = openat(dfd, "old.dat", O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, "new", 3) != 3)
        return 5;
    return 0;
}
