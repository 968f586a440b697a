/* Which documents cod-prep keeps and where (prep/doc_key.c,
 * prep/paragraphs.c): duplicates dropped, the held-out split chosen by
 * each document's hash and stable as inputs are added, and --split
 * paragraphs:N. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/prep_run.h"
#include "tests/check.h"
#include "tests/prep_fixture.h"
#include "text/sha256.h"
#include "text/tokenizer.h"

/* The same text up to whitespace is one document, kept the first time. */
static void test_duplicates(void)
{
    put("d1.txt", "Hello   world\n");
    put("d2.txt", "Hello world");
    put("d3.jsonl", "{\"text\": \"\\tHello\\nworld \"}\n{\"text\": \"another\"}\n{\"text\": \"another\"}\n");
    const char *in[] = {at("d1.txt"), at("d2.txt"), at("d3.jsonl")};
    struct prep_opts o;
    prep_defaults(&o, "bytes", "outdup", in, 3);
    struct prep_result r;
    char err[1024];
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    CHECK(r.read == 5 && r.duplicates == 3, "read %lld, duplicates %lld", (long long)r.read, (long long)r.duplicates);
    struct docs d = read_docs("outdup", "train");
    CHECK(d.n == 2 && !strcmp(d.v[0], "Hello   world\n") && !strcmp(d.v[1], "another"), "%zu kept", d.n);
    docs_free(&d);
    /* a held-out document's copy is dropped from training, not from val */
    put("dval.txt", "Hello world.");
    put("dtrain.txt", "Hello  world.");
    const char *tr[] = {at("dtrain.txt"), at("d3.jsonl")}, *va[] = {at("dval.txt")};
    prep_defaults(&o, "bytes", "outdup2", tr, 2);
    o.val_inputs = va;
    o.n_val_inputs = 1;
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    struct docs t = read_docs("outdup2", "train"), v = read_docs("outdup2", "val");
    CHECK(v.n == 1 && !strcmp(v.v[0], "Hello world.") && t.n == 2 && !docs_has(&t, "Hello  world."),
          "train %zu, val %zu", t.n, v.n);
    docs_free(&t);
    docs_free(&v);
}

/* Whether SHA-256 of text's whitespace-normalised form, its first 8 bytes
 * big-endian, is below fraction * 2^64: worked out here apart from
 * prep/doc_key.c. */
static int held_out(const char *text, double fraction)
{
    char norm[4096], hex[65];
    size_t n = 0;
    for (const char *p = text; *p;) {
        while (*p && strchr(" \t\n\r\v\f", *p))
            p++;
        if (!*p)
            break;
        if (n)
            norm[n++] = ' ';
        while (*p && !strchr(" \t\n\r\v\f", *p))
            norm[n++] = *p++;
    }
    CHECK(sha256_hex(norm, n, hex) == 0, "sha256");
    return strtoull((char[17]){hex[0], hex[1], hex[2], hex[3], hex[4], hex[5], hex[6], hex[7], hex[8], hex[9],
                               hex[10], hex[11], hex[12], hex[13], hex[14], hex[15], 0},
                    NULL, 16) < (unsigned long long)ldexp(fraction, 64);
}

/* The held-out documents are those their hash picks: adding inputs and
 * reordering them moves none between train and val. */
static void test_stable_split(void)
{
    char a[8192], b[8192];
    size_t na = 0, nb = 0;
    for (int i = 0; i < 150; i++)
        na += (size_t)sprintf(a + na, "{\"text\": \"document %d of the first file\"}\n", i);
    for (int i = 0; i < 150; i++)
        nb += (size_t)sprintf(b + nb, "{\"text\": \"document %d of the added file\"}\n", i);
    put_bytes("sa.jsonl", a, na);
    put_bytes("sb.jsonl", b, nb);
    put("sc.txt", "a text file among them");
    const char *one[] = {at("sa.jsonl"), at("sc.txt")}, *two[] = {at("sb.jsonl"), at("sc.txt"), at("sa.jsonl")};
    char err[1024];
    CHECK(prep("bytes", "outs1", one, 2, 0.2, 1000, err, sizeof(err)) == 0, "%s", err);
    CHECK(prep("bytes", "outs2", two, 3, 0.2, 1000, err, sizeof(err)) == 0, "%s", err);
    struct docs t1 = read_docs("outs1", "train"), v1 = read_docs("outs1", "val");
    struct docs t2 = read_docs("outs2", "train"), v2 = read_docs("outs2", "val");
    CHECK(t1.n + v1.n == 151 && t2.n + v2.n == 301, "documents %zu and %zu", t1.n + v1.n, t2.n + v2.n);
    CHECK(v1.n >= 15 && v1.n <= 45, "%zu of 151 held out at 0.2", v1.n);
    for (size_t i = 0; i < v1.n; i++)
        CHECK(docs_has(&v2, v1.v[i]) && held_out(v1.v[i], 0.2), "'%s' moved or was not to be held out", v1.v[i]);
    for (size_t i = 0; i < t1.n; i++)
        CHECK(docs_has(&t2, t1.v[i]) && !held_out(t1.v[i], 0.2), "'%s' moved or was to be held out", t1.v[i]);
    docs_free(&t1);
    docs_free(&v1);
    docs_free(&t2);
    docs_free(&v2);
    /* a run whose every document is held out has nothing to train on */
    const char *lone[] = {at("sc.txt")};
    CHECK(prep("bytes", "outs3", lone, 1, held_out("a text file among them", 0.5) ? 0.5 : 0.99, 1000, err,
               sizeof(err)) != 0 || !held_out("a text file among them", 0.99),
          "a run without training documents succeeded");
}

