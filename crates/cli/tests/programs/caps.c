/* A root program that drops capabilities and is refused what root may
 * otherwise do. It makes `secret` (mode 0600, owned by nobody), then:
 * drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its effective set
 * (capset) and fails to open it; takes them back and opens it; takes
 * them out of its bounding set (prctl) and executes itself, which leaves
 * root without them, and fails again. Each result goes to `report`. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DAC ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH))

static void try_open(int report, const char *when)
{
    int fd = open("secret", O_RDONLY);
    dprintf(report, "%s: %s\n", when, fd < 0 ? strerror(errno) : "opened");
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    int report = open("report", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (report < 0)
        return 2;
    if (argc > 1) {
        try_open(report, "after exec");
        return 0;
    }
    int fd = open("secret", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "s\n", 2) != 2 || fchown(fd, 65534, 65534) != 0)
        return 3;
    close(fd);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 4;
    __u32 all = d[0].effective;
    d[0].effective &= ~DAC;
    if (syscall(SYS_capset, &h, d) != 0)
        return 5;
    try_open(report, "dropped");
    d[0].effective = all;
    if (syscall(SYS_capset, &h, d) != 0)
        return 6;
    try_open(report, "taken back");
    if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0 ||
        prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) != 0)
        return 7;
    execl("/proc/self/exe", argv[0], "again", (char *)NULL);
    return 8;
}
