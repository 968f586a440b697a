/* Encoding throughput of the tokenizers on the default corpus, in MB/s of
 * text, on 1 thread and on 2 (and on all cores when there are more), cut
 * and spread over threads the way cod-prep does. The target (issue 3):
 * gpt2 at 5 MB/s or more on 2 cores. Best of 5 runs, each with cold caches;
 * the load average is printed because other work on the machine lowers the figures.
 *   build/bench/bench_tokenize [CORPUS_DIR]   (default var/corpus/default) */
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/load_average.h"
#include "common/fileio.h"
#include "text/tokenizer.h"

struct chunk {
    const unsigned char *p;
    size_t n;
    unsigned flags;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int load(const char *dir, unsigned char ***docs, size_t **lens, size_t *n)
{
    const char *splits[] = {"train", "val"};
    for (int s = 0; s < 2; s++) {
        char d[4096];
        snprintf(d, sizeof(d), "%s/%s", dir, splits[s]);
        struct dirent **names;
        int k = scandir(d, &names, NULL, alphasort);
        if (k < 0) {
            perror(d);
            return -1;
        }
        for (int i = 0; i < k; i++) {
            if (names[i]->d_name[0] != '.') {
                char p[4400], err[4600];
                snprintf(p, sizeof(p), "%s/%s", d, names[i]->d_name);
                *docs = realloc(*docs, (*n + 1) * sizeof(**docs));
                *lens = realloc(*lens, (*n + 1) * sizeof(**lens));
                if (!*docs || !*lens || fio_read_file(p, &(*docs)[*n], &(*lens)[*n], err, sizeof(err)) != 0) {
                    fprintf(stderr, "bench_tokenize: %s\n", *docs && *lens ? err : "out of memory");
                    return -1;
                }
                (*n)++;
            }
            free(names[i]);
        }
        free(names);
    }
    return 0;
}

/* Seconds to encode every chunk on `threads` threads with fresh sessions. */
static double run(struct tokenizer *t, const struct chunk *c, size_t nc, int threads, size_t *tokens)
{
    struct tok_session **s = calloc((size_t)threads, sizeof(*s));
    char err[512];
    for (int i = 0; i < threads; i++)
        if (!s || !(s[i] = tok_session_new(t, err, sizeof(err)))) {
            fprintf(stderr, "bench_tokenize: %s\n", err);
            exit(1);
        }
    size_t total = 0;
    int failed = 0;
    double t0 = now();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        struct tok_ids ids = {0};
        char e[512];
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < nc; i++) {
            ids.n = 0;
            if (tok_encode(s[omp_get_thread_num()], c[i].p, c[i].n, c[i].flags, &ids, e, sizeof(e)) != 0) {
#pragma omp atomic write
                failed = 1;
            }
            total += ids.n;
        }
        tok_ids_free(&ids);
    }
    double dt = now() - t0;
    for (int i = 0; i < threads; i++)
        tok_session_free(s[i]);
    free(s);
    if (failed) {
        fprintf(stderr, "bench_tokenize: encoding failed\n");
        exit(1);
    }
    *tokens = total;
    return dt;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "var/corpus/default";
    if (argc == 1 && access("var/corpus/default/MANIFEST", R_OK) != 0 &&
        system("CORPUS_TOKENIZERS= scripts/corpus.sh >&2") != 0) {
        fprintf(stderr, "bench_tokenize: scripts/corpus.sh failed\n");
        return 1;
    }
    unsigned char **docs = NULL;
    size_t *lens = NULL, nd = 0, bytes = 0;
    if (load(dir, &docs, &lens, &nd) != 0)
        return 1;
    size_t cap = 0, nc = 0;
    struct chunk *c = NULL;
    for (size_t i = 0; i < nd; i++) {
        bytes += lens[i];
        for (size_t off = 0; off < lens[i];) {
            size_t cut = tok_split_point(docs[i] + off, lens[i] - off, 256 * 1024);
            if (nc == cap) {
                cap = cap ? 2 * cap : 1024;
                c = realloc(c, cap * sizeof(*c));
                if (!c)
                    return 1;
            }
            c[nc++] = (struct chunk){docs[i] + off, cut, off ? TOK_CONTINUE : 0};
            off += cut;
        }
    }
    int maxt = omp_get_max_threads();
    int counts[3] = {1, 2, maxt};
    int nt = maxt > 2 ? 3 : 2;
    double load = load_average();
    printf("bench_tokenize: %zu documents, %.1f MB of text, %d cores, load average %.2f before the run\n", nd,
           (double)bytes / 1e6, maxt, load);
    printf("%-6s %8s %10s %10s", "tok", "bytes/tk", "1 thr MB/s", "2 thr MB/s");
    if (nt == 3)
        printf(" %6d thr", maxt);
    printf("  2thr/1thr\n");
    const char *names[] = {"gpt2", "llama", "bytes"};
    for (int k = 0; k < 3; k++) {
        char err[1024];
        struct tokenizer *t = tokenizer_open(names[k], NULL, 0, err, sizeof(err));
        if (!t) {
            fprintf(stderr, "bench_tokenize: %s\n", err);
            return 1;
        }
        double mbs[3] = {0};
        size_t tokens = 0;
        /* Interleaved so that a burst of other load hurts every thread count alike. */
        for (int rep = 0; rep < 5; rep++)
            for (int j = 0; j < nt; j++) {
                double dt = run(t, c, nc, counts[j], &tokens);
                double r = (double)bytes / 1e6 / dt;
                if (r > mbs[j])
                    mbs[j] = r;
            }
        printf("%-6s %8.2f %10.1f %10.1f", names[k], (double)bytes / (double)tokens, mbs[0], mbs[1]);
        if (nt == 3)
            printf(" %10.1f", mbs[2]);
        printf("  %9.2f\n", mbs[1] / mbs[0]);
        tokenizer_close(t);
    }
    for (size_t i = 0; i < nd; i++)
        free(docs[i]);
    free(docs);
    free(lens);
    free(c);
    return 0;
}
