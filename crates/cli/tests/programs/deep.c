/* A tree deeper than PATH_MAX: 250 directories of 20-character names
 * (5,250 bytes of path), made by walking down with mkdir and chdir, as
 * a program deep in a tree names its files relative to where it is. At
 * the bottom: a new file, an existing one (made beforehand by `prepare`)
 * appended to, a rename, a listing and a stat of the whole absolute
 * name (which fails, too long). Then back to the top by `..` and
 * by a descriptor. Runs in the current directory and stops at the first
 * call that fails. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
enum { DEPTH = 250 };
static const char NAME[] = "dddddddddddddddddddd";

int main(int argc, char **argv) {
    int prepare = argc > 1 && strcmp(argv[1], "prepare") == 0;
    int top;
    CK(top = open(".", O_PATH | O_DIRECTORY));
    for (int i = 0; i < DEPTH; i++) {
        if (mkdir(NAME, 0755) < 0 && errno != EEXIST)
            CK(-1);
        CK(chdir(NAME));
    }
    if (prepare) {
        int fd;
        CK(fd = open("old", O_WRONLY | O_CREAT | O_TRUNC, 0644));
        CK(write(fd, "before\n", 7));
        close(fd);
        return 0;
    }
    int fd;
    CK(fd = open("leaf", O_WRONLY | O_CREAT | O_EXCL, 0644));
    CK(write(fd, "deep\n", 5));
    close(fd);
    CK(fd = open("old", O_WRONLY | O_APPEND));
    CK(write(fd, "after\n", 6));
    close(fd);
    CK(rename("leaf", "leaf2"));
    struct stat st;
    CK(stat("leaf2", &st));
    DIR *d = opendir(".");
    if (!d) CK(-1);
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    char cwd[8192];
    if (getcwd(cwd, sizeof cwd) == NULL) CK(-1);
    /* The absolute name, as bash tries it before a relative `cd`: longer
     * than PATH_MAX, so the kernel refuses it whole. */
    if (stat(cwd, &st) == 0 || errno != ENAMETOOLONG) {
        fprintf(stderr, "stat of the %zu-byte name did not fail with ENAMETOOLONG\n", strlen(cwd));
        exit(99);
    }
    for (int i = 0; i < DEPTH / 2; i++)
        CK(chdir(".."));
    CK(mkdir("half", 0755));
    CK(fchdir(top));
    CK(stat(NAME, &st));
    printf("%d entries, %zu bytes deep\n", n, strlen(cwd));
    return 0;
}
