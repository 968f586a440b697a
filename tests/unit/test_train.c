/* The training loop on real English text (the GPL's text, which every
 * Debian machine has, as bytes): exact resume in every precision, packing
 * and gains setting, the schedule, the data loader's determinism and
 * coverage, and the metrics file; documents packing's rows, its loss as
 * the mean over the non-pad targets worked out by hand, its evaluation
 * taking each held-out document once; frozen gains after training. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/text_shards.h"
#include "trainer/checkpoint.h"
#include "trainer/data_check.h"
#include "trainer/dataloader.h"
#include "trainer/eval.h"
#include "trainer/schedule.h"
#include "trainer/train.h"

/* dir: the text as one stream of bytes; docdir: cut into documents (vocab 257) */
static char dir[256], docdir[300];

/* A run's settings beyond the base spec's. */
struct mode {
    const char *name;
    const char *norm;      /* the norm's JSON */
    const char *packing;
    const char *precision;
};
static const struct mode plain = {"plain", "\"lns\"", "stream", "mixed"};

static int parse_mode(struct job_spec *s, long steps, const struct mode *m)
{
    int docs = !strcmp(m->packing, "documents");
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"name\": \"t\", \"model\": {\"dim\": 32, \"n_layers\": 3, \"n_heads\": 2,"
             " \"ffn_dim\": 64%s}, \"norm\": %s,"
             " \"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\","
             " \"packing\": \"%s\"},"
             " \"train\": {\"steps\": %ld, \"seq_len\": 32, \"batch_seqs\": 8, \"micro_batch\": 4,"
             " \"lr\": 3e-3, \"warmup\": 2, \"precision\": \"%s\"},"
             " \"eval\": {\"every\": 4, \"tokens\": 2048, \"train_tokens\": 1024},"
             " \"stats\": {\"every\": 2},"
             " \"checkpoint\": {\"every\": 0, \"keep\": 2}}",
             docs ? "" : ", \"vocab\": 256", m->norm, docs ? docdir : dir, docs ? docdir : dir,
             m->packing, steps, m->precision);
    struct spec_error e;
    if (spec_parse(text, strlen(text), s, &e) || spec_check_data(s, &e)) {
        CHECK(0, "spec: %s: %s", e.field, e.message);
        return -1;
    }
    return 0;
}

static int parse(struct job_spec *s, long steps)
{
    return parse_mode(s, steps, &plain);
}

static int stop_after;
static int stop_hook(void *ctx)
{
    (void)ctx;
    return --stop_after == 0;
}

