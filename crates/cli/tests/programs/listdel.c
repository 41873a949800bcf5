/* Removes entries of a directory while it reads it: makes 1,500 files in
 * "d", reads the first entry (glibc fills its 32 KiB buffer: about half
 * the directory), removes every even-numbered file, then reads on to the
 * end. Whether the rest of the listing returns a removed file is
 * unspecified, and file systems differ: ext4 returns entries in hash
 * order, tmpfs and btrfs in creation order. Prints how many it listed.
 * Runs in the current directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#define FILES 1500
#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
int main(void) {
    char name[64];
    CK(mkdir("d", 0755));
    for (int i = 0; i < FILES; i++) {
        snprintf(name, sizeof name, "d/an-entry-with-a-longer-name-%04d", i);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644); CK(fd);
        CK(close(fd));
    }
    DIR *dir = opendir("d");
    if (!dir) { perror("opendir"); return 99; }
    int listed = readdir(dir) != NULL;
    for (int i = 0; i < FILES; i += 2) {
        snprintf(name, sizeof name, "d/an-entry-with-a-longer-name-%04d", i);
        CK(unlink(name));
    }
    while (readdir(dir)) listed++;
    closedir(dir);
    printf("listed %d\n", listed);
    return 0;
}
