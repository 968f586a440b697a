/* The training loop on real English text (the GPL's text, which every
 * Debian machine has, as bytes): exact resume, the schedule, the data
 * loader's determinism and coverage, and the metrics file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/text_shards.h"
#include "trainer/data_check.h"
#include "trainer/dataloader.h"
#include "trainer/schedule.h"
#include "trainer/train.h"

static char dir[256];

static int parse(struct job_spec *s, long steps)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"name\": \"t\", \"model\": {\"dim\": 32, \"n_layers\": 3, \"n_heads\": 2,"
             " \"ffn_dim\": 64, \"vocab\": 256}, \"norm\": \"lns\","
             " \"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\"},"
             " \"train\": {\"steps\": %ld, \"seq_len\": 32, \"batch_seqs\": 8, \"micro_batch\": 4,"
             " \"lr\": 3e-3, \"warmup\": 2},"
             " \"eval\": {\"every\": 4, \"tokens\": 2048}, \"stats\": {\"every\": 2},"
             " \"checkpoint\": {\"every\": 0, \"keep\": 2}}",
             dir, dir, steps);
    struct spec_error e;
    if (spec_parse(text, strlen(text), s, &e) || spec_check_data(s, &e)) {
        CHECK(0, "spec: %s: %s", e.field, e.message);
        return -1;
    }
    return 0;
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

static void test_resume_is_bit_exact(void)
{
    struct job_spec s;
    if (parse(&s, 8))
        return;
    char a[512], b[512], err[512];
    snprintf(a, sizeof(a), "%s/straight", dir);
    snprintf(b, sizeof(b), "%s/halves", dir);
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
              strstr(ma, "\"step\": 8, \"name\": \"eval/ppl\""),
          "metrics hold train/loss, layer/out_var of every layer and eval/ppl");
    free(ma);
    free(mb);
    const char *files[] = {"model.safetensors", "optim.safetensors"};
    for (int i = 0; i < 2; i++) {
        char pa[700], pb[700];
        snprintf(pa, sizeof(pa), "%s/checkpoints/step_00000008/%s", a, files[i]);
        snprintf(pb, sizeof(pb), "%s/checkpoints/step_00000008/%s", b, files[i]);
        CHECK(same_file(pa, pb), "%s differs between straight and resumed runs", files[i]);
    }
    /* a resume under a changed spec is refused, naming the field */
    s.train.lr *= 2;
    rc = train_run(&s, b, &o, NULL, err, sizeof(err));
    CHECK(rc == TRAIN_FAILED && strstr(err, "\"train\""), "changed spec: %s", err);
}

static void test_schedule(void)
{
    double peak = 1e-3;
    CHECK(schedule_lr(peak, 10, 100, 0.1, 0) == 0, "warmup starts at 0");
    CHECK(fabs(schedule_lr(peak, 10, 100, 0.1, 5) - 5e-4) < 1e-15, "linear warmup");
    CHECK(fabs(schedule_lr(peak, 10, 100, 0.1, 10) - peak) < 1e-15, "peak after warmup");
    CHECK(fabs(schedule_lr(peak, 10, 100, 0.1, 99) - 1e-4) < 1e-15, "min_lr_ratio at the last step");
    double mid = schedule_lr(peak, 10, 100, 0.1, 10 + 89 / 2);
    CHECK(mid > 5.4e-4 && mid < 5.6e-4, "cosine midpoint %g", mid);
}

static void test_loader_epochs(void)
{
    char pat[512], err[256];
    snprintf(pat, sizeof(pat), "%s/train_*.bin", dir);
    struct loader l1, l2;
    CHECK(!loader_open(&l1, pat, 32, 5, err, sizeof(err)) &&
              !loader_open(&l2, pat, 32, 5, err, sizeof(err)), "%s", err);
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
    CHECK(loader_open(&l1, "/nonexistent/x_*.bin", 32, 1, err, sizeof(err)) == -1 &&
              strstr(err, "/nonexistent/x_*.bin"), "missing data named: %s", err);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/cod-test-train-XXXXXX");
    if (!mkdtemp(dir) || write_text_shards(dir)) {
        printf("FAIL setup\n");
        return 1;
    }
    RUN(test_schedule);
    RUN(test_loader_epochs);
    RUN(test_resume_is_bit_exact);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    CHECK_EXIT();
}
