/* What cod-prep reads (prep/inputs.c, prep/reader.c, text/jsonl.c): JSON
 * lines one at a time, the lines without text counted and shown with file
 * and line, and compressed inputs. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/prep_run.h"
#include "tests/check.h"
#include "tests/prep_fixture.h"
#include "text/jsonl.h"

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

int main(void)
{
    if (prep_fixture_start() != 0)
        return 1;
    RUN(test_json_lines);
    RUN(test_bad_lines);
    RUN(test_compressed);
    rm_rf(root);
    CHECK_EXIT();
}
