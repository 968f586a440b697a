/* cod-prep's run (prep/prep_run.h) and its output: shards that
 * common/shard.h reads back with the right header and tokens, shard cutting,
 * meta.json, failures that leave no shard under a final name, and the
 * shard sink. Its inputs: test_prep_inputs.c; which documents go where:
 * test_prep_split.c. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/shard.h"
#include "prep/prep_run.h"
#include "prep/shard_sink.h"
#include "tests/check.h"
#include "tests/prep_fixture.h"
#include "text/tokenizer.h"

static void test_bytes_shards(void)
{
    put("a.txt", "alpha beta gamma");
    put("b.txt", "de\xff\n");
    const char *in[] = {at("a.txt"), at("b.txt")};
    char err[1024];
    int rc = prep("bytes", "out1", in, 2, 0, 1000, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    int64_t n;
    int shards;
    uint32_t *t = read_split("out1", "train", &n, &shards);
    CHECK(shards == 1 && n == 1 + 16 + 1 + 4, "%d shards, %lld tokens", shards, (long long)n);
    if (t && n == 22) {
        CHECK(t[0] == 256 && t[17] == 256, "doc tokens %u %u", t[0], t[17]);
        CHECK(t[1] == 'a' && t[16] == 'a' && t[20] == 0xff && t[21] == '\n', "token values");
    }
    free(t);
    CHECK(count("out1/val_*.bin") == 0, "val shards without val documents");
    /* The header says what the file holds. */
    FILE *f = fopen(at("out1/train_000000.bin"), "rb");
    int32_t h[3] = {0};
    if (f) {
        CHECK(fread(h, 4, 3, f) == 3, "short header");
        fclose(f);
    }
    CHECK(h[0] == 20240520 && h[1] == 1 && h[2] == 22, "header %d %d %d", h[0], h[1], h[2]);
    json_error_t je;
    json_t *m = json_load_file(at("out1/meta.json"), 0, &je);
    CHECK(m, "meta.json: %s", je.text);
    if (m) {
        CHECK(json_integer_value(json_object_get(m, "vocab_size")) == 257, "vocab_size");
        CHECK(!strcmp(json_string_value(json_object_get(m, "tokenizer")), "bytes"), "tokenizer");
        CHECK(json_integer_value(json_object_get(json_object_get(m, "train"), "tokens")) == 22, "train tokens");
        CHECK(json_integer_value(json_object_get(json_object_get(m, "train"), "documents")) == 2, "documents");
        json_decref(m);
    }
    CHECK(access(at("out1/sources.txt"), R_OK) == 0, "no sources.txt");
}

static void test_gpt2_shards_read_back(void)
{
    put("g1.txt", "Hello world");
    put("g2.txt", "Hello world!");
    const char *in[] = {at("g1.txt"), at("g2.txt")};
    char err[1024];
    if (access(TOK_DEFAULT_DIR "/r50k_base.tiktoken", R_OK) != 0) {
        CHECK(0, "no %s/r50k_base.tiktoken (run scripts/corpus.sh)", TOK_DEFAULT_DIR);
        return;
    }
    CHECK(prep("gpt2", "outg", in, 2, 0, 1000, err, sizeof(err)) == 0, "%s", err);
    int64_t n;
    int shards;
    uint32_t *t = read_split("outg", "train", &n, &shards);
    static const uint32_t want[] = {50256, 15496, 995, 50256, 15496, 995, 0};
    CHECK(n == 7 && t && !memcmp(t, want, sizeof(want)), "%lld tokens", (long long)n);
    free(t);
    json_t *m = json_load_file(at("outg/meta.json"), 0, NULL);
    CHECK(m && json_integer_value(json_object_get(m, "vocab_size")) == 50257, "vocab_size");
    CHECK(m && json_integer_value(json_object_get(m, "token_bytes")) == 2, "token_bytes");
    json_decref(m);
}