/* Paragraphs of random sizes, cut to N = 100 bytes (the bytes tokenizer:
 * a token a byte): no piece is longer, and only a paragraph over N is cut
 * inside; with gpt2 too, no paragraph shorter than N is cut. */
static void test_split_paragraphs(void)
{
    enum { N = 100, DOCS = 20 };
    unsigned seed = 12345;
    char text[DOCS][8192];
    char *paras[DOCS * 64];
    int np = 0;
    const char *in[DOCS];
    for (int d = 0; d < DOCS; d++) {
        size_t n = 0;
        int k = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 30;
        for (int p = 0; p < k; p++) {
            /* a unique mark, then words and now and then a line break; every seventh may be long */
            int len = 8 + (int)((seed = seed * 1103515245 + 12345) >> 16) % (p % 7 == 6 ? 400 : 90);
            if (p)
                n += (size_t)sprintf(text[d] + n, "%s", p % 3 ? "\n\n" : "\n \t\n\n");
            char *start = text[d] + n;
            n += (size_t)sprintf(text[d] + n, "P%d_%d", d, p);
            while ((int)(text[d] + n - start) < len) {
                int c = (int)(text[d] + n - start);
                int inner = c + 1 < len;
                text[d][n++] = inner && c % 9 == 0 ? ' ' : inner && c % 37 == 0 ? '\n' : (char)('a' + (d + p + c) % 26);
            }
            text[d][n] = 0;
            paras[np++] = strdup(start);
        }
        char name[32];
        snprintf(name, sizeof(name), "p%02d.txt", d);
        put(name, text[d]);
        in[d] = strdup(at(name));
    }
    put("small.txt", "\n  a short document\n\nin two paragraphs  \n");
    struct prep_opts o;
    prep_defaults(&o, "bytes", "outp", in, DOCS);
    o.split_tokens = N;
    struct prep_result r;
    char err[1024];
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    struct docs out = read_docs("outp", "train");
    CHECK(r.cut > 0 && out.n > DOCS, "%lld documents cut into %zu", (long long)r.cut, out.n);
    for (size_t i = 0; i < out.n; i++)
        CHECK(strlen(out.v[i]) <= N, "piece %zu has %zu tokens", i, strlen(out.v[i]));
    /* every paragraph up to N is whole inside one piece, and only a longer one is cut */
    for (int p = 0; p < np; p++) {
        int whole = 0;
        for (size_t i = 0; i < out.n && !whole; i++) {
            const char *hit = strstr(out.v[i], paras[p]);
            /* its mark is unique; bounded by the piece's ends or by a line break */
            whole = hit && (hit == out.v[i] || hit[-1] == '\n') &&
                    (hit[strlen(paras[p])] == 0 || hit[strlen(paras[p])] == '\n');
        }
        if (strlen(paras[p]) <= N)
            CHECK(whole, "paragraph %d (%zu bytes) was cut", p, strlen(paras[p]));
        else
            CHECK(!whole, "paragraph %d (%zu bytes) was not cut", p, strlen(paras[p]));
    }
    /* greedy: a piece ends only where the next paragraph of its document
     * would take it past N (separators are 2 to 5 bytes) */
    for (size_t i = 0; i + 1 < out.n; i++) {
        int da, pa, db, pb;
        if (sscanf(out.v[i], "P%d_%d", &da, &pa) != 2 || sscanf(out.v[i + 1], "P%d_%d", &db, &pb) != 2 || db != da)
            continue;
        int k = 0;
        while (k < np && strncmp(paras[k], out.v[i + 1], strlen(paras[k])) != 0)
            k++;
        if (k == np || strlen(paras[k]) > N)
            continue;
        CHECK(strlen(out.v[i]) + 5 + strlen(paras[k]) > N, "piece %zu (%zu bytes) ended before paragraph %d (%zu)", i,
              strlen(out.v[i]), k, strlen(paras[k]));
    }
    docs_free(&out);
    /* a document within N is left as it was */
    const char *small[] = {at("small.txt")};
    prep_defaults(&o, "bytes", "outp2", small, 1);
    o.split_tokens = N;
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    out = read_docs("outp2", "train");
    CHECK(out.n == 1 && !strcmp(out.v[0], "\n  a short document\n\nin two paragraphs  \n"), "small document changed");
    docs_free(&out);
    /* gpt2: the same documents, no paragraph under N tokens cut */
    if (access(TOK_DEFAULT_DIR "/r50k_base.tiktoken", R_OK) == 0) {
        prep_defaults(&o, "gpt2", "outp3", in, DOCS);
        o.split_tokens = 30;
        CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
        int64_t n;
        int shards;
        uint32_t *t = read_split("outp3", "train", &n, &shards);
        int64_t longest = 0;
        for (int64_t i = 0, start = 0; t && i <= n; i++)
            if (i == n || t[i] == 50256) {
                if (i - start - 1 > longest)
                    longest = i - start - 1;
                start = i;
            }
        CHECK(longest <= 32, "a gpt2 piece of %lld tokens (N = 30)", (long long)longest);
        CHECK(r.split[0].documents > r.read, "gpt2: %lld pieces of %lld documents", (long long)r.split[0].documents,
              (long long)r.read);
        free(t);
    }
    for (int p = 0; p < np; p++)
        free(paras[p]);
    for (int d = 0; d < DOCS; d++)
        free((void *)in[d]);
}

int main(void)
{
    if (prep_fixture_start() != 0)
        return 1;
    RUN(test_duplicates);
    RUN(test_stable_split);
    RUN(test_split_paragraphs);
    rm_rf(root);
    CHECK_EXIT();
}
