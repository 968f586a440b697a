/* Data-parallel training without GPUs: W ranks as threads of one process,
 * each running train_run on the CPU backend with an in-process
 * communicator that sums in rank order (so every rank gets the same
 * bits), against one rank on the whole batch, on real English text (the
 * GPL's, as bytes): the ranks' loss curve, held-out loss and final weights
 * equal the single rank's to float reassociation; their shares of every
 * global batch are disjoint and cover it; a run stopped under 2 ranks and
 * resumed under 4 continues the single rank's loss curve; a stop asked by
 * one rank stops them all at the same step; in documents packing, the
 * ranks' loss is the whole batch's mean over its targets, as one rank's. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/shard.h"
#include "spec/spec.h"
#include "tests/check.h"
#include "tests/text_shards.h"
#include "trainer/checkpoint.h"
#include "trainer/data_check.h"
#include "trainer/train.h"

enum { MAX_RANKS = 8, STEPS = 8 };
/* dir: the text as one stream; docdir: cut into documents */
static char dir[256], docdir[300];

/* ---- the in-process communicator ---- */

struct group {
    int size;
    pthread_barrier_t bar;
    real *bufs[MAX_RANKS];
    double host[MAX_RANKS][8];
};

struct tcomm {
    struct comm c;
    struct group *g;
};

static struct group *grp(struct comm *c) { return ((struct tcomm *)c->ctx)->g; }

static void t_allreduce(struct comm *c, real *buf, size_t n)
{
    struct group *g = grp(c);
    g->bufs[c->rank] = buf;
    pthread_barrier_wait(&g->bar);
    real *sum = calloc(n, sizeof(real));
    for (int r = 0; r < g->size; r++) /* rank order: the same bits on every rank */
        for (size_t i = 0; i < n; i++)
            sum[i] += g->bufs[r][i];
    pthread_barrier_wait(&g->bar); /* every rank has read every buffer */
    memcpy(buf, sum, n * sizeof(real));
    free(sum);
}

static void t_allreduce_host(struct comm *c, double *v, int n)
{
    struct group *g = grp(c);
    memcpy(g->host[c->rank], v, (size_t)n * sizeof(double));
    pthread_barrier_wait(&g->bar);
    for (int i = 0; i < n; i++) {
        v[i] = 0;
        for (int r = 0; r < g->size; r++)
            v[i] += g->host[r][i];
    }
    pthread_barrier_wait(&g->bar);
}

static void t_broadcast(struct comm *c, real *buf, size_t n, int root)
{
    struct group *g = grp(c);
    g->bufs[c->rank] = buf;
    pthread_barrier_wait(&g->bar);
    if (c->rank != root)
        memcpy(buf, g->bufs[root], n * sizeof(real));
    pthread_barrier_wait(&g->bar);
}

static void t_wait(struct comm *c) { (void)c; }

static int t_error(struct comm *c, char *err, size_t errlen)
{
    (void)c, (void)err, (void)errlen;
    return 0;
}

/* ---- one gang's run ---- */

struct rank_job {
    const struct job_spec *spec;
    const char *out;
    int resume, rc, stop_at;
    struct tcomm tc;
    long seen;
    char err[512];
};

/* asked once after every update; only the rank that is told to stops by
 * itself: the others must follow */
static int should_stop(void *ctx)
{
    struct rank_job *j = ctx;
    return j->stop_at && ++j->seen == j->stop_at ? TRAIN_STOP_CHECKPOINT : TRAIN_GO_ON;
}

static void *rank_main(void *arg)
{
    struct rank_job *j = arg;
    omp_set_num_threads(1);
    struct train_opts o = {.ops = &ops_cpu, .comm = &j->tc.c, .resume = j->resume,
                           .progress_seconds = 1e9};
    struct train_hooks h = {.ctx = j, .should_stop = should_stop};
    j->rc = train_run(j->spec, j->out, &o, &h, j->err, sizeof j->err);
    return NULL;
}

/* world ranks on spec into out; stop_rank stops the gang after stop_at
 * updates (0: runs to the end); returns rank 0's result */
