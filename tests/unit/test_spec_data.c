/* The data checks a spec's shards get before a run (trainer/data_check.c),
 * on real shard files: patterns, sizes, token ranges against the vocab,
 * and the documents' meta.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/shard.h"
#include "spec/spec.h"
#include "tests/check.h"
#include "tests/spec_check.h"
#include "trainer/data_check.h"

static char tmpdir[64];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static int write_tokens(const char *name, uint32_t lo, uint32_t hi, int64_t n)
{
    char p[256], err[256];
    path_in(p, sizeof(p), name);
    uint32_t *tok = malloc((size_t)n * sizeof(*tok));
    if (!tok)
        return -1;
    for (int64_t i = 0; i < n; i++)
        tok[i] = lo + (uint32_t)(i % (hi - lo + 1));
    tok[n - 1] = hi;
    int rc = shard_write(p, tok, n, hi > 65535 ? 4 : 2, err, sizeof(err));
    CHECK(rc == 0, "shard_write: %s", err);
    free(tok);
    return rc;
}

static void write_text(const char *name, const char *text)
{
    char p[256];
    path_in(p, sizeof(p), name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL, "fopen %s", p);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void remove_file(const char *name)
{
    char p[256];
    path_in(p, sizeof(p), name);
    unlink(p);
}

/* A spec over the temp dir's shards, optionally with an explicit vocab. */
static int data_spec(struct job_spec *s, const char *train, const char *val, int vocab)
{
    char json[1024];
    struct spec_error e;
    snprintf(json, sizeof(json),
             "{\"model\":{" CUSTOM "%s%.0d},\"data\":{\"train\":\"%s/%s\",\"val\":\"%s/%s\"}}",
             vocab ? ",\"vocab\":" : "", vocab, tmpdir, train, tmpdir, val);
    int rc = parse(json, s, &e);
    CHECK(rc == 0, "%s: %s", json, e.message);
    return rc;
}

static void expect_data(const char *train, const char *val, int vocab, int want_rc,
                        int want_vocab, const char *field, const char *needle)
{
    struct job_spec s;
    struct spec_error e;
    if (data_spec(&s, train, val, vocab))
        return;
    int rc = spec_check_data(&s, &e);
    CHECK(rc == want_rc, "%s %s vocab %d: rc %d (%s: %s)", train, val, vocab, rc, e.field,
          e.message);
    if (rc == 0 && want_rc == 0)
        CHECK(s.model.vocab == want_vocab, "%s %s: vocab %d, expected %d", train, val,
              s.model.vocab, want_vocab);
    if (rc == -1 && want_rc == -1) {
        CHECK(!strcmp(e.field, field), "field %s, expected %s (%s)", e.field, field, e.message);
        CHECK(strstr(e.message, needle) != NULL, "message \"%s\" lacks \"%s\"", e.message, needle);
    }
}

/* data.packing "documents" against meta.json (NULL: none): its doc token
 * must say where documents begin, refused naming the shard set otherwise. */
static void expect_docs(const char *meta, int want_rc, const char *field, const char *needle)
{
    if (meta)
        write_text("meta.json", meta);
    else
        remove_file("meta.json");
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"model\":{" CUSTOM "},\"data\":{\"train\":\"%s/train_*.bin\","
             "\"val\":\"%s/val_*.bin\",\"packing\":\"documents\"}}",
             tmpdir, tmpdir);
    struct job_spec s;
    struct spec_error e;
    if (parse(json, &s, &e)) {
        CHECK(0, "%s: %s", json, e.message);
        return;
    }
    int rc = spec_check_data(&s, &e);
    CHECK(rc == want_rc, "meta %s: rc %d (%s: %s)", meta ? meta : "(none)", rc, e.field,
          e.message);
    if (rc == -1 && want_rc == -1) {
        CHECK(!strcmp(e.field, field), "field %s, expected %s (%s)", e.field, field, e.message);
        CHECK(strstr(e.message, needle) != NULL, "message \"%s\" lacks \"%s\"", e.message, needle);
    }
}

static void test_check_data(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/cod_test_spec_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    /* max token 299 in train, 310 in val: vocab 311 from the scan */
    if (write_tokens("train_000.bin", 0, 299, 5000) ||
        write_tokens("train_001.bin", 5, 250, 3000) ||
        write_tokens("val_000.bin", 1, 310, 1000) || write_tokens("big_000.bin", 0, 70000, 100))
        goto out;
    expect_data("train_*.bin", "val_*.bin", 0, 0, 311, NULL, NULL);
    expect_data("train_*.bin", "val_*.bin", 311, 0, 311, NULL, NULL);
    expect_data("train_*.bin", "val_*.bin", 300, -1, 0, "model.vocab", "310");
    expect_data("big_*.bin", "val_*.bin", 0, 0, 70001, NULL, NULL);
    /* missing files name the pattern */
    expect_data("nope_*.bin", "val_*.bin", 0, -1, 0, "data.train", "nope_*.bin");
    expect_data("train_*.bin", "missing.bin", 0, -1, 0, "data.val", "missing.bin");
    /* a file that is not a shard is named */
    write_text("val_bad.bin", "not a shard");
    expect_data("train_*.bin", "val_*.bin", 0, -1, 0, "data.val", "val_bad.bin");
    remove_file("val_bad.bin");
    /* meta.json is trusted over the tokens */
    write_text("meta.json", "{\"vocab_size\": 32000, \"tokenizer\": \"llama\"}");
    expect_data("train_*.bin", "val_*.bin", 0, 0, 32000, NULL, NULL);
    expect_data("train_*.bin", "val_*.bin", 50000, 0, 50000, NULL, NULL);
    expect_data("train_*.bin", "val_*.bin", 1000, -1, 0, "model.vocab", "meta.json");
    write_text("meta.json", "{\"vocab_size\": \"many\"}");
    expect_data("train_*.bin", "val_*.bin", 0, -1, 0, "model.vocab", "vocab_size");
    write_text("meta.json", "{\"vocab");
    expect_data("train_*.bin", "val_*.bin", 0, -1, 0, "model.vocab", "meta.json");
    /* documents packing: shards without meta.json (llm.c's) declare no
     * document boundaries, nor does a meta.json without doc_token */
    expect_docs(NULL, -1, "data.train", "no meta.json");
    expect_docs("{\"vocab_size\": 400}", -1, "data.train", "\"doc_token\"");
    expect_docs("{\"vocab_size\": 400, \"doc_token\": 256}", 0, NULL, NULL);
    expect_docs("{\"vocab_size\": 400, \"doc_token\": 400}", -1, "data.train", "doc_token");
    expect_docs("{\"vocab_size\": 400, \"doc_token\": 1, \"doc_token_at\": \"end\", "
                "\"pad_token\": 0}", 0, NULL, NULL);
    expect_docs("{\"vocab_size\": 400, \"doc_token\": 1, \"doc_token_at\": \"middle\"}", -1,
                "data.train", "doc_token_at");
    expect_docs("{\"vocab_size\": 400, \"doc_token\": 1, \"pad_token\": -1}", -1, "data.train",
                "pad_token");
    remove_file("meta.json");
out:
    remove_file("train_000.bin");
    remove_file("train_001.bin");
    remove_file("val_000.bin");
    remove_file("big_000.bin");
    CHECK(rmdir(tmpdir) == 0, "rmdir %s", tmpdir);
}

int main(void)
{
    RUN(test_check_data);
    CHECK_EXIT();
}
