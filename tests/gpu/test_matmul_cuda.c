/* cuBLASLt's algorithms and the second stream, against the CPU backend
 * (tolerances as test_ops_cuda's, tests/gpu/t3.h):
 *   candidates  every candidate the heuristic offers for a product,
 *               forward, input and weight gradient, within its limit and
 *               bit for bit the same when run again
 *   tuned       the timed choice (COD_CUBLASLT_TUNE): right, written to
 *               the cache file, read back from it untimed with the same
 *               bits; an accumulating product (dw, din over its own
 *               residual) timed without touching its output; a line of
 *               the file that does not read, or names another algorithm,
 *               skipped and its shape timed again; COD_CUBLASLT_TUNE=0
 *               times nothing
 *   beside      the weight gradients on the second stream: right after a
 *               join, a mark covering what came before it; recorded in a
 *               CUDA graph with its join and replayed. On the emulator,
 *               which runs a second stream as late as its waits allow,
 *               also: nothing of it has run before its join (so that the
 *               model's checks on the emulator show a missing join), and
 *               a recording left unjoined fails.
 * Needs a GPU (tests/gpu/run.sh) or the CUDA emulator (tests/cuda_emu.sh). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/gpu/t3.h"

/* the products of one shape, with the inputs and outputs kept */
struct products {
    int N, In, Out;
    struct t3 in, w, dout, out, din, dw, rin;
};

static struct products products_new(int N, int In, int Out)
{
    struct products p = {.N = N, .In = In, .Out = Out};
    p.in = make((size_t)N * In, 1);
    p.w = make((size_t)Out * In, 0.1);
    p.dout = make((size_t)N * Out, 1);
    p.out = poisoned((size_t)N * Out);
    p.din = poisoned((size_t)N * In);
    p.rin = make((size_t)N * In, 1);
    p.dw = make_real((size_t)Out * In, 1);
    return p;
}

static void products_drop(struct products *p)
{
    drop(&p->in), drop(&p->w), drop(&p->dout), drop(&p->out), drop(&p->din), drop(&p->dw),
        drop(&p->rin);
}

/* The forward, then the backward (din over a residual that is din
 * itself, dw accumulating) on both backends from the same starting
 * values; the GPU's results into got (out | din | dw) when not NULL.
 * 1 when all three are within their limits. */
static int run_products(struct products *p, real *got, const char *label)
{
    int N = p->N, In = p->In, Out = p->Out;
    push(&p->dw);
    push(&p->rin);
    C->matmul_fwd(p->out.c, p->in.c, p->w.c, N, In, Out, 0.5f, NULL, 0);
    G->matmul_fwd(p->out.g, p->in.g, p->w.g, N, In, Out, 0.5f, NULL, 0);
    C->copy_act(p->din.c, p->rin.c, (size_t)N * In);
    G->copy_act(p->din.g, p->rin.g, (size_t)N * In);
    C->matmul_bwd(p->din.c, p->dw.c, p->dout.c, p->in.c, p->w.c, N, In, Out, 0.75f, p->din.c, 2);
    G->matmul_bwd(p->din.g, p->dw.g, p->dout.g, p->in.g, p->w.g, N, In, Out, 0.75f, p->din.g, 2);
    G->wgrad_join(-1);
    char what[3][96];
    snprintf(what[0], sizeof what[0], "%s: matmul_fwd", label);
    snprintf(what[1], sizeof what[1], "%s: din (over itself)", label);
    snprintf(what[2], sizeof what[2], "%s: dw (+=)", label);
    int ok = same(&p->out, ROUND1, what[0]) & same(&p->din, ROUND1, what[1]) &
             same(&p->dw, FP32, what[2]);
    if (got) {
        G->download_act(got, p->out.g, p->out.n);
        G->download_act(got + p->out.n, p->din.g, p->din.n);
        G->download(got + p->out.n + p->din.n, p->dw.g, p->dw.n);
    }
    return ok;
}

static size_t results_n(const struct products *p) { return p->out.n + p->din.n + p->dw.n; }

/* the GPU's results of the products twice: both right, bit for bit the same */
static void twice_the_same(struct products *p, const char *label)
{
    size_t n = results_n(p);
    real *a = malloc(n * sizeof(real)), *b = malloc(n * sizeof(real));
    CHECK(a && b, "out of host memory");
    if (!a || !b)
        exit(1);
    CHECK(run_products(p, a, label), "%s: a product over its limit", label);
    run_products(p, b, label);
    CHECK(memcmp(a, b, n * sizeof(real)) == 0, "%s: run again, the bits differ", label);
    free(a);
    free(b);
}