/* Shards are cut at exactly shard_tokens; documents run across them. */
static void test_shard_cutting(void)
{
    char name[32], text[64];
    const char *in[10];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "c%d.txt", i);
        snprintf(text, sizeof(text), "document number %d", i);
        put(name, text);
        in[i] = strdup(at(name));
    }
    char err[1024];
    struct prep_opts o;
    prep_defaults(&o, "bytes", "out2", in, 9);
    o.val_inputs = in + 9;
    o.n_val_inputs = 1;
    o.shard_tokens = 16;
    struct prep_result r;
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    int64_t n, nv;
    int shards, vshards;
    uint32_t *t = read_split("out2", "train", &n, &shards);
    uint32_t *v = read_split("out2", "val", &nv, &vshards);
    /* The last document, given as --val, is held out. */
    CHECK(nv == 1 + 17 && vshards == 2, "val: %lld tokens in %d shards", (long long)nv, vshards);
    CHECK(n == 9 * 18 && shards == 11, "train: %lld tokens in %d shards", (long long)n, shards);
    for (int i = 0; i < 9 && t && n == 9 * 18; i++)
        CHECK(t[18 * i] == 256 && t[18 * i + 17] == (uint32_t)('0' + i), "document %d misplaced", i);
    if (v && nv == 18)
        CHECK(v[17] == '9', "val document is not the tenth");
    struct shard s;
    CHECK(shard_open(&s, at("out2/train_000000.bin"), err, sizeof(err)) == 0 && s.n_tokens == 16, "first shard");
    shard_close(&s);
    free(t);
    free(v);
    /* A second run with fewer shards replaces the old set entirely. */
    CHECK(prep("bytes", "out2", in, 10, 0, 1000, err, sizeof(err)) == 0, "%s", err);
    CHECK(count("out2/train_*.bin") == 1 && count("out2/val_*.bin") == 0, "stale shards left: %d train, %d val",
          count("out2/train_*.bin"), count("out2/val_*.bin"));
    for (int i = 0; i < 10; i++)
        free((void *)in[i]);
}

/* Nothing in OUT may change when a run fails, and no staging is left. */
static void check_untouched(const char *out, const char *meta_before)
{
    CHECK(count("out3/.cod-prep-*") == 0, "staging directory left behind");
    char *m = NULL;
    FILE *f = fopen(at("out3/meta.json"), "r");
    if (f) {
        m = calloc(1, 1 << 16);
        if (m && fread(m, 1, (1 << 16) - 1, f) == 0)
            m[0] = 0;
        fclose(f);
    }
    CHECK(m && meta_before && !strcmp(m, meta_before), "%s: meta.json changed by a failed run", out);
    CHECK(count("out3/train_*.bin") == 1, "%s: shard set changed", out);
    free(m);
}

static void expect_fail(const char *tok, const char *const *in, int n, const char *needle, const char *meta)
{
    char err[1024] = "";
    struct prep_opts o;
    prep_opts_default(&o);
    o.tokenizer = tok;
    o.out_dir = at("out3");
    o.inputs = in;
    o.n_inputs = n;
    o.val_fraction = 0;
    o.shard_tokens = 8;
    o.progress = 0;
    o.batch_bytes = 1; /* one document per round: shards exist in staging before the failure */
    struct prep_result r;
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0, "run succeeded (wanted: %s)", needle);
    CHECK(strstr(err, needle), "message \"%s\" lacks \"%s\"", err, needle);
    check_untouched("out3", meta);
}