/* metrics.jsonl without the wall-clock throughput lines */
static char *metrics_without_timing(const char *run)
{
    char path[512], line[512];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", run);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *out = calloc(cap, 1);
    while (fgets(line, sizeof(line), f))
        if (!strstr(line, "tokens_per_s") && n + strlen(line) < cap) {
            memcpy(out + n, line, strlen(line));
            n += strlen(line);
        }
    fclose(f);
    return out;
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            same = 0;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* A run stopped at step 4 and resumed ends as the run that never stopped:
 * the same metrics (but the wall clock's) and the same checkpoint files. */
static void resume_is_bit_exact(const struct mode *mode)
{
    struct job_spec s;
    if (parse_mode(&s, 8, mode))
        return;
    char a[512], b[512], err[512];
    snprintf(a, sizeof(a), "%s/straight-%s", dir, mode->name);
    snprintf(b, sizeof(b), "%s/halves-%s", dir, mode->name);
    mkdir(a, 0755);
    mkdir(b, 0755);
    struct train_opts o = {.ops = &ops_cpu, .progress_seconds = 1e9};
    int rc = train_run(&s, a, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_DONE, "straight run: %d %s", rc, err);
    stop_after = 4;
    struct train_hooks h = {.should_stop = stop_hook};
    rc = train_run(&s, b, &o, &h, err, sizeof(err));
    CHECK(rc == TRAIN_STOPPED, "first half should stop: %d %s", rc, err);
    o.resume = 1;
    rc = train_run(&s, b, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_DONE, "second half: %d %s", rc, err);
    char *ma = metrics_without_timing(a), *mb = metrics_without_timing(b);
    CHECK(ma && mb && strlen(ma) > 1000 && !strcmp(ma, mb),
          "the loss curves differ:\n--- straight\n%.600s\n--- halves\n%.600s", ma ? ma : "",
          mb ? mb : "");
    CHECK(ma && strstr(ma, "\"step\": 8, \"name\": \"train/loss\"") &&
              strstr(ma, "\"name\": \"layer/out_var\", \"layer\": 3") &&
              strstr(ma, "\"step\": 8, \"name\": \"eval/ppl\"") &&
              strstr(ma, "\"step\": 0, \"name\": \"train_eval/loss\"") &&
              strstr(ma, "\"step\": 8, \"name\": \"train_eval/loss\""),
          "metrics hold train/loss, layer/out_var of every layer, eval/ppl and, at each "
          "evaluation, train_eval/loss");
    free(ma);
    free(mb);
    const char *files[] = {"model.safetensors", "optim.safetensors"};
    for (int i = 0; i < 2; i++) {
        char pa[700], pb[700];
        snprintf(pa, sizeof(pa), "%s/checkpoints/step_00000008/%s", a, files[i]);
        snprintf(pb, sizeof(pb), "%s/checkpoints/step_00000008/%s", b, files[i]);
        CHECK(same_file(pa, pb), "%s: %s differs between straight and resumed runs", mode->name,
              files[i]);
    }
    /* a resume under a changed spec is refused, naming the field */
    s.train.lr *= 2;
    rc = train_run(&s, b, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_FAILED && strstr(err, "\"train\""), "changed spec: %s", err);
}

static void test_resume_is_bit_exact(void)
{
    static const struct mode modes[] = {
        {"plain", "\"lns\"", "stream", "mixed"},
        {"bf16", "\"lns\"", "stream", "bf16"},
        {"documents", "\"lns\"", "documents", "mixed"},
        {"frozen", "{\"base\": \"lns\", \"gains\": \"frozen\"}", "stream", "mixed"},
        {"paper", "{\"base\": \"lns\", \"gains\": \"frozen\"}", "documents", "bf16"},
    };
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        resume_is_bit_exact(&modes[i]);
}

/* A checkpoint written by a cod before the recipe's settings, whose spec
 * lacks them, resumes under the spec of what it ran (the embedding from
 * N(0, √0.4), mixed precision, stream packing, learned gains), and is
 * refused under today's defaults, naming the field. */
static void test_resume_of_an_older_checkpoint(void)
{
    struct job_spec s;
    if (parse(&s, 8))
        return;
    s.model.embed_std = sqrt(0.4);
    char run[512], state[700], err[512];
    snprintf(run, sizeof(run), "%s/older", dir);
    snprintf(state, sizeof(state), "%s/checkpoints/step_00000004/state.json", run);
    mkdir(run, 0755);
    struct train_opts o = {.ops = &ops_cpu, .progress_seconds = 1e9};
    stop_after = 4;
    struct train_hooks h = {.should_stop = stop_hook};
    int rc = train_run(&s, run, &o, &h, err, sizeof(err));
    CHECK(rc == TRAIN_STOPPED, "%d %s", rc, err);
    json_t *st = json_load_file(state, 0, NULL), *sp = json_object_get(st, "spec");
    int bad = !sp;
    bad |= json_object_del(json_object_get(sp, "model"), "embed_std");
    bad |= json_object_del(json_object_get(sp, "norm"), "gains");
    bad |= json_object_del(json_object_get(sp, "data"), "packing");
    bad |= json_object_del(json_object_get(sp, "train"), "precision");
    bad |= json_object_del(st, "tokens");
    bad |= json_dump_file(st, state, 0);
    json_decref(st);
    CHECK(!bad, "state.json taken back to before the recipe's settings");
    struct job_spec today = s;
    today.model.embed_std = 0.02;
    o.resume = 1;
    rc = train_run(&today, run, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_FAILED && strstr(err, "\"model\""), "under 0.02: %d %s", rc, err);
    rc = train_run(&s, run, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_DONE, "under √0.4: %d %s", rc, err);
}

static void test_schedule(void)
{
    double peak = 1e-3;
    enum schedule cos = SCHEDULE_COSINE, lin = SCHEDULE_LINEAR;
    CHECK(schedule_lr(cos, peak, 10, 100, 0.1, 0) == 0, "warmup starts at 0");
    CHECK(fabs(schedule_lr(cos, peak, 10, 100, 0.1, 5) - 5e-4) < 1e-15, "linear warmup");
    CHECK(fabs(schedule_lr(cos, peak, 10, 100, 0.1, 10) - peak) < 1e-15, "peak after warmup");
    CHECK(fabs(schedule_lr(cos, peak, 10, 100, 0.1, 99) - 1e-4) < 1e-15, "min_lr_ratio at the last step");
    double mid = schedule_lr(cos, peak, 10, 100, 0.1, 10 + 89 / 2);
    CHECK(mid > 5.4e-4 && mid < 5.6e-4, "cosine midpoint %g", mid);
    /* Hugging Face's get_linear_schedule_with_warmup: (steps - update) / (steps - warmup) */
    CHECK(schedule_lr(lin, peak, 10, 100, 0, 5) == schedule_lr(cos, peak, 10, 100, 0, 5),
          "linear: the same warmup");
    CHECK(fabs(schedule_lr(lin, peak, 10, 100, 0, 10) - peak) < 1e-15, "linear: peak after warmup");
    CHECK(fabs(schedule_lr(lin, peak, 10, 100, 0, 55) - peak / 2) < 1e-15, "linear: half way");
    CHECK(fabs(schedule_lr(lin, peak, 10, 100, 0, 99) - peak / 90) < 1e-15,
          "linear: the last update at 1/(steps - warmup) of the peak");
    CHECK(fabs(schedule_lr(lin, peak, 0, 100, 0.1, 100) - 1e-4) < 1e-15,
          "linear: min_lr_ratio where it would reach 0");
}

static void test_loader_epochs(void)
{
    char pat[512], err[256];
    snprintf(pat, sizeof(pat), "%s/train_*.bin", dir);
    struct loader l1, l2;
    CHECK(!loader_open(&l1, pat, 32, 5, NULL, err, sizeof(err)) &&
              !loader_open(&l2, pat, 32, 5, NULL, err, sizeof(err)), "%s", err);
    int64_t n = l1.n_chunks;
    char *seen = calloc((size_t)n, 1);
    int32_t t1[32], g1[32], t2[32], g2[32];
    int dup = 0, differ = 0;
    for (int64_t i = 0; i < n; i++) {
        loader_sample(&l1, n + i, t1, g1); /* the second epoch */
        loader_sample(&l2, n + i, t2, g2);
        differ |= memcmp(t1, t2, sizeof(t1)) != 0;
        for (int64_t k = 0; k < n; k++) {
            int32_t t3[32], g3[32];
            loader_chunk(&l1, k, t3, g3);
            if (!memcmp(t1, t3, sizeof(t1)) && !memcmp(g1, g3, sizeof(g1))) {
                dup |= seen[k];
                seen[k] = 1;
                break;
            }
        }
        CHECK(t1[1] == g1[0], "targets are the next tokens");
    }
    int all = 1;
    for (int64_t k = 0; k < n; k++) all &= seen[k];
    CHECK(all && !dup && !differ, "an epoch visits each chunk once (all %d dup %d differ %d)", all,
          dup, differ);
    free(seen);
    loader_close(&l1);
    loader_close(&l2);
    CHECK(loader_open(&l1, "/nonexistent/x_*.bin", 32, 1, NULL, err, sizeof(err)) == -1 &&
              strstr(err, "/nonexistent/x_*.bin"), "missing data named: %s", err);
}

static int write_file(const char *d, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", d, name);
    FILE *f = fopen(path, "w");
    int rc = !f || fputs(text, f) < 0;
    if (f)
        rc |= fclose(f) != 0;
    return rc ? -1 : 0;
}

/* tokens: bytes, with '|' for the doc token 256 and '_' for the pad id 0 */
static int write_shard(const char *d, const char *name, const char *bytes)
{
    static uint32_t tok[1024];
    size_t n = strlen(bytes);
    if (n > 1024)
        return -1;
    for (size_t i = 0; i < n; i++)
        tok[i] = bytes[i] == '|' ? 256 : bytes[i] == '_' ? 0 : (uint32_t)(unsigned char)bytes[i];
    char path[512], err[256];
    snprintf(path, sizeof(path), "%s/%s", d, name);
    return shard_write(path, tok, (int64_t)n, 2, err, sizeof(err));
}

/* A row as bytes, '|' for 256, '_' for the pad id 0, '.' for no target. */
static void row_text(const int32_t *x, int n, char *out)
{
    for (int i = 0; i < n; i++)
        out[i] = x[i] == 256 ? '|' : x[i] == 0 ? '_' : x[i] < 0 ? '.' : (char)x[i];
    out[n] = 0;
}

enum { HT = 16 }; /* the hand-made documents' rows */

/* Shards written by hand whose rows are known: a fragment before the
 * first doc token (no row), a short document, a long one across the two
 * train shards (truncated to its first 17 tokens), one of a single target,
 * one of exactly 17 tokens, and a doc token alone (no target, no row). */
static const char *const hand_rows[][2] = {
    {"|abcd|||||||||||", "abcd............"},
    {"|The quick brown", "The quick brown "},
    {"|z||||||||||||||", "z..............."},
    {"|0123456789ABCDE", "0123456789ABCDEF"},
};
/* The same documents with the doc token at their end (T5's </s>) and a pad id of 0 */
static const char *const hand_rows_end[][2] = {
    {"abcd|___________", "bcd|............"},
    {"The quick brown ", "he quick brown f"},
    {"z|______________", "|..............."},
    {"0123456789ABCDE|", "123456789ABCDE|."},
};

static int hand_shards(const char *d, int at_end)
{
    mkdir(d, 0755);
    if (at_end)
        return write_shard(d, "train_000.bin", "abcd|The quick") ||
               write_shard(d, "train_001.bin", " brown fox jumps over the lazy dog|z|0123456789ABCDE||xy") ||
               write_shard(d, "val_000.bin", "abcd|z|") ||
               write_file(d, "meta.json",
                          "{\"vocab_size\": 257, \"doc_token\": 256, \"doc_token_at\": \"end\","
                          " \"pad_token\": 0}");
    return write_shard(d, "train_000.bin", "xy|abcd|The quick") ||
           write_shard(d, "train_001.bin", " brown fox jumps over the lazy dog|z|0123456789ABCDEF|") ||
           write_shard(d, "val_000.bin", "|abcd|z") ||
           write_file(d, "meta.json", "{\"vocab_size\": 257, \"doc_token\": 256}");
}

static int hand_spec(struct job_spec *s, const char *d)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"name\": \"hand\", \"model\": {\"dim\": 16, \"n_layers\": 2, \"n_heads\": 2,"
             " \"ffn_dim\": 32}, \"norm\": \"lns\","
             " \"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\","
             " \"packing\": \"documents\"},"
             " \"train\": {\"steps\": 1, \"seq_len\": %d, \"batch_seqs\": 4, \"micro_batch\": 2,"
             " \"lr\": 1e-3, \"warmup\": 0, \"seed\": 5},"
             " \"eval\": {\"every\": 0}, \"stats\": {\"every\": 0}, \"checkpoint\": {\"every\": 0}}",
             d, d, HT);
    struct spec_error e;
    if (spec_parse(text, strlen(text), s, &e) || spec_check_data(s, &e)) {
        CHECK(0, "spec: %s: %s", e.field, e.message);
        return -1;
    }
    return 0;
}