static void candidates(void)
{
    struct products p = products_new(64, 96, 80);
    int offered = 1;
    for (int k = 0; k < offered && k < 16; k++) {
        ops_cuda_matmul_replan(k);
        char label[40];
        snprintf(label, sizeof label, "candidate %d", k + 1);
        twice_the_same(&p, label);
        if (k == 0)
            offered = ops_cuda_matmul_offered();
    }
    printf("  the heuristic offered up to %d candidates a product\n", offered);
    CHECK(offered >= 2, "a choice needs more than one candidate: %d", offered);
    ops_cuda_matmul_replan(-1);
    products_drop(&p);
}

static int lines_of(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f)
        return 0;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* a line appended to the cache file */
static void rewrite(const char *path, const char *extra)
{
    FILE *f = fopen(path, "a");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(extra, f);
        fclose(f);
    }
}

static void tuned(void)
{
    char path[] = "/tmp/cod-cublaslt-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "no temporary file");
    if (fd < 0)
        return;
    close(fd);
    /* the cache the process had, put back after */
    const char *was = getenv("COD_CUBLASLT_CACHE");
    char *before = was ? strdup(was) : NULL;
    setenv("COD_CUBLASLT_CACHE", path, 1);
    setenv("COD_CUBLASLT_TUNE", "1", 1);
    setenv("COD_CUBLASLT_CANDIDATES", "16", 1);
    ops_cuda_matmul_replan(-1);
    struct products p = products_new(48, 72, 40);
    size_t n = results_n(&p);
    real *timed = malloc(n * sizeof(real)), *again = malloc(n * sizeof(real));
    CHECK(timed && again, "out of host memory");
    if (!timed || !again)
        exit(1);
    CHECK(run_products(&p, timed, "timed"), "the timed choices are not right");
    /* the forward, din and dw: three shapes, one line each */
    int lines = lines_of(path);
    CHECK(lines == 3, "the cache file has %d lines after three products were timed, not 3", lines);
    ops_cuda_matmul_replan(-1);
    CHECK(run_products(&p, again, "from the cache"), "the cached choices are not right");
    CHECK(memcmp(timed, again, n * sizeof(real)) == 0,
          "the choices read back from the cache compute other bits");
    CHECK(lines_of(path) == 3, "a choice the cache holds was timed again (%d lines)", lines_of(path));

    /* a line that does not read, and one naming an algorithm the
     * heuristic does not offer at that rank: both skipped, the shape timed */
    struct products q = products_new(40, 56, 24);
    char bad[600];
    snprintf(bad, sizeof bad, "this is not a choice\n");
    rewrite(path, bad);
    lines = lines_of(path);
    FILE *f = fopen(path, "r");
    char first[512] = "";
    if (f) {
        CHECK(fgets(first, sizeof first, f) != NULL, "cannot read %s", path);
        fclose(f);
    }
    /* the forward's line of the first shape, moved to the new shape's
     * forward and given an algorithm id no heuristic uses */
    char dev[100];
    int sms;
    size_t version;
    if (sscanf(first, "v1 %99s %d %zu", dev, &sms, &version) == 3) {
        snprintf(bad, sizeof bad,
                 "v1 %s %d %zu 1 0 24 40 56 56 56 24 0 256 256 256 0 987654 0 1 0 0 0 0 0 0 1.0 1.0\n",
                 dev, sms, version);
        rewrite(path, bad);
        lines++;
    } else {
        CHECK(0, "the cache file's first line does not read: %s", first);
    }
    ops_cuda_matmul_replan(-1);
    CHECK(run_products(&q, NULL, "after a bad line"), "the products after a bad line are not right");
    CHECK(lines_of(path) == lines + 3, "the new shape's three products were not timed (%d lines, "
          "%d before)", lines_of(path), lines);

    /* untimed: nothing written */
    setenv("COD_CUBLASLT_TUNE", "0", 1);
    ops_cuda_matmul_replan(-1);
    struct products r = products_new(24, 40, 32);
    lines = lines_of(path);
    CHECK(run_products(&r, NULL, "untimed"), "the heuristic's first choices are not right");
    CHECK(lines_of(path) == lines, "COD_CUBLASLT_TUNE=0 timed a product");
    unsetenv("COD_CUBLASLT_TUNE");
    unsetenv("COD_CUBLASLT_CANDIDATES");
    if (before)
        setenv("COD_CUBLASLT_CACHE", before, 1);
    else
        unsetenv("COD_CUBLASLT_CACHE");
    free(before);
    ops_cuda_matmul_replan(-1);
    products_drop(&p), products_drop(&q), products_drop(&r);
    free(timed);
    free(again);
    unlink(path);
}

