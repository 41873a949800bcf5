/* Descriptors from calls that were once recorded as raw words, so replay
 * never knew them: Landlock's ruleset (after asking the ABI version, which
 * the same call returns as a number) and open_tree's, with and without
 * OPEN_TREE_CLOEXEC. Each is asked F_GETFD, duplicated and closed; then
 * the program executes itself, which writes what is open to `report`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int out = open("report", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (argc > 1) {
        for (int fd = 3; fd < 20; fd++) {
            int flags = fd == out ? -1 : fcntl(fd, F_GETFD);
            if (flags >= 0)
                dprintf(out, "%d open, flags %d\n", fd, flags);
        }
        return 0;
    }
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE};
    int ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    int tree = syscall(SYS_open_tree, AT_FDCWD, ".", 0);
    int tree_cloexec = syscall(SYS_open_tree, AT_FDCWD, ".", OPEN_TREE_CLOEXEC);
    if (abi < 1 || ruleset < 0 || tree < 0 || tree_cloexec < 0)
        return 2;
    int copy = dup(ruleset);
    dprintf(out, "abi %ld, flags %d %d %d, copy %d\n", abi > 0 ? 1L : 0L, fcntl(ruleset, F_GETFD),
            fcntl(tree, F_GETFD), fcntl(tree_cloexec, F_GETFD), copy >= 0);
    if (close(copy) != 0 || close(ruleset) != 0)
        return 3;
    execl("/proc/self/exe", argv[0], "check", (char *)NULL);
    return 4;
}
