/* What the tests of cod-prep's pipeline (tests/unit/test_prep*.c) share: a
 * scratch directory, input files written into it, runs with small batches
 * and blocks, and the shards read back as tokens or as documents. */
#ifndef COD_TESTS_PREP_FIXTURE_H
#define COD_TESTS_PREP_FIXTURE_H

#include <dirent.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/shard.h"
#include "prep/prep_run.h"
#include "text/tokenizer.h"
#include "tests/check.h"

static char root[] = "/tmp/cod-test-prep-XXXXXX";

static inline void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", root, name);
    FILE *f = fopen(p, "w");
    CHECK(f, "cannot write %s", p);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static inline const char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, name);
    return buf[k];
}

static inline int count(const char *pattern)
{
    glob_t g;
    int n = glob(at(pattern), 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* Reads all shards matching DIR/SPLIT_*.bin into one stream. */
static inline uint32_t *read_split(const char *dir, const char *split, int64_t *n, int *shards)
{
    char pat[600], err[512];
    snprintf(pat, sizeof(pat), "%s/%s_*.bin", at(dir), split);
    char **paths;
    int np;
    *n = 0;
    *shards = 0;
    if (shard_glob(pat, &paths, &np, err, sizeof(err)) != 0)
        return NULL;
    uint32_t *out = NULL;
    for (int i = 0; i < np; i++) {
        struct shard s;
        CHECK(shard_open(&s, paths[i], err, sizeof(err)) == 0, "%s", err);
        if (!s.map)
            continue;
        uint32_t *grown = realloc(out, (size_t)(*n + s.n_tokens) * sizeof(uint32_t));
        if (!grown)
            abort();
        out = grown;
        for (int64_t k = 0; k < s.n_tokens; k++)
            out[(*n)++] = shard_token(&s, k);
        shard_close(&s);
        (*shards)++;
    }
    shard_free_paths(paths, np);
    return out;
}

/* Options for a test run: checked, two threads, every document cut, small
 * batches and blocks so that the parallel and streaming paths run. */
static inline void prep_defaults(struct prep_opts *o, const char *tok, const char *out, const char *const *in, int n)
{
    prep_opts_default(o);
    o->tokenizer = tok;
    o->out_dir = at(out);
    o->inputs = in;
    o->n_inputs = n;
    o->val_fraction = 0;
    o->progress = 0;
    o->verify = 1;
    o->threads = 2;
    o->chunk_bytes = 7;
    o->batch_bytes = 64;
    o->block_bytes = 32;
}

static inline int prep(const char *tok, const char *out, const char *const *in, int n, double val, int64_t shard_tokens,
                       char *err, size_t errlen)
{
    struct prep_opts o;
    prep_defaults(&o, tok, out, in, n);
    o.val_fraction = val;
    o.shard_tokens = shard_tokens;
    struct prep_result r;
    return prep_run(&o, &r, err, errlen);
}

static inline void put_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(at(name), "wb");
    CHECK(f, "cannot write %s", at(name));
    if (f) {
        CHECK(fwrite(data, 1, n, f) == n, "short write");
        fclose(f);
    }
}

/* The documents of a split made with the bytes tokenizer, each the text
 * after its doc token (256), NUL-terminated. */
struct docs {
    char **v;
    size_t n;
};

static inline struct docs read_docs(const char *dir, const char *split)
{
    struct docs d = {0};
    int64_t n;
    int shards;
    uint32_t *t = read_split(dir, split, &n, &shards);
    for (int64_t i = 0; t && i < n;) {
        CHECK(t[i] == 256, "%s/%s: token %lld is %u, not a doc token", dir, split, (long long)i, t[i]);
        int64_t j = i + 1;
        while (j < n && t[j] != 256)
            j++;
        char *text = malloc((size_t)(j - i));
        d.v = realloc(d.v, (d.n + 1) * sizeof(*d.v));
        if (!text || !d.v)
            abort();
        for (int64_t k = i + 1; k < j; k++)
            text[k - i - 1] = (char)t[k];
        text[j - i - 1] = 0;
        d.v[d.n++] = text;
        i = j;
    }
    free(t);
    return d;
}

static inline void docs_free(struct docs *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    memset(d, 0, sizeof(*d));
}

static inline int docs_has(const struct docs *d, const char *text)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->v[i], text))
            return 1;
    return 0;
}

static inline void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char p[1024];
                snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
                rm_rf(p);
            }
        if (d)
            closedir(d);
        rmdir(path);
    } else
        unlink(path);
}

/* The scratch directory made, and the gpt2 tokenizer's files fetched if
 * they are missing (the cases that use it fail without them). 0, or -1. */
static inline int prep_fixture_start(void)
{
    if (access(TOK_DEFAULT_DIR "/r50k_base.tiktoken", R_OK) != 0 && system("CORPUS_TOKENIZERS= scripts/corpus.sh >&2") != 0)
        fprintf(stderr, "scripts/corpus.sh failed: the gpt2 case will fail\n");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

#endif
