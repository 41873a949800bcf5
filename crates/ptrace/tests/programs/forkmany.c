/* 64 children forked back to back, each exec'ing /bin/true with its index
 * as argument, all running at once; then every one is reaped. */
#include "common.h"
#include <sys/wait.h>

#define CHILDREN 64

int main(int argc, char **argv)
{
    check(argc == 2, "usage: forkmany DIR");
    rep_open(argv[1]);
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork();
        check(pids[i] >= 0, "fork");
        if (pids[i] == 0) {
            char arg[16];
            snprintf(arg, sizeof arg, "child-%d", i);
            execl("/bin/true", "true", arg, (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < CHILDREN; i++) {
        int status;
        pid_t p = waitpid(-1, &status, 0);
        check(p > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
    }
    for (int i = 0; i < CHILDREN; i++)
        rep("child%d %d", i, (int)pids[i]);
    return 0;
}
