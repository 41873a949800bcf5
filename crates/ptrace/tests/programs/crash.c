/* Writes a marker to DIR/marker, then dies: "segv" dereferences NULL,
 * "abort" calls abort(). No core file is wanted. */
#include "common.h"
#include <sys/resource.h>

int main(int argc, char **argv)
{
    check(argc == 3, "usage: crash DIR segv|abort");
    struct rlimit none = {0, 0};
    check(setrlimit(RLIMIT_CORE, &none) == 0, "setrlimit");
    long fd = SYS3(SYS_open, in_dir(argv[1], "marker"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    check(fd >= 0, "open marker");
    char marker[64];
    int n = snprintf(marker, sizeof marker, "about to %s\n", argv[2]);
    check(SYS3(SYS_write, fd, marker, n) == n, "write marker");
    if (strcmp(argv[2], "segv") == 0)
        *(volatile int *)0 = 1;
    else
        abort();
    return 0;
}
