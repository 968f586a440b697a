/* cod-prep's pipeline (prep/prep_run.c): shards that common/shard.h reads
 * back with the right header and tokens, shard cutting, the validation
 * split, meta.json, and failures that leave no shard under a final name;
 * JSON lines and the lines without text, compressed inputs, duplicates,
 * the hash split's stability, and --split paragraphs:N. */
#include <dirent.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/shard.h"
#include "text/jsonl.h"
#include "prep/prep_run.h"
#include "text/sha256.h"
#include "prep/shard_sink.h"
#include "text/tokenizer.h"
#include "tests/check.h"

static char root[] = "/tmp/cod-test-prep-XXXXXX";

static void put(const char *name, const char *text)
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

static const char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, name);
    return buf[k];
}

static int count(const char *pattern)
{
    glob_t g;
    int n = glob(at(pattern), 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* Reads all shards matching DIR/SPLIT_*.bin into one stream. */
static uint32_t *read_split(const char *dir, const char *split, int64_t *n, int *shards)
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
static void prep_defaults(struct prep_opts *o, const char *tok, const char *out, const char *const *in, int n)
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

static int prep(const char *tok, const char *out, const char *const *in, int n, double val, int64_t shard_tokens,
                char *err, size_t errlen)
{
    struct prep_opts o;
    prep_defaults(&o, tok, out, in, n);
    o.val_fraction = val;
    o.shard_tokens = shard_tokens;
    struct prep_result r;
    return prep_run(&o, &r, err, errlen);
}

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

static void put_bytes(const char *name, const void *data, size_t n)
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

static struct docs read_docs(const char *dir, const char *split)
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

static void docs_free(struct docs *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    memset(d, 0, sizeof(*d));
}

static int docs_has(const struct docs *d, const char *text)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->v[i], text))
            return 1;
    return 0;
}

/* One JSON line at a time: each fault kind, nested keys, escapes, and
 * what JSON allows that a careless reader refuses. */