/* The rows of both kinds of boundary, against the documents as written. */
static void test_documents_rows(void)
{
    for (int at_end = 0; at_end <= 1; at_end++) {
        char d[512], err[512];
        snprintf(d, sizeof(d), "%s/hand-%s", dir, at_end ? "end" : "start");
        struct job_spec s;
        struct loader l;
        if (hand_shards(d, at_end) || hand_spec(&s, d) ||
            loader_open_spec(&l, &s, s.train_glob, "data.train", err, sizeof(err))) {
            CHECK(0, "%s: %s", d, err);
            continue;
        }
        const char *const(*want)[2] = at_end ? hand_rows_end : hand_rows;
        CHECK(l.n_chunks == 4, "%s: %lld rows, not 4", d, (long long)l.n_chunks);
        for (int k = 0; k < 4 && k < l.n_chunks; k++) {
            int32_t tok[HT], tgt[HT];
            char t[HT + 1], g[HT + 1];
            int n = loader_chunk(&l, k, tok, tgt);
            row_text(tok, HT, t);
            row_text(tgt, HT, g);
            int targets = 0;
            for (int i = 0; i < HT; i++)
                targets += want[k][1][i] != '.';
            CHECK(!strcmp(t, want[k][0]) && !strcmp(g, want[k][1]) && n == targets &&
                      loader_targets(&l, k) == targets,
                  "%s row %d: \"%s\" → \"%s\" (%d targets), expected \"%s\" → \"%s\" (%d)",
                  at_end ? "end" : "start", k, t, g, n, want[k][0], want[k][1], targets);
        }
        loader_close(&l);
    }
}

