/* Writes with writev from a file mapping the program never touched: the
 * eBPF recorder cannot fault the page in, so those bytes are not in the
 * trace. Needs `in.bin` (3 bytes or more) in the current directory;
 * writes `out.txt`. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

int main(void) {
    int in = open("in.bin", O_RDONLY);
    int out = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0)
        return 99;
    char *page = mmap(0, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    if (page == MAP_FAILED)
        return 99;
    struct iovec v[2] = {{"hi", 2}, {page, 3}};
    return writev(out, v, 2) == 5 ? 0 : 98;
}