static void test_json_lines(void)
{
    static const struct {
        const char *line, *key;
        enum jl_fault want;
        const char *text; /* JL_OK: the text; else a part of the message */
    } cases[] = {
        {"{\"text\": \"plain\"}", "text", JL_OK, "plain"},
        {"  {\"id\":1,\"text\":\"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00\"}\r", "text", JL_OK,
         "a\"b\\c/d\n\t\xc3\xa9\xf0\x9f\x98\x80"},
        {"{\"text\": \"caf\xc3\xa9 \xe2\x82\xac\"}", "text", JL_OK, "caf\xc3\xa9 \xe2\x82\xac"},
        {"{\"meta\": {\"body\": \"deep\", \"x\": [1, {\"y\": null}]}, \"text\": 5}", "meta.body", JL_OK, "deep"},
        {"{\"text\": \"first\", \"text\": \"last\"}", "text", JL_OK, "last"},
        /* a parent named twice: the last one's members count, as in jansson */
        {"{\"meta\": {\"body\": \"first\"}, \"meta\": {\"other\": 1}}", "meta.body", JL_MISSING_KEY,
         "no \"meta.body\" key"},
        {"{\"meta\": {\"body\": \"first\"}, \"meta\": 2}", "meta.body", JL_MISSING_KEY, "is a number"},
        {"{\"meta\": 2, \"meta\": {\"body\": \"last\"}}", "meta.body", JL_OK, "last"},
        {"{\"t\\u0065xt\": \"escaped key\"}", "text", JL_OK, "escaped key"},
        {"{\"a\": [1, -2.5e+3, 0.0, true, false, null, \"s\", {}, []], \"text\": \"ok\"}", "text", JL_OK, "ok"},
        {"{\"text\": \"unterminated}", "text", JL_MALFORMED, "unterminated string"},
        {"{\"text\": \"x\",}", "text", JL_MALFORMED, "expected a key"},
        {"{\"text\": \"x\"} trailing", "text", JL_MALFORMED, "more after the value"},
        {"", "text", JL_MALFORMED, "blank line"},
        {"   \r", "text", JL_MALFORMED, "blank line"},
        {"[\"text\"]", "text", JL_MALFORMED, "an array, not a JSON object"},
        {"\"text\"", "text", JL_MALFORMED, "a string, not a JSON object"},
        {"{\"text\": 01}", "text", JL_MALFORMED, "expected ',' or '}'"},
        {"{\"text\": tru}", "text", JL_MALFORMED, "unexpected character"},
        {"{\"text\": \"tab\there\"}", "text", JL_MALFORMED, "control character"},
        {"{\"text\": \"\\x\"}", "text", JL_MALFORMED, "bad escape"},
        {"{\"text\": \"\\ud800 alone\"}", "text", JL_MALFORMED, "high surrogate"},
        {"{\"text\": \"\\udc00\"}", "text", JL_MALFORMED, "low surrogate"},
        {"{\"title\": \"no text\"}", "text", JL_MISSING_KEY, "no \"text\" key"},
        {"{\"meta\": 3}", "meta.body", JL_MISSING_KEY, "(\"meta\" is a number)"},
        {"{\"meta\": {\"other\": 1}}", "meta.body", JL_MISSING_KEY, "no \"meta.body\" key"},
        {"{\"text\": 42}", "text", JL_NOT_STRING, "\"text\" is a number, not a string"},
        {"{\"text\": null}", "text", JL_NOT_STRING, "is null"},
        {"{\"text\": [\"a\"]}", "text", JL_NOT_STRING, "is an array"},
        {"{\"text\": \"bad \xff byte\"}", "text", JL_INVALID_UTF8, "invalid UTF-8 at column 15"},
        {"{\"text\": \"overlong \xc0\xaf\"}", "text", JL_INVALID_UTF8, "invalid UTF-8"},
        {"{\"text\": \"surrogate \xed\xa0\x80\"}", "text", JL_INVALID_UTF8, "invalid UTF-8"},
        {"{\"url\": \"\xe2\x82\", \"text\": \"fine\"}", "text", JL_INVALID_UTF8, "invalid UTF-8"},
        {"{\"text\": \"\"}", "text", JL_EMPTY, "\"text\" is empty"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct jl_key k;
        char err[256], why[400], *text;
        size_t n;
        CHECK(jl_key_parse(&k, cases[i].key, err, sizeof(err)) == 0, "%s", err);
        enum jl_fault f = jl_line_text(&k, cases[i].line, strlen(cases[i].line), &text, &n, why, sizeof(why));
        CHECK(f == cases[i].want, "line %zu (%s): %s, wanted %s (%s)", i, cases[i].line, jl_fault_name(f),
              jl_fault_name(cases[i].want), why);
        if (f == JL_OK && cases[i].want == JL_OK)
            CHECK(text && n == strlen(cases[i].text) && !memcmp(text, cases[i].text, n), "line %zu: text '%s'", i,
                  text ? text : "(null)");
        else
            CHECK(strstr(why, cases[i].text), "line %zu: message '%s' lacks '%s'", i, why, cases[i].text);
        free(text);
        jl_key_free(&k);
    }
    /* a NUL escaped is text like any other character */
    struct jl_key k;
    char err[256], why[400], *text;
    size_t n;
    CHECK(jl_key_parse(&k, "text", err, sizeof(err)) == 0, "%s", err);
    static const char nul[] = "{\"text\": \"a\\u0000b\"}";
    CHECK(jl_line_text(&k, nul, strlen(nul), &text, &n, why, sizeof(why)) == JL_OK && n == 3 && !memcmp(text, "a\0b", 3),
          "NUL: %s", why);
    free(text);
    /* nesting past the limit is refused, not a stack overflow */
    size_t deep = 100000;
    char *line = malloc(2 * deep + 16);
    if (line) {
        size_t m = (size_t)sprintf(line, "{\"a\":");
        memset(line + m, '[', deep);
        memset(line + m + deep, ']', deep);
        strcpy(line + m + 2 * deep, "}");
        CHECK(jl_line_text(&k, line, strlen(line), &text, &n, why, sizeof(why)) == JL_MALFORMED &&
                  strstr(why, "nested too deep"),
              "deep nesting: %s", why);
        free(line);
    }
    jl_key_free(&k);
    CHECK(jl_key_parse(&k, "a..b", err, sizeof(err)) != 0 && strstr(err, "empty part"), "key a..b: %s", err);
}

/* Each kind of bad line is counted and the first few reported with file
 * and line; --strict stops at the first. */
static void test_bad_lines(void)
{
    put_bytes("bad.jsonl",
              "{\"text\": \"good one\"}\n"           /* 1 */
              "{\"text\": \"unterminated\n"          /* 2 malformed */
              "{\"title\": \"no text\"}\n"           /* 3 missing key */
              "{\"text\": 42}\n"                     /* 4 not a string */
              "{\"text\": \"bad \xff utf8\"}\n"      /* 5 invalid UTF-8 */
              "{\"text\": \"\"}\n"                   /* 6 empty */
              "\n"                                   /* 7 malformed: blank */
              "[1, 2]\n"                             /* 8 malformed: not an object */
              "{\"meta\": {\"body\": \"nested\"}, \"text\": \"good two\"}\n" /* 9 */
              "{\"text\": \"tail without a newline\"}", /* 10 */
              strlen("{\"text\": \"good one\"}\n{\"text\": \"unterminated\n{\"title\": \"no text\"}\n{\"text\": 42}\n"
                     "{\"text\": \"bad \xff utf8\"}\n{\"text\": \"\"}\n\n[1, 2]\n"
                     "{\"meta\": {\"body\": \"nested\"}, \"text\": \"good two\"}\n"
                     "{\"text\": \"tail without a newline\"}"));
    const char *in[] = {at("bad.jsonl")};
    struct prep_opts o;
    prep_defaults(&o, "bytes", "outbad", in, 1);
    struct prep_result r;
    char err[1024];
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    CHECK(r.read == 3 && r.skipped_total == 7, "read %lld, skipped %lld", (long long)r.read, (long long)r.skipped_total);
    CHECK(r.skipped[JL_MALFORMED] == 3 && r.skipped[JL_MISSING_KEY] == 1 && r.skipped[JL_NOT_STRING] == 1 &&
              r.skipped[JL_INVALID_UTF8] == 1 && r.skipped[JL_EMPTY] == 1,
          "kinds %lld %lld %lld %lld %lld", (long long)r.skipped[JL_MALFORMED], (long long)r.skipped[JL_MISSING_KEY],
          (long long)r.skipped[JL_NOT_STRING], (long long)r.skipped[JL_INVALID_UTF8], (long long)r.skipped[JL_EMPTY]);
    static const int lines[] = {2, 3, 4, 5, 6, 7, 8};
    CHECK(r.n_shown == 7, "%d shown", r.n_shown);
    for (int i = 0; i < r.n_shown && i < 7; i++) {
        char want[600];
        snprintf(want, sizeof(want), "%s:%d: ", at("bad.jsonl"), lines[i]);
        CHECK(!strncmp(r.shown[i], want, strlen(want)), "shown[%d] = %s, wanted %s...", i, r.shown[i], want);
    }
    struct docs d = read_docs("outbad", "train");
    CHECK(d.n == 3 && docs_has(&d, "good one") && docs_has(&d, "good two") && docs_has(&d, "tail without a newline"),
          "%zu documents kept", d.n);
    docs_free(&d);
    json_t *m = json_load_file(at("outbad/meta.json"), 0, NULL);
    json_t *skipped = json_object_get(json_object_get(m, "input"), "lines_skipped");
    CHECK(json_integer_value(json_object_get(skipped, "malformed")) == 3 &&
              json_integer_value(json_object_get(skipped, "invalid UTF-8")) == 1,
          "meta.json's counts");
    json_decref(m);

    /* a nested key: the lines without it are counted as missing */
    o.text_key = "meta.body";
    o.out_dir = at("outbad2");
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    CHECK(r.read == 1 && r.skipped[JL_MISSING_KEY] == 5, "nested: read %lld, missing %lld", (long long)r.read,
          (long long)r.skipped[JL_MISSING_KEY]);
    d = read_docs("outbad2", "train");
    CHECK(d.n == 1 && docs_has(&d, "nested"), "nested text");
    docs_free(&d);

    /* --strict: the first bad line fails the run, naming it */
    o.text_key = NULL;
    o.strict = 1;
    o.out_dir = at("outbad3");
    CHECK(prep_run(&o, &r, err, sizeof(err)) != 0, "strict run succeeded");
    char want[600];
    snprintf(want, sizeof(want), "%s:2: malformed JSON: unterminated string", at("bad.jsonl"));
    CHECK(strstr(err, want), "strict: %s", err);
    CHECK(count("outbad3/*.bin") == 0 && count("outbad3/meta.json") == 0, "strict run left output");

    /* more bad lines than are shown: all counted */
    char many[64 * 30];
    size_t n = 0;
    for (int i = 0; i < 30; i++)
        n += (size_t)sprintf(many + n, i % 2 ? "{\"text\": %d}\n" : "{\"text\": \"kept %d\"}\n", i);
    put_bytes("many.jsonl", many, n);
    const char *in2[] = {at("many.jsonl")};
    prep_defaults(&o, "bytes", "outmany", in2, 1);
    CHECK(prep_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    CHECK(r.skipped[JL_NOT_STRING] == 15 && r.n_shown == PREP_SHOWN && r.read == 15, "many: %lld skipped, %d shown",
          (long long)r.skipped[JL_NOT_STRING], r.n_shown);
    snprintf(want, sizeof(want), "%s:20: \"text\" is a number, not a string", at("many.jsonl"));
    CHECK(!strcmp(r.shown[PREP_SHOWN - 1], want), "the tenth shown: %s", r.shown[PREP_SHOWN - 1]);
}

/* Compressed inputs: several members, frames and streams are one input;
 * a cut or corrupt file is an error that names it. */
static void test_compressed(void)
{
    put("z.jsonl", "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
    put("z2.jsonl", "{\"text\": \"three\"}\n");
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "cd %s && gzip -c z.jsonl > z.jsonl.gz && gzip -c z2.jsonl >> z.jsonl.gz && "
             "zstd -q -c z.jsonl > z.jsonl.zst && zstd -q -c z2.jsonl >> z.jsonl.zst && "
             "xz -c z.jsonl > z.jsonl.xz && xz -c z2.jsonl >> z.jsonl.xz && "
             "head -c 30 z.jsonl.gz > cut.jsonl.gz && head -c 20 z.jsonl.zst > cut.jsonl.zst && "
             "head -c 40 z.jsonl.xz > cut.jsonl.xz && cp z.jsonl bad.jsonl.gz && : > empty.jsonl.zst && "
             "printf 'a text document, compressed' | xz -c > doc.txt.xz",
             root);
    CHECK(system(cmd) == 0, "cannot make the compressed files (gzip, zstd, xz)");
    static const char *const ok[] = {"z.jsonl.gz", "z.jsonl.zst", "z.jsonl.xz"};
    char err[1024];
    for (int i = 0; i < 3; i++) {
        const char *in[] = {at(ok[i]), at("doc.txt.xz")};
        CHECK(prep("bytes", "outz", in, 2, 0, 1000, err, sizeof(err)) == 0, "%s: %s", ok[i], err);
        struct docs d = read_docs("outz", "train");
        CHECK(d.n == 4 && !strcmp(d.v[0], "one") && !strcmp(d.v[1], "two") && !strcmp(d.v[2], "three") &&
                  !strcmp(d.v[3], "a text document, compressed"),
              "%s: %zu documents", ok[i], d.n);
        docs_free(&d);
    }
    static const struct {
        const char *file, *needle;
    } bad[] = {{"cut.jsonl.gz", "cut.jsonl.gz: truncated gzip data"},
               {"cut.jsonl.zst", "cut.jsonl.zst: truncated zstd data"},
               {"cut.jsonl.xz", "cut.jsonl.xz: truncated xz data"},
               {"bad.jsonl.gz", "bad.jsonl.gz: corrupt gzip data"},
               {"empty.jsonl.zst", "empty.jsonl.zst: empty file, not zstd data"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *in[] = {at("z.jsonl"), at(bad[i].file)};
        CHECK(prep("bytes", "outzbad", in, 2, 0, 1000, err, sizeof(err)) != 0, "%s was read", bad[i].file);
        CHECK(strstr(err, bad[i].needle), "%s: message '%s'", bad[i].file, err);
        CHECK(count("outzbad/*.bin") == 0, "%s: shards left", bad[i].file);
    }
}

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

static void rm_rf(const char *path)
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

int main(void)
{
    if (access(TOK_DEFAULT_DIR "/r50k_base.tiktoken", R_OK) != 0 && system("CORPUS_TOKENIZERS= scripts/corpus.sh >&2") != 0)
        fprintf(stderr, "scripts/corpus.sh failed: the gpt2 case will fail\n");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_bytes_shards);
    RUN(test_gpt2_shards_read_back);
    RUN(test_shard_cutting);
    RUN(test_failures_leave_no_partial_output);
    RUN(test_json_lines);
    RUN(test_bad_lines);
    RUN(test_compressed);
    RUN(test_duplicates);
    RUN(test_stable_split);
    RUN(test_split_paragraphs);
    RUN(test_shard_sink);
    rm_rf(root);
    CHECK_EXIT();
}
