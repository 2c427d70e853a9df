/* The floor: the least work any TREC reader must do.
 *
 * Reads each file named on the command line in 4 MiB blocks with read(2) and splits
 * every line into whitespace-separated fields, counting lines and fields (and summing
 * the field lengths, so the compiler cannot drop the loop). No numbers are parsed and
 * nothing is stored. Prints one line of JSON: {"lines": L, "fields": F, "bytes": B,
 * "chars": C, "seconds": T} where T is the time spent reading and splitting (after the
 * program started; process start-up is measured by the caller).
 *
 * Built by run_peers.py with `cc -O2 -o data/split_floor split_floor.c`.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (4u << 20)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    static unsigned char buf[BLOCK];
    unsigned long long lines = 0, fields = 0, bytes = 0, chars = 0;
    double t0 = now();
    for (int a = 1; a < argc; a++) {
        int fd = open(argv[a], O_RDONLY);
        if (fd < 0) { perror(argv[a]); return 2; }
        int in_field = 0;               /* carried across block boundaries */
        unsigned long long field_len = 0;
        for (;;) {
            ssize_t n = read(fd, buf, BLOCK);
            if (n < 0) { perror(argv[a]); return 2; }
            if (n == 0) break;
            bytes += (unsigned long long)n;
            for (ssize_t i = 0; i < n; i++) {
                unsigned char c = buf[i];
                int space = (c == ' ' || c == '\t' || c == '\n' || c == '\r');
                if (space) {
                    if (in_field) { fields++; chars += field_len; in_field = 0; field_len = 0; }
                    if (c == '\n') lines++;
                } else {
                    in_field = 1;
                    field_len++;
                }
            }
        }
        if (in_field) { fields++; chars += field_len; }
        close(fd);
    }
    double t1 = now();
    printf("{\"lines\": %llu, \"fields\": %llu, \"bytes\": %llu, \"chars\": %llu, "
           "\"seconds\": %.6f}\n", lines, fields, bytes, chars, t1 - t0);
    return 0;
}
