/* A child that changes its root (chroot, then chdir "/") and works
 * there with absolute and relative paths: it makes, reads, renames and
 * lists, and its parent, whose root stays, checks the result. Runs in the
 * current directory; needs root. Stops at the first call that fails. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)

static void put(const char *path, const char *text) {
    int fd;
    CK(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    CK(write(fd, text, strlen(text)));
    CK(close(fd));
}

int main(void) {
    CK(mkdir("jail", 0755));
    CK(mkdir("jail/sub", 0755));
    put("jail/pre", "pre\n");
    pid_t pid;
    CK(pid = fork());
    if (pid == 0) {
        CK(chroot("jail"));
        CK(chdir("/"));
        put("/inside", "hi\n");
        char buf[16] = {0};
        int fd;
        CK(fd = open("/pre", O_RDONLY));
        CK(read(fd, buf, sizeof buf - 1));
        CK(close(fd));
        CK(rename("/inside", "/sub/moved"));
        CK(mkdir("d2", 0755));
        put("d2/f", buf);
        DIR *d = opendir("/");
        if (!d) CK(-1);
        int n = 0;
        while (readdir(d)) n++;
        closedir(d);
        _exit(n == 5 ? 0 : 98); /* . .. pre sub d2 */
    }
    int status;
    CK(waitpid(pid, &status, 0));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the child failed: %d\n", status);
        return 97;
    }
    struct stat st;
    CK(stat("jail/sub/moved", &st));
    CK(stat("jail/d2/f", &st));
    puts("ok");
    return 0;
}