static int gang(const struct job_spec *s, const char *out, int world, int resume, int stop_rank,
                long stop_at, char *err, size_t errlen)
{
    struct group g = {.size = world};
    struct rank_job jobs[MAX_RANKS];
    pthread_t th[MAX_RANKS];
    pthread_barrier_init(&g.bar, NULL, (unsigned)world);
    for (int r = 0; r < world; r++) {
        jobs[r] = (struct rank_job){.spec = s, .out = out, .resume = resume,
                                    .stop_at = r == stop_rank ? (int)stop_at : 0};
        jobs[r].tc.g = &g;
        jobs[r].tc.c = (struct comm){"threads", r, world, &jobs[r].tc, t_allreduce,
                                     t_allreduce_host, t_broadcast, t_wait, t_error};
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    for (int r = 0; r < world; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&g.bar);
    int rc = jobs[0].rc;
    for (int r = 1; r < world; r++)
        if (jobs[r].rc != rc) {
            snprintf(err, errlen, "rank %d ended with %d, rank 0 with %d: %s", r, jobs[r].rc, rc,
                     jobs[r].err);
            return -99;
        }
    snprintf(err, errlen, "%s", jobs[0].err);
    return rc;
}

/* ---- data and reading back ---- */

static int parse_packed(struct job_spec *s, int documents)
{
    char text[2048];
    const char *d = documents ? docdir : dir;
    snprintf(text, sizeof(text),
             "{\"name\": \"dp\", \"model\": {\"dim\": 32, \"n_layers\": 3, \"n_heads\": 2,"
             " \"ffn_dim\": 64%s}, \"norm\": \"lns\","
             " \"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\","
             " \"packing\": \"%s\"},"
             " \"train\": {\"steps\": %d, \"seq_len\": 32, \"batch_seqs\": 8, \"micro_batch\": 2,"
             " \"lr\": 3e-3, \"warmup\": 2, \"clip\": 1.0},"
             " \"eval\": {\"every\": 4, \"tokens\": 2048}, \"stats\": {\"every\": 2},"
             " \"checkpoint\": {\"every\": 0, \"keep\": 2}}",
             documents ? "" : ", \"vocab\": 256", d, d, documents ? "documents" : "stream", STEPS);
    struct spec_error e;
    if (spec_parse(text, strlen(text), s, &e) || spec_check_data(s, &e)) {
        CHECK(0, "spec: %s: %s", e.field, e.message);
        return -1;
    }
    return 0;
}

static int parse(struct job_spec *s)
{
    return parse_packed(s, 0);
}

/* values of one scalar metric by step, from a run's metrics.jsonl */
static int series(const char *run, const char *name, double *v, int max)
{
    char path[600], line[512], want[96];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run);
    snprintf(want, sizeof want, "\"name\": \"%s\", \"value\": ", name);
    FILE *f = fopen(path, "r");
    int n = 0;
    for (int i = 0; i < max; i++)
        v[i] = NAN;
    while (f && fgets(line, sizeof line, f)) {
        long step;
        char *at = strstr(line, want);
        if (at && sscanf(line, "{\"step\": %ld", &step) == 1 && step >= 0 && step < max) {
            v[step] = atof(at + strlen(want));
            n++;
        }
    }
    if (f)
        fclose(f);
    return n;
}

/* over the steps where either has a value; a value on one side only is
 * infinitely off */
static double worst_rel(const double *a, const double *b, int from, int to)
{
    double w = 0;
    for (int i = from; i <= to; i++) {
        if (isnan(a[i]) && isnan(b[i]))
            continue;
        double e = fabs(a[i] - b[i]) / fabs(b[i]);
        w = !isfinite(e) ? INFINITY : e > w ? e : w;
    }
    return w;
}

/* the final weights of two runs, relative L2 */
static double weights_apart(const struct job_spec *s, const char *a, const char *b)
{
    char pa[700], pb[700], err[512];
    snprintf(pa, sizeof pa, "%s/checkpoints/step_%08d", a, STEPS);
    snprintf(pb, sizeof pb, "%s/checkpoints/step_%08d", b, STEPS);
    struct model_config c = train_model_config(s);
    struct model ma, mb;
    if (model_create(&ma, &ops_cpu, &c, 1, err, sizeof err) ||
        model_create(&mb, &ops_cpu, &c, 1, err, sizeof err) ||
        checkpoint_load_weights(pa, &ma, err, sizeof err) ||
        checkpoint_load_weights(pb, &mb, err, sizeof err)) {
        fprintf(stderr, "  %s\n", err);
        return INFINITY;
    }
    double num = 0, den = 0;
    for (size_t i = 0; i < ma.n_params; i++) {
        double e = (double)ma.params[i] - mb.params[i];
        num += e * e;
        den += (double)mb.params[i] * mb.params[i];
    }
    model_destroy(&ma);
    model_destroy(&mb);
    return sqrt(num / den);
}

/* float reassociation of sums over a few micro-batches, carried through
 * STEPS Adam updates of a small model */
#define REASSOC 1e-4

static void test_shares_are_disjoint_and_cover(void)
{
    struct job_spec s;
    if (parse(&s))
        return;
    int B = s.train.batch_seqs;
    for (int world = 1; world <= 8; world *= 2)
        for (long step = 0; step < 3; step++) {
            int seen[64] = {0}, bad = 0;
            for (int r = 0; r < world; r++)
                for (int i = 0; i < B / world; i++) {
                    int64_t k = train_sample_index(&s, step, r, world, i) - step * B;
                    if (k < 0 || k >= B || seen[k]++)
                        bad = 1;
                }
            for (int k = 0; k < B; k++)
                bad |= seen[k] != 1;
            CHECK(!bad, "world %d, step %ld: the ranks' shares are not a partition of the batch",
                  world, step);
        }
}

