/* Processes: fork + exec of /bin/true, fork + _exit(3), vfork + exec,
 * each reaped with wait4. */
#include "common.h"
#include <sys/wait.h>

static void reap(const char *key, long pid)
{
    int status = -1;
    long r = SYS4(SYS_wait4, pid, &status, 0, NULL);
    rep("%s %ld %ld %d", key, pid, r, status);
}

int main(int argc, char **argv)
{
    check(argc == 2, "usage: forks DIR");
    rep_open(argv[1]);

    pid_t c1 = fork();
    check(c1 >= 0, "fork");
    if (c1 == 0) {
        execl("/bin/true", "true", "fork-arg", (char *)NULL);
        _exit(127);
    }
    reap("child1", c1);

    pid_t c2 = fork();
    check(c2 >= 0, "fork");
    if (c2 == 0)
        _exit(3);
    reap("child2", c2);

    pid_t c3 = vfork();
    check(c3 >= 0, "vfork");
    if (c3 == 0) {
        execl("/bin/true", "true", "vforked", (char *)NULL);
        _exit(127);
    }
    reap("child3", c3);
    return 0;
}