/* One update's train/loss in documents packing is the mean over the
 * batch's real targets, across its two micro-batches: here every hand-made
 * document (4 + 16 + 1 + 16 = 37 targets), each row's loss worked out from
 * the initial model's logits, log-sum-exp by hand. */
static void test_documents_batch_loss(void)
{
    char d[512], run[512], err[512];
    snprintf(d, sizeof(d), "%s/hand-start", dir);
    snprintf(run, sizeof(run), "%s/hand-run", dir);
    struct job_spec s;
    if (hand_shards(d, 0) || hand_spec(&s, d))
        return;
    mkdir(run, 0755);
    struct train_opts o = {.ops = &ops_cpu, .progress_seconds = 1e9};
    int rc = train_run(&s, run, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_DONE, "%d %s", rc, err);
    struct model_config c = train_model_config(&s);
    struct model m;
    struct loader l;
    if (model_create(&m, &ops_cpu, &c, 1, err, sizeof(err)) ||
        model_init_weights(&m, s.train.seed, err, sizeof(err)) ||
        loader_open_spec(&l, &s, s.train_glob, "data.train", err, sizeof(err))) {
        CHECK(0, "%s", err);
        return;
    }
    int V = c.vocab;
    real *logits = malloc((size_t)HT * V * sizeof(real));
    double sum = 0;
    long count = 0;
    for (int k = 0; k < l.n_chunks; k++) {
        int32_t tok[HT], tgt[HT];
        loader_chunk(&l, k, tok, tgt);
        model_logits(&m, tok, tgt, 1, logits);
        for (int t = 0; t < HT; t++) {
            if (tgt[t] < 0)
                continue;
            const real *z = logits + (size_t)t * V;
            double mx = z[0], se = 0;
            for (int v = 1; v < V; v++)
                mx = z[v] > mx ? z[v] : mx;
            for (int v = 0; v < V; v++)
                se += exp(z[v] - mx);
            sum += mx + log(se) - z[tgt[t]];
            count++;
        }
    }
    free(logits);
    loader_close(&l);
    model_destroy(&m);
    double want = sum / 37, got = NAN;
    char path[700], line[512];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", run);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        char *at = strstr(line, "\"name\": \"train/loss\", \"value\": ");
        if (at)
            got = atof(at + strlen("\"name\": \"train/loss\", \"value\": "));
    }
    if (f)
        fclose(f);
    printf("  37 targets of 64 slots: train/loss %.7f, by hand %.7f\n", got, want);
    CHECK(count == 37 && fabs(got - want) < 1e-5 * want, "train/loss %.9g, by hand %.9g (%ld targets)",
          got, want, count);
    struct train_state st;
    json_t *spec = NULL;
    snprintf(path, sizeof(path), "%s/checkpoints/step_00000001", run);
    CHECK(checkpoint_read_state(path, &st, &spec, err, sizeof(err)) == 0 && st.tokens == 37,
          "state.json counts %lld tokens trained on, not 37: %s", st.tokens, err);
    json_decref(spec);
}