/* the emulator runs a second stream at the last point its waits allow */
static int emulated(void)
{
    char why[256];
    cuda_probe(0, why, sizeof why);
    return strstr(why, "emulator") != NULL;
}

static void beside(void)
{
    if (!G->wgrad_beside()) {
        printf("  COD_CUDA_WGRAD_STREAM=0 here: the weight gradients run in order\n");
        return;
    }
    int N = 32, In = 48, Out = 40;
    struct t3 in = make((size_t)N * In, 1), dout = make((size_t)N * Out, 1),
              dw1 = make_real((size_t)Out * In, 1), dw2 = make_real((size_t)Out * In, 1);
    real *before = malloc(dw1.n * sizeof(real)), *now = malloc(dw1.n * sizeof(real));
    CHECK(before && now, "out of host memory");
    if (!before || !now)
        exit(1);
    memcpy(before, dw2.h, dw2.n * sizeof(real));
    C->matmul_bwd(NULL, dw1.c, dout.c, in.c, NULL, N, In, Out, 1, NULL, 0);
    C->matmul_bwd(NULL, dw2.c, dout.c, in.c, NULL, N, In, Out, 1, NULL, 0);
    G->matmul_bwd(NULL, dw1.g, dout.g, in.g, NULL, N, In, Out, 1, NULL, 0);
    long mark = G->wgrad_mark();
    G->matmul_bwd(NULL, dw2.g, dout.g, in.g, NULL, N, In, Out, 1, NULL, 0);
    G->wgrad_join(mark);
    SAME(dw1, FP32, "dw before the mark, after its join");
    if (emulated()) {
        G->download(now, dw2.g, dw2.n);
        CHECK(memcmp(now, before, dw2.n * sizeof(real)) == 0,
              "the emulator ran the second stream's product after the mark before a join");
    }
    G->wgrad_join(-1);
    SAME(dw2, FP32, "dw after the mark, after the join of all");

    /* recorded with its join: replayed, it accumulates again */
    push(&dw1);
    C->matmul_bwd(NULL, dw1.c, dout.c, in.c, NULL, N, In, Out, 1, NULL, 0);
    C->matmul_bwd(NULL, dw1.c, dout.c, in.c, NULL, N, In, Out, 1, NULL, 0);
    char err[300];
    CHECK(G->record_begin(err, sizeof err) == 0, "record_begin: %s", err);
    G->matmul_bwd(NULL, dw1.g, dout.g, in.g, NULL, N, In, Out, 1, NULL, 0);
    G->wgrad_join(-1);
    recording *rec = G->record_end(err, sizeof err);
    CHECK(rec != NULL, "a recording with the second stream joined: %s", err);
    if (rec) {
        CHECK(G->replay(rec) == 0 && G->replay(rec) == 0, "replay");
        SAME(dw1, FP32, "dw recorded on the second stream, replayed twice");
        G->recording_free(rec);
    }
    if (emulated()) {
        CHECK(G->record_begin(err, sizeof err) == 0, "record_begin: %s", err);
        G->matmul_bwd(NULL, dw1.g, dout.g, in.g, NULL, N, In, Out, 1, NULL, 0);
        rec = G->record_end(err, sizeof err);
        CHECK(rec == NULL, "a recording that never joined the second stream was made");
        printf("  unjoined: %s\n", err);
        if (rec)
            G->recording_free(rec);
        CHECK(G->error(err, sizeof err) == 0, "an unjoined recording left a fault: %s", err);
    }
    free(before);
    free(now);
    drop(&in), drop(&dout), drop(&dw1), drop(&dw2);
}

static void no_errors(void)
{
    char err[600];
    CHECK(G->error(err, sizeof err) == 0, "%s", err);
    printf("  worst: %s at %.2f of its limit\n", worst_what, worst_ratio);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: test_matmul_cuda\n");
        return 2;
    }
    if (gpu_start() != 0)
        return 1;
    rng_seed(&R, 20240602, 1);
    RUN(candidates);
    RUN(tuned);
    RUN(beside);
    RUN(no_errors);
    CHECK_EXIT();
}