static void test_failures_leave_no_partial_output(void)
{
    put("ok.txt", "some text that makes several shards of eight tokens");
    put("empty.txt", "");
    const char *good[] = {at("ok.txt")};
    char err[1024];
    CHECK(prep("bytes", "out3", good, 1, 0, 1000, err, sizeof(err)) == 0, "%s", err);
    char meta[1 << 16] = "";
    FILE *f = fopen(at("out3/meta.json"), "r");
    if (f) {
        size_t got = fread(meta, 1, sizeof(meta) - 1, f);
        meta[got] = 0;
        fclose(f);
    }
    const char *missing[] = {at("ok.txt"), at("nope.txt")};
    expect_fail("bytes", missing, 2, "nope.txt: No such file or directory", meta);
    const char *empty[] = {at("ok.txt"), at("empty.txt")};
    expect_fail("bytes", empty, 2, "empty.txt: empty file", meta);
    /* Opens fine, fails on read (EIO), even for root. */
    const char *unreadable[] = {at("ok.txt"), "/proc/self/mem"};
    expect_fail("bytes", unreadable, 2, "/proc/self/mem: read:", meta);
    mkdir(at("emptydir"), 0755);
    const char *dir[] = {at("emptydir")};
    expect_fail("bytes", dir, 1, "holds no files", meta);
    const char *ok[] = {at("ok.txt")};
    expect_fail("nonsense", ok, 1, "unknown tokenizer", meta);

    struct prep_opts o;
    prep_opts_default(&o);
    o.tokenizer = "gpt2";
    o.tokenizer_dir = at("emptydir");
    o.out_dir = at("out3");
    o.inputs = ok;
    o.n_inputs = 1;
    o.progress = 0;
    struct prep_result r;
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0 && strstr(err, "r50k_base.tiktoken: No such file"), "%s", err);
    check_untouched("out3", meta);
    o.tokenizer = "bytes";
    o.shard_tokens = 1;
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0 && strstr(err, "shard size"), "%s", err);
    o.shard_tokens = 100;
    o.val_fraction = 1.5;
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0 && strstr(err, "fraction"), "%s", err);
    o.val_fraction = 0;
    o.out_dir = at("ok.txt/sub"); /* a file where a directory should be */
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0 && strstr(err, "ok.txt"), "%s", err);
}

/* A document's tokens stream into shards: exactly `limit` each, the last
 * taking the rest, at least 2, at most limit + 1. */
static void test_shard_sink(void)
{
    static const struct {
        size_t appends[4];
        int64_t want[4];
    } cases[] = {
        {{4, 1}, {5}},
        {{4, 2}, {4, 2}},
        {{3, 3, 3}, {4, 4, 1 + 0}}, /* 9: 4, then 5 as the last */
        {{2}, {2}},
        {{12, 1}, {4, 4, 5}},
    };
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/sink", root);
    mkdir(dir, 0755);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct shard_sink s;
        char err[512];
        sink_init(&s, dir, "t", 2, 4);
        uint32_t tok[16];
        for (int i = 0; i < 16; i++)
            tok[i] = (uint32_t)i;
        int64_t total = 0;
        for (int a = 0; a < 4 && cases[c].appends[a]; a++) {
            CHECK(sink_append(&s, tok, cases[c].appends[a], err, sizeof(err)) == 0, "%s", err);
            total += (int64_t)cases[c].appends[a];
        }
        CHECK(sink_finish(&s, err, sizeof(err)) == 0, "%s", err);
        int64_t seen = 0;
        for (int i = 0; i < s.shards; i++) {
            char p[700];
            snprintf(p, sizeof(p), "%s/t_%06d.bin", dir, i);
            struct shard sh;
            CHECK(shard_open(&sh, p, err, sizeof(err)) == 0, "%s", err);
            CHECK(sh.n_tokens >= 2 && sh.n_tokens <= 5, "case %zu shard %d: %lld tokens", c, i, (long long)sh.n_tokens);
            CHECK(i == s.shards - 1 || sh.n_tokens == 4, "case %zu shard %d: %lld tokens", c, i, (long long)sh.n_tokens);
            seen += sh.n_tokens;
            shard_close(&sh);
            unlink(p);
        }
        CHECK(seen == total, "case %zu: %lld of %lld tokens", c, (long long)seen, (long long)total);
    }
    rmdir(dir);
}

int main(void)
{
    if (prep_fixture_start() != 0)
        return 1;
    RUN(test_bytes_shards);
    RUN(test_gpt2_shards_read_back);
    RUN(test_shard_cutting);
    RUN(test_failures_leave_no_partial_output);
    RUN(test_shard_sink);
    rm_rf(root);
    CHECK_EXIT();
}