/* Evaluation in documents packing takes the held-out documents in shard
 * order, each once: its count of targets is the sum over the documents,
 * cut here from the shard's tokens independently of the loader, up to the
 * first that reaches eval.tokens, and over all of them (never one twice)
 * when eval.tokens is more than the set holds; the ranks of a gang share
 * them. */
static void test_documents_eval_once(void)
{
    /* 24 held-out documents of 2 to 31 tokens with their doc token, rows of
     * 16 targets: some padded, some cut */
    enum { N_EVAL = 24 };
    char d[512], err[512];
    snprintf(d, sizeof(d), "%s/evaldocs", dir);
    mkdir(d, 0755);
    static char text[N_EVAL * 32 + 1];
    long targets[N_EVAL];
    int n_docs = N_EVAL, at = 0;
    for (int k = 0; k < N_EVAL; k++) {
        int len = 2 + (k * 7) % 30;
        text[at++] = '|';
        for (int i = 1; i < len; i++)
            text[at++] = (char)('a' + (k + i) % 26);
        targets[k] = len - 1 < HT ? len - 1 : HT;
    }
    text[at] = 0;
    struct job_spec s;
    if (write_shard(d, "train_000.bin", text) || write_shard(d, "val_000.bin", text) ||
        write_file(d, "meta.json", "{\"vocab_size\": 257, \"doc_token\": 256}") ||
        hand_spec(&s, d))
        return;
    int T = s.train.seq_len;
    struct model_config c = train_model_config(&s);
    struct model m;
    struct loader l;
    if (model_create(&m, &ops_cpu, &c, s.train.micro_batch, err, sizeof(err)) ||
        model_init_weights(&m, 1, err, sizeof(err)) ||
        loader_open_spec(&l, &s, s.val_glob, "data.val", err, sizeof(err))) {
        CHECK(0, "%s", err);
        return;
    }
    int32_t *tok = malloc((size_t)m.max_B * T * sizeof(int32_t)),
            *tgt = malloc((size_t)m.max_B * T * sizeof(int32_t));
    /* at and around the end of each of the first documents, where a short
     * one makes whole documents differ from whole rows of T, and past the
     * whole set */
    int64_t asks[3 * 8 + 1], n_asks = 0, cum = 0;
    for (int k = 0; k < 8 && k < n_docs; k++) {
        cum += targets[k];
        for (int d = -1; d <= 1; d++)
            asks[n_asks++] = cum + d;
    }
    asks[n_asks++] = 1000000;
    for (int a = 0; a < n_asks; a++) {
        long want = 0;
        for (int k = 0; k < n_docs && want < asks[a]; k++)
            want += targets[k];
        double ref = 0;
        for (int world = 1; world <= 3; world++) {
            double sum = 0, part;
            int64_t count = 0, cnt;
            for (int r = 0; r < world; r++) {
                eval_shard(&m, &l, asks[a], r, world, tok, tgt, &part, &cnt);
                sum += part;
                count += cnt;
            }
            if (world == 1)
                ref = sum;
            CHECK(count == want && fabs(sum - ref) <= 1e-5 * ref,
                  "eval.tokens %lld over %d ranks: %lld targets (want %ld), loss sum %.9g (one "
                  "rank %.9g)",
                  (long long)asks[a], world, (long long)count, want, sum, ref);
        }
    }
    /* eval.train_tokens' sample: documents 0, 3, 6, … (each once) up to the
     * first that reaches the count asked, whatever the ranks; and the
     * stride that spreads a count over the whole set */
    long all = 0;
    for (int k = 0; k < n_docs; k++)
        all += targets[k];
    for (long ask = 1; ask <= all; ask += 7) {
        long want = 0;
        for (int k = 0; k < n_docs && want < ask; k += 3)
            want += targets[k];
        for (int world = 1; world <= 2; world++) {
            int64_t count = 0, cnt;
            double part;
            for (int r = 0; r < world; r++) {
                eval_sample_shard(&m, &l, ask, 3, r, world, tok, tgt, &part, &cnt);
                count += cnt;
            }
            CHECK(count == want, "a sample of every third document, %ld targets asked over %d "
                  "ranks: %lld targets (want %ld)", ask, world, (long long)count, want);
        }
    }
    CHECK(eval_sample_stride(&l, all / 4) == all / (all / 4) && eval_sample_stride(&l, all) == 1 &&
              eval_sample_stride(&l, 10 * all) == 1,
          "the sample's stride: %lld for a quarter of %ld targets, %lld for all of them",
          (long long)eval_sample_stride(&l, all / 4), all, (long long)eval_sample_stride(&l, all));
    printf("  %d held-out documents\n", n_docs);
    CHECK(l.n_chunks == n_docs, "the loader has %lld documents, not %d", (long long)l.n_chunks,
          n_docs);
    free(tok);
    free(tgt);
    loader_close(&l);
    model_destroy(&m);
}

