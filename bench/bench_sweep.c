/* A sweep's expansion as cod-server runs it (api/submit.c's sweep_expand),
 * in process: a body whose one grid key is N dots, which the expansion
 * once rescanned at every depth up to N (an 80,000-dot key: 4 to 6 s of a
 * write thread, a 4 MiB one hours), now refused as it is read. Prints the
 * median of REPEATS of the expansion alone and of the body's parse, for
 * keys of 80,000, 800,000 and 4,190,000 dots: a linear cost grows with
 * the key and stays far under the 50 ms the issue asks of 80,000.
 *   bench_sweep [REPEATS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "api/submit.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 21;
    if (repeats < 1 || repeats > 1000) {
        fprintf(stderr, "usage: bench_sweep [REPEATS 1..1000]\n");
        return 2;
    }
    static const char *roots[] = {"var/data"};
    const struct submit_rules rules = {.max_gang = 8, .max_cells = 256, .max_axes = 32,
                                       .max_model_gib = 288, .roots = {roots, 1, 10000}};
    static const long dots[] = {80000, 800000, 4190000};
    double *parse = malloc((size_t)repeats * sizeof *parse),
           *expand = malloc((size_t)repeats * sizeof *expand);
    if (!parse || !expand)
        return 1;
    for (size_t k = 0; k < sizeof dots / sizeof dots[0]; k++) {
        size_t n = (size_t)dots[k];
        char *body = malloc(n + 64);
        if (!body)
            return 1;
        int off = snprintf(body, 64, "{\"base\": {}, \"grid\": {\"");
        memset(body + off, '.', n);
        snprintf(body + off + n, 64, "\": [0]}}");
        size_t len = strlen(body);
        int refused = 1;
        for (int r = 0; r < repeats; r++) {
            double t0 = now();
            json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
            double t1 = now();
            struct submission *subs;
            int cells;
            struct spec_error err;
            refused &= j && sweep_expand(j, &rules, &subs, &cells, &err) != 0;
            double t2 = now();
            parse[r] = t1 - t0;
            expand[r] = t2 - t1;
            json_decref(j);
        }
        qsort(parse, (size_t)repeats, sizeof *parse, by_value);
        qsort(expand, (size_t)repeats, sizeof *expand, by_value);
        printf("sweep key of %8ld dots (%7zu-byte body): sweep_expand %8.3f ms, the body's parse "
               "%8.3f ms (medians of %d)%s\n",
               dots[k], len, expand[repeats / 2] * 1e3, parse[repeats / 2] * 1e3, repeats,
               refused ? "" : "  NOT REFUSED");
        free(body);
        if (!refused)
            return 1;
    }
    free(parse);
    free(expand);
    return 0;
}
