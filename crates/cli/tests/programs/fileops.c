/* File operations whose replay needs more than a path: O_TMPFILE files
 * linked by descriptor (AT_EMPTY_PATH) and through /proc/self/fd with
 * AT_SYMLINK_FOLLOW, renameat2 exchange, fallocate's range modes, O_APPEND
 * with pwrite, memfd to file with sendfile, directory-descriptor calls and
 * fchdir, xattrs, a shared mapping written after its msync and unmapped,
 * a shared mapping stored to on a few scattered pages and unmapped,
 * truncate, a shared mapping still mapped at exit, a forked child's stores
 * to a shared mapping its parent unmapped. Runs in the current directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/sendfile.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <linux/falloc.h>
#include <sys/syscall.h>
/* Every call must succeed, so the trace holds what each case needs. */
#define CK(x) do { if ((x) < 0) { perror(#x); exit(99); } } while (0)
int main(void) {
    char buf[65536]; memset(buf, 'a', sizeof buf);
    /* O_TMPFILE linked in two ways */
    int t = open(".", O_TMPFILE | O_WRONLY, 0640); CK(t);
    CK(write(t, "tmpfile one\n", 12));
    /* Needs CAP_DAC_READ_SEARCH: without it the kernel says ENOENT. */
    if (linkat(t, "", AT_FDCWD, "tmp1", AT_EMPTY_PATH) < 0 && errno != ENOENT) { perror("linkat"); exit(99); }
    int t2 = open(".", O_TMPFILE | O_RDWR, 0600); CK(t2);
    CK(write(t2, "tmpfile two\n", 12));
    char p[64]; snprintf(p, sizeof p, "/proc/self/fd/%d", t2);
    CK(linkat(AT_FDCWD, p, AT_FDCWD, "tmp2", AT_SYMLINK_FOLLOW));
    close(t); close(t2);
    /* renameat2 */
    int a = open("ra", O_CREAT | O_WRONLY, 0644); CK(write(a, "A", 1)); close(a);
    int b = open("rb", O_CREAT | O_WRONLY, 0644); CK(write(b, "BB", 2)); close(b);
    CK(syscall(SYS_renameat2, AT_FDCWD, "ra", AT_FDCWD, "rb", RENAME_EXCHANGE));
    if (syscall(SYS_renameat2, AT_FDCWD, "ra", AT_FDCWD, "rb", RENAME_NOREPLACE) == 0) puts("noreplace?");
    /* fallocate modes and holes */
    int f = open("sparse", O_CREAT | O_RDWR, 0644); CK(f);
    for (int i = 0; i < 16; i++) CK(pwrite(f, buf, sizeof buf, (off_t)i * 65536));
    CK(fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 65536, 65536));
    CK(fallocate(f, FALLOC_FL_ZERO_RANGE, 4 * 65536, 8192));
    CK(fallocate(f, FALLOC_FL_COLLAPSE_RANGE, 8 * 65536, 65536));
    CK(fallocate(f, FALLOC_FL_INSERT_RANGE, 2 * 65536, 65536));
    off_t d = lseek(f, 0, SEEK_DATA), h = lseek(f, 0, SEEK_HOLE);
    printf("data %ld hole %ld\n", (long)d, (long)h);
    CK(sync_file_range(f, 0, 0, SYNC_FILE_RANGE_WRITE)); CK(fdatasync(f)); CK(syncfs(f));
    CK(flock(f, LOCK_EX)); CK(flock(f, LOCK_UN));
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
    CK(fcntl(f, F_SETLK, &fl));
    close(f);
    /* O_APPEND with pwrite appends */
    int ap = open("app", O_CREAT | O_WRONLY | O_APPEND, 0644); CK(ap);
    CK(write(ap, "first\n", 6)); CK(pwrite(ap, "second\n", 7, 0)); CK(ftruncate(ap, 9)); CK(write(ap, "third\n", 6));
    close(ap);
    /* memfd -> file via sendfile */
    int m = memfd_create("m", 0); CK(m); CK(write(m, buf, 10000)); lseek(m, 0, SEEK_SET);
    int out = open("fromfd", O_CREAT | O_WRONLY | O_TRUNC, 0644); CK(out);
    CK(sendfile(out, m, NULL, 10000)); close(out); close(m);
    /* dirfd-relative ops, fchdir */
    CK(mkdir("dd", 0755)); int dfd = open("dd", O_RDONLY | O_DIRECTORY); CK(dfd);
    CK(mkdirat(dfd, "sub", 0700)); int sf = openat(dfd, "sub/x", O_CREAT | O_WRONLY, 0600); CK(write(sf, "x", 1)); close(sf);
    CK(fchdir(dfd)); CK(symlinkat("sub/x", AT_FDCWD, "lx")); CK(unlinkat(dfd, "sub/x", 0)); CK(unlinkat(AT_FDCWD, "sub", AT_REMOVEDIR));
    CK(chdir("..")); close(dfd);
    /* xattrs and modes */
    CK(setxattr("app", "user.k", "v1", 2, 0)); CK(setxattr("app", "user.k", "v22", 3, XATTR_REPLACE));
    CK(fchmodat(AT_FDCWD, "app", 04755, 0)); CK(chmod("app", 0600));
    CK(utimensat(AT_FDCWD, "app", NULL, 0));
    char x[16]; ssize_t n = getxattr("app", "user.k", x, sizeof x); printf("xattr %zd\n", n);
    /* mmap shared write, then munmap */
    int mm = open("mapped", O_CREAT | O_RDWR, 0644); CK(ftruncate(mm, 8192));
    char *map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, mm, 0);
    memcpy(map + 100, "hello map", 9); CK(msync(map, 8192, MS_SYNC)); memcpy(map + 5000, "later", 5); munmap(map, 8192); close(mm);
    /* a shared mapping stored to on pages 0, 5, 6 and 12 of 16 only: the
     * pages between were never touched (not resident) */
    int sp = open("spotted", O_CREAT | O_RDWR, 0644); CK(ftruncate(sp, 16 * 4096));
    char *spots = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sp, 0);
    for (int pg = 0; pg < 16; pg++)
        if (pg == 0 || pg == 5 || pg == 6 || pg == 12) memset(spots + pg * 4096 + 7, 'a' + pg, 3000);
    munmap(spots, 16 * 4096); close(sp);
    /* truncate grows and shrinks */
    CK(truncate("fromfd", 20000)); CK(truncate("fromfd", 5));
    /* a shared mapping stored to and still mapped at exit (Go's telemetry
     * counters, fio's mmap engine) */
    int ae = open("mapped-at-exit", O_CREAT | O_RDWR, 0644); CK(ftruncate(ae, 3 * 4096));
    char *atexit_map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ae, 0);
    memset(atexit_map + 4096 + 10, 'x', 5000);
    /* a forked child stores to a shared mapping its parent has already
     * unmapped, and exits */
    int fk = open("forked-map", O_CREAT | O_RDWR, 0644); CK(ftruncate(fk, 4096));
    char *fmap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fk, 0);
    int go[2]; CK(pipe(go));
    pid_t kid = fork(); CK(kid);
    if (kid == 0) {
        char b; if (read(go[0], &b, 1) != 1) _exit(1);
        memcpy(fmap + 200, "from the child", 14);
        _exit(0);
    }
    munmap(fmap, 4096); close(fk); CK(write(go[1], "g", 1));
    int st; CK(waitpid(kid, &st, 0));
    return 0;
}