/* Frozen gains (norm.gains), with weight decay on (in fp32, where it would
 * move a gain that the update touched): after training every RMSNorm gain
 * is exactly 1 with no Adam state, while every other tensor has moved; the
 * learned run's gains moved (resume_is_bit_exact's). */
static void test_frozen_gains_after_training(void)
{
    static const struct mode frozen = {"frozen", "{\"base\": \"lns\", \"gains\": \"frozen\"}",
                                       "documents", "mixed"};
    struct job_spec s;
    if (parse_mode(&s, 8, &frozen))
        return;
    s.train.weight_decay = 0.1;
    char run[512], ck[700], learned[700], err[512];
    snprintf(run, sizeof(run), "%s/frozen-wd", dir);
    snprintf(ck, sizeof(ck), "%s/checkpoints/step_00000008", run);
    snprintf(learned, sizeof(learned), "%s/straight-plain/checkpoints/step_00000008", dir);
    mkdir(run, 0755);
    struct train_opts o = {.ops = &ops_cpu, .progress_seconds = 1e9};
    int rc = train_run(&s, run, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_DONE, "%d %s", rc, err);
    struct model_config c = train_model_config(&s);
    struct model init, m, lm;
    struct train_state st;
    struct job_spec ls;
    if (model_create(&init, &ops_cpu, &c, 1, err, sizeof(err)) ||
        model_init_weights(&init, s.train.seed, err, sizeof(err)) ||
        model_create(&m, &ops_cpu, &c, 1, err, sizeof(err)) || parse(&ls, 8)) {
        CHECK(0, "%s", err);
        return;
    }
    struct model_config lc = train_model_config(&ls);
    real *am = calloc(m.n_params, sizeof(real)), *av = calloc(m.n_params, sizeof(real));
    if (model_create(&lm, &ops_cpu, &lc, 1, err, sizeof(err)) ||
        checkpoint_load(ck, &m, am, av, &st, NULL, err, sizeof(err)) ||
        checkpoint_load_weights(learned, &lm, err, sizeof(err))) {
        CHECK(0, "%s", err);
        return;
    }
    size_t gains = 0, gains_off = 0, learned_moved = 0, others = 0, others_moved = 0;
    for (int t = 0; t < m.n_tensors; t++) {
        const struct param_info *p = &m.info[t];
        int gain = p->kind == P_NORM_IN_ATTN || p->kind == P_NORM_IN_FFN ||
                   p->kind == P_FINAL_NORM;
        size_t moved = 0;
        for (size_t i = 0; i < p->n; i++) {
            size_t q = param_index(p, i);
            if (gain) {
                gains++;
                gains_off += m.params[q] != 1 || am[q] != 0 || av[q] != 0;
                learned_moved += lm.params[param_index(model_param(&lm, p->layer, p->kind), i)] != 1;
            }
            moved += m.params[q] != init.params[q];
        }
        /* the embedding rows of bytes the text never holds get no gradient */
        if (!gain)
            CHECK(moved > (p->kind == P_EMBED ? 0 : p->n / 2), "%s: %zu of %zu elements moved",
                  p->name, moved, (size_t)p->n);
        others += gain ? 0 : p->n;
        others_moved += gain ? 0 : moved;
    }
    CHECK(gains == 7 * 32 && gains_off == 0, "%zu of %zu frozen gains not 1 or with Adam state",
          gains_off, gains);
    CHECK(learned_moved > 0, "the learned gains never left 1: the check could not tell");
    printf("  %zu frozen gains at 1 (%zu learned ones moved); %zu of %zu other weights moved\n",
           gains, learned_moved, others_moved, others);
    free(am);
    free(av);
    model_destroy(&init);
    model_destroy(&m);
    model_destroy(&lm);
}