static void ranks_equal_one_rank(int documents)
{
    struct job_spec s;
    if (parse_packed(&s, documents))
        return;
    const char *tag = documents ? "-documents" : "";
    char one[512], err[512];
    snprintf(one, sizeof one, "%s/one%s", dir, tag);
    mkdir(one, 0755);
    CHECK(gang(&s, one, 1, 0, -1, 0, err, sizeof err) == TRAIN_DONE, "one rank: %s", err);
    double ref[STEPS + 1], ref_eval[STEPS + 1], got[STEPS + 1], got_eval[STEPS + 1];
    series(one, "train/loss", ref, STEPS + 1);
    series(one, "eval/loss", ref_eval, STEPS + 1);
    for (int world = 2; world <= 4; world *= 2) {
        char out[512];
        snprintf(out, sizeof out, "%s/world%d%s", dir, world, tag);
        mkdir(out, 0755);
        int rc = gang(&s, out, world, 0, -1, 0, err, sizeof err);
        CHECK(rc == TRAIN_DONE, "%d ranks: %d %s", world, rc, err);
        CHECK(series(out, "train/loss", got, STEPS + 1) == STEPS, "%d ranks: one loss a step",
              world);
        series(out, "eval/loss", got_eval, STEPS + 1);
        double e = worst_rel(got, ref, 1, STEPS), ee = worst_rel(got_eval, ref_eval, 0, STEPS);
        printf("  %d ranks: loss curve within %.2e, held-out loss within %.2e of one rank\n",
               world, e, ee);
        CHECK(e < REASSOC && ee < REASSOC, "%d ranks: loss %.3g, eval %.3g off one rank's", world,
              e, ee);
        double w = weights_apart(&s, out, one);
        CHECK(w < REASSOC, "%d ranks: final weights %.3g apart from one rank's", world, w);
    }
}

static void test_ranks_equal_one_rank(void)
{
    ranks_equal_one_rank(0);
}

/* Each rank's share of a batch of documents holds its own number of
 * targets; the gang's loss and update are still the batch's mean. */
static void test_documents_ranks_equal_one_rank(void)
{
    ranks_equal_one_rank(1);
}

static void test_resume_with_another_gang_size(void)
{
    struct job_spec s;
    if (parse(&s))
        return;
    char out[512], one[512], err[512];
    snprintf(out, sizeof out, "%s/regang", dir);
    snprintf(one, sizeof one, "%s/one", dir);
    mkdir(out, 0755);
    /* rank 1 alone is asked to stop: the gang stops with it, at step 4 */
    int rc = gang(&s, out, 2, 0, 1, 4, err, sizeof err);
    CHECK(rc == TRAIN_STOPPED, "2 ranks stopped by rank 1: %d %s", rc, err);
    char ck[600];
    snprintf(ck, sizeof ck, "%s/checkpoints/step_00000004/state.json", out);
    struct stat st;
    CHECK(stat(ck, &st) == 0, "rank 0 wrote the checkpoint of step 4");
    rc = gang(&s, out, 4, 1, -1, 0, err, sizeof err);
    CHECK(rc == TRAIN_DONE, "resumed under 4 ranks: %d %s", rc, err);
    double ref[STEPS + 1], got[STEPS + 1];
    series(one, "train/loss", ref, STEPS + 1);
    CHECK(series(out, "train/loss", got, STEPS + 1) == STEPS, "every step once in the metrics");
    double e = worst_rel(got, ref, 1, STEPS);
    printf("  2 ranks to step 4, then 4 ranks: loss curve within %.2e of one rank\n", e);
    CHECK(e < REASSOC, "the resumed curve is %.3g off one rank's", e);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/cod-dp-XXXXXX");
    if (!mkdtemp(dir) || write_text_shards(dir) != 0) {
        printf("FAIL setup: no temporary directory or no /usr/share/common-licenses/GPL-3\n");
        return 1;
    }
    snprintf(docdir, sizeof docdir, "%s/docs", dir);
    if (mkdir(docdir, 0755) != 0 || write_doc_shards(docdir) != 0) {
        printf("FAIL setup of the documents\n");
        return 1;
    }
    RUN(test_shares_are_disjoint_and_cover);
    RUN(test_ranks_equal_one_rank);
    RUN(test_documents_ranks_equal_one_rank);
    RUN(test_resume_with_another_gang_size);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_EXIT();
}