/* A meta.json that names a doc token the shards never hold: the run is
 * refused before any work, naming the set and the token. */
static void test_documents_without_boundaries(void)
{
    char d[300], cmd[1200], err[512];
    snprintf(d, sizeof(d), "%s/nodocs", dir);
    mkdir(d, 0755);
    snprintf(cmd, sizeof(cmd), "cp %s/train_000.bin %s/val_000.bin %s/", dir, dir, d);
    if (system(cmd) != 0 || write_file(d, "meta.json", "{\"vocab_size\": 257, \"doc_token\": 256}")) {
        CHECK(0, "setup");
        return;
    }
    char text[1400];
    snprintf(text, sizeof(text),
             "{\"model\": {\"dim\": 16, \"n_layers\": 1, \"n_heads\": 2, \"ffn_dim\": 32},"
             " \"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\","
             " \"packing\": \"documents\"}, \"train\": {\"steps\": 1, \"seq_len\": 16,"
             " \"batch_seqs\": 2}}",
             d, d);
    struct job_spec s;
    struct spec_error e;
    if (spec_parse(text, strlen(text), &s, &e) || spec_check_data(&s, &e)) {
        CHECK(0, "spec: %s: %s", e.field, e.message);
        return;
    }
    struct train_opts o = {.ops = &ops_cpu, .progress_seconds = 1e9};
    int rc = train_run(&s, d, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_FAILED && strstr(err, "train_*.bin") && strstr(err, "doc token 256"),
          "%d: %s", rc, err);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/cod-test-train-XXXXXX");
    if (!mkdtemp(dir) || write_text_shards(dir)) {
        printf("FAIL setup\n");
        return 1;
    }
    snprintf(docdir, sizeof(docdir), "%s/docs", dir);
    if (mkdir(docdir, 0755) || write_doc_shards(docdir)) {
        printf("FAIL setup of the documents\n");
        return 1;
    }
    RUN(test_schedule);
    RUN(test_loader_epochs);
    RUN(test_resume_is_bit_exact);
    RUN(test_documents_rows);
    RUN(test_documents_batch_loss);
    RUN(test_documents_eval_once);
    RUN(test_frozen_gains_after_training);
    RUN(test_documents_without_boundaries);
    RUN(test_resume_of_an_older_checkpoint);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    CHECK_EXIT();
}
