/* The tokenizers: known ids, hard cases against the reference packages,
 * lossless round trips on any bytes, document cuts, and clear errors for
 * missing or corrupt tokenizer files. The tokenizer files and the corpus
 * text come from scripts/corpus.sh, which this test runs (fetch only) when
 * they are missing; a case whose inputs are still missing fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "text/tokenizer.h"
#include "tests/check.h"

struct ref_case {
    const char *prefix, *unit;
    int rep;
    const char *suffix;
    const uint32_t *gpt2;
    size_t n_gpt2;
    const uint32_t *llama;
    size_t n_llama;
};
#define REF(a) a, sizeof(a) / sizeof(a[0])

/* Generated with node from gpt-tokenizer@4.0.0 (r50k_base, encode) and
 * llama-tokenizer-js@1.2.2 (encode(text, false, true): no BOS, dummy prefix). */
static const uint32_t ref_gpt2_0[] = {15496, 995};
static const uint32_t ref_llama_0[] = {15043, 3186};
static const uint32_t ref_gpt2_1[] = {15496, 995, 0};
static const uint32_t ref_llama_1[] = {15043, 3186, 29991};
static const uint32_t ref_gpt2_2[] = {40, 1183, 460, 470, 1839, 470, 484, 821, 356, 1053, 314, 1101, 339, 1549, 340, 338};
static const uint32_t ref_llama_2[] = {306, 29915, 645, 508, 29915, 29873, 2113, 29915, 29873, 896, 29915, 276, 591, 29915, 345, 306,
     29915, 29885, 540, 29915, 29881, 372, 29915, 29879};
static const uint32_t ref_gpt2_3[] = {6, 50, 705, 51, 705, 2200, 23917, 6, 51};
static const uint32_t ref_llama_3[] = {525, 29903, 525, 29911, 525, 1525, 360, 1164, 29915, 29911};
static const uint32_t ref_gpt2_4[] = {10163, 2231, 30924, 3829, 513, 13, 1415, 19707, 720, 16, 11, 830, 11, 830, 48609, 12,
     2713, 12, 1238};
static const uint32_t ref_llama_4[] = {29871, 29896, 29906, 29941, 29946, 29945, 29953, 29955, 29947, 29929, 29900, 29871, 29941, 29889, 29896, 29946,
     29896, 29945, 29929, 395, 29896, 29892, 29900, 29900, 29900, 29892, 29900, 29900, 29900, 29871, 29906, 29900,
     29906, 29946, 29899, 29900, 29945, 29899, 29906, 29900};
static const uint32_t ref_gpt2_5[] = {64, 220, 275, 220, 220, 269, 220, 220, 220, 288, 220, 220, 220, 220, 304};
static const uint32_t ref_llama_5[] = {263, 29871, 289, 259, 274, 1678, 270, 268, 321};
static const uint32_t ref_gpt2_6[] = {628, 198, 87, 198, 220, 198, 220, 220, 198, 197, 88};
static const uint32_t ref_llama_6[] = {29871, 13, 13, 13, 29916, 13, 29871, 13, 259, 13, 12, 29891};
static const uint32_t ref_gpt2_7[] = {9535, 4386, 9029, 220, 220, 220};
static const uint32_t ref_llama_7[] = {25053, 8162, 1678};
static const uint32_t ref_gpt2_8[] = {220, 220, 3756};
static const uint32_t ref_llama_8[] = {1678, 8236};
static const uint32_t ref_gpt2_9[] = {2616, 38776, 40304, 1168, 9116, 7527, 7377, 243, 39377, 39377, 138, 115, 26180, 29945, 43000, 138,
     105, 12466, 254, 35072, 21727, 21727, 31583, 18849, 140, 117, 10545, 245, 98, 17312, 105, 45739,
     252, 220, 47991, 250, 166, 113, 255, 168, 244, 112};
static const uint32_t ref_llama_9[] = {1055, 30085, 345, 274, 28059, 24931, 29871, 30311, 30142, 30142, 30183, 30133, 30136, 30173, 30216, 29006,
     2542, 29871, 30325, 30346, 30968, 29871, 30877, 31293, 31129};
static const uint32_t ref_gpt2_10[] = {368, 31370, 50169, 233, 8582, 234, 235, 290, 12520, 97, 244, 0};
static const uint32_t ref_llama_10[] = {953, 29877, 2397, 29871, 243, 162, 148, 142, 31494, 322, 29871, 243, 162, 167, 153, 29991};
static const uint32_t ref_gpt2_11[] = {8658, 82, 197, 392, 201, 198, 34, 7836, 37, 201, 198};
static const uint32_t ref_llama_11[] = {18859, 12, 392, 30004, 13, 29907, 2241, 29943, 30004, 13};
static const uint32_t ref_gpt2_12[] = {27, 91, 437, 1659, 5239, 91, 29, 14768, 2420};
static const uint32_t ref_llama_12[] = {529, 29989, 355, 974, 726, 29989, 29958, 27111, 1426};
static const uint32_t ref_gpt2_13[] = {24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794,
     24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794,
     24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794, 24794,
     24794, 24794};
static const uint32_t ref_llama_13[] = {263, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137,
     27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137,
     27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137, 27137,
     27137, 27137, 7340, 29874};
static const uint32_t ref_gpt2_14[] = {220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220,
     220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 220, 2124};
static const uint32_t ref_llama_14[] = {462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462, 462,
     462, 462, 632, 921};
static const uint32_t ref_gpt2_15[] = {397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397, 397,
     397, 397, 397, 397, 397, 397, 886};
static const uint32_t ref_llama_15[] = {633, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370, 370,
     370, 370, 370, 370, 370, 370, 1095};
static const uint32_t ref_gpt2_16[] = {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13};
static const uint32_t ref_llama_16[] = {450, 4996, 17354, 1701, 29916, 432, 17204, 975, 278, 17366, 11203, 29889};
static const struct ref_case ref_cases[] = {
    {"Hello world", "", 0, "", REF(ref_gpt2_0), REF(ref_llama_0)},
    {"Hello world!", "", 0, "", REF(ref_gpt2_1), REF(ref_llama_1)},
    {"I'll can't won't they're we've I'm he'd it's", "", 0, "", REF(ref_gpt2_2), REF(ref_llama_2)},
    {"'S 'T 'RE DON'T", "", 0, "", REF(ref_gpt2_3), REF(ref_llama_3)},
    {"1234567890 3.14159 $1,000,000 2024-05-20", "", 0, "", REF(ref_gpt2_4), REF(ref_llama_4)},
    {"a  b   c    d     e", "", 0, "", REF(ref_gpt2_5), REF(ref_llama_5)},
    {"\x0a""\x0a""\x0a""x\x0a"" \x0a""  \x0a""\x09""y", "", 0, "", REF(ref_gpt2_6), REF(ref_llama_6)},
    {"trailing spaces   ", "", 0, "", REF(ref_gpt2_7), REF(ref_llama_7)},
    {"   leading", "", 0, "", REF(ref_gpt2_8), REF(ref_llama_8)},
    {"na\xc3""\xaf""ve caf\xc3""\xa9"" Z\xc3""\xbc""rich \xce""\x95""\xce""\xbb""\xce""\xbb""\xce""\xb7""\xce""\xbd""\xce""\xb9""\xce""\xba""\xce""\xac"" \xd0""\xa0""\xd1""\x83""\xd1""\x81""\xd1""\x81""\xd0""\xba""\xd0""\xb8""\xd0""\xb9"" \xe6""\x97""\xa5""\xe6""\x9c""\xac""\xe8""\xaa""\x9e"" \xed""\x95""\x9c""\xea""\xb5""\xad""\xec""\x96""\xb4", "", 0, "", REF(ref_gpt2_9), REF(ref_llama_9)},
    {"emoji \xf0""\x9f""\x91""\x8b""\xf0""\x9f""\x8c""\x8d"" and \xf0""\x9f""\xa4""\x96""!", "", 0, "", REF(ref_gpt2_10), REF(ref_llama_10)},
    {"tabs\x09""and\x0d""\x0a""CRLF\x0d""\x0a", "", 0, "", REF(ref_gpt2_11), REF(ref_llama_11)},
    {"<|endoftext|> stays text", "", 0, "", REF(ref_gpt2_12), REF(ref_llama_12)},
    {"", "a", 200, "", REF(ref_gpt2_13), REF(ref_llama_13)},
    {"", " ", 300, "x", REF(ref_gpt2_14), REF(ref_llama_14)},
    {"", "ab", 150, " end", REF(ref_gpt2_15), REF(ref_llama_15)},
    {"The quick brown fox jumps over the lazy dog.", "", 0, "", REF(ref_gpt2_16), REF(ref_llama_16)},
};

static struct tokenizer *gpt2, *llama, *bytes;

/* A corpus document for the cut points (scripts/corpus.sh writes it). */
#define CUT_TEXT "var/corpus/default/train/gutenberg-carroll-alice.txt"

/* Whether every tokenizer opened: a case needing them fails, naming what is
 * missing, rather than pass having checked nothing. */
static int have_tokenizers(void)
{
    CHECK(gpt2, "no gpt2 tokenizer: " TOK_DEFAULT_DIR "/r50k_base.tiktoken missing or bad");
    CHECK(llama, "no llama tokenizer: " TOK_DEFAULT_DIR "/llama-vocab.txt or llama-merges.bin missing or bad");
    CHECK(bytes, "no bytes tokenizer");
    return gpt2 && llama && bytes;
}

static char *case_text(const struct ref_case *c, size_t *len)
{
    size_t n = strlen(c->prefix) + strlen(c->unit) * (size_t)c->rep + strlen(c->suffix);
    char *t = malloc(n + 1), *p = t;
    if (!t)
        abort();
    p = stpcpy(p, c->prefix);
    for (int i = 0; i < c->rep; i++)
        p = stpcpy(p, c->unit);
    stpcpy(p, c->suffix);
    *len = n;
    return t;
}

static int encode(struct tokenizer *t, const void *text, size_t len, unsigned flags, struct tok_ids *out)
{
    char err[512];
    struct tok_session *s = tok_session_new(t, err, sizeof(err));
    CHECK(s, "%s", err);
    if (!s)
        return -1;
    out->n = 0;
    int rc = tok_encode(s, text, len, flags, out, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    tok_session_free(s);
    return rc;
}

/* decode(encode(text)) == text, with the given flags on both sides. */
static void check_round_trip(struct tokenizer *t, const void *text, size_t len, unsigned flags, const char *what)
{
    struct tok_ids ids = {0};
    struct tok_text back = {0};
    char err[512];
    if (encode(t, text, len, flags, &ids) == 0) {
        int rc = tok_decode(t, ids.v, ids.n, flags, &back, err, sizeof(err));
        CHECK(rc == 0, "%s", err);
        CHECK(back.n == len && (len == 0 || memcmp(back.v, text, len) == 0),
              "%s: %s round trip gives %zu bytes for %zu", tokenizer_name(t), what, back.n, len);
        for (size_t i = 0; i < ids.n; i++)
            CHECK(ids.v[i] < tokenizer_vocab_size(t), "%s: id %u out of range", what, ids.v[i]);
    }
    tok_ids_free(&ids);
    tok_text_free(&back);
}

static void check_ids(struct tokenizer *t, const char *text, size_t len, const uint32_t *want, size_t n,
                      unsigned flags)
{
    struct tok_ids ids = {0};
    if (encode(t, text, len, flags, &ids) == 0) {
        int same = ids.n == n && memcmp(ids.v, want, n * sizeof(uint32_t)) == 0;
        CHECK(same, "%s: \"%.40s\"%s: %zu ids, reference %zu", tokenizer_name(t), text, len > 40 ? "..." : "",
              ids.n, n);
        for (size_t i = 0; !same && i < ids.n && i < n; i++)
            if (ids.v[i] != want[i]) {
                CHECK(0, "  first difference at %zu: %u, reference %u", i, ids.v[i], want[i]);
                break;
            }
    }
    tok_ids_free(&ids);
}

static void test_known_ids(void)
{
    if (!have_tokenizers())
        return;
    static const uint32_t hello[] = {15496, 995};
    check_ids(gpt2, "Hello world", 11, hello, 2, 0);
    /* The LLaMA tokenizer's "1 15043 3186 29991" includes the BOS that cod-prep writes as the doc token. */
    static const uint32_t hello_llama[] = {15043, 3186, 29991};
    check_ids(llama, "Hello world!", 12, hello_llama, 3, 0);
    CHECK(tokenizer_vocab_size(gpt2) == 50257 && tokenizer_doc_token(gpt2) == 50256, "gpt2 sizes");
    CHECK(tokenizer_vocab_size(llama) == 32000 && tokenizer_doc_token(llama) == 1, "llama sizes");
    CHECK(tokenizer_vocab_size(bytes) == 257 && tokenizer_doc_token(bytes) == 256, "bytes sizes");
}

/* Contractions, digits, runs of spaces and newlines, non-ASCII letters,
 * emoji, CRLF, long runs (the heap merge path), against the packages. */
static void test_reference_cases(void)
{
    if (!have_tokenizers())
        return;
    for (size_t i = 0; i < sizeof(ref_cases) / sizeof(ref_cases[0]); i++) {
        size_t len;
        char *t = case_text(&ref_cases[i], &len);
        check_ids(gpt2, t, len, ref_cases[i].gpt2, ref_cases[i].n_gpt2, 0);
        check_ids(llama, t, len, ref_cases[i].llama, ref_cases[i].n_llama, 0);
        check_round_trip(gpt2, t, len, 0, "reference case");
        check_round_trip(llama, t, len, 0, "reference case");
        check_round_trip(bytes, t, len, 0, "reference case");
        free(t);
    }
}

static void test_special_token(void)
{
    if (!have_tokenizers())
        return;
    const char *t = "a<|endoftext|>b";
    static const uint32_t special[] = {64, 50256, 65};
    static const uint32_t ordinary[] = {64, 27, 91, 437, 1659, 5239, 91, 29, 65};
    check_ids(gpt2, t, strlen(t), special, 3, TOK_ALLOW_SPECIAL);
    check_ids(gpt2, t, strlen(t), ordinary, 9, 0);
    check_round_trip(gpt2, t, strlen(t), TOK_ALLOW_SPECIAL, "special");
    check_round_trip(gpt2, t, strlen(t), 0, "special as text");
}

static void test_invalid_utf8(void)
{
#define S(x) {x, sizeof(x) - 1}
    static const struct {
        const char *s;
        size_t n;
    } cases[] = {
        S("\xff"), S("\xfe\xff abc"), S("caf\xc3"), S("\xc3\x28"), S("\xe2\x82"), S("\xed\xa0\x80 surrogate"),
        S("\xc0\xaf overlong"), S("\xf4\x90\x80\x80 too big"), S("ok \x80\x80\x80 ok"),
        S("\xe2\x96\x81 literal lower block"), S("mixed \xf0\x9f\x91 broken emoji \xf0\x9f\x91\x8b"),
        S("nul \0 inside"),
    };
#undef S
    if (!have_tokenizers())
        return;
    struct tokenizer *all[] = {gpt2, llama, bytes};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            check_round_trip(all[k], cases[i].s, cases[i].n, 0, cases[i].s);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Random bytes, and random text built from awkward pieces. */
static void test_fuzz_round_trip(void)
{
    static const char *const parts[] = {" ", "  ", "\n", "\r\n", "\t", "a", "Z", "'s", "'ll", "1", "42", ".", "!?",
                                        "é", "ß", "日本", "👋", "\xff", "\x80", "\xe2\x96\x81", "<|endoftext|>",
                                        "word", " word", "--", "\xc2\xa0"};
    if (!have_tokenizers())
        return;
    struct tokenizer *all[] = {gpt2, llama, bytes};
    unsigned char buf[2048];
    for (int round = 0; round < 60; round++) {
        size_t n = 0;
        if (round % 2) {
            n = next_rand() % sizeof(buf);
            for (size_t i = 0; i < n; i++)
                buf[i] = (unsigned char)next_rand();
        } else {
            while (n < sizeof(buf) - 16) {
                const char *p = parts[next_rand() % (sizeof(parts) / sizeof(parts[0]))];
                size_t l = strlen(p);
                memcpy(buf + n, p, l);
                n += l;
                if (next_rand() % 97 == 0)
                    break;
            }
        }
        for (size_t k = 0; k < 3; k++) {
            check_round_trip(all[k], buf, n, 0, "fuzz");
            check_round_trip(all[k], buf, n, TOK_CONTINUE, "fuzz (continue)");
        }
    }
}

/* Cutting a document at tok_split_point() and encoding the pieces with
 * TOK_CONTINUE must give the ids of the whole: cod-prep relies on it. */
static void test_split_points(void)
{
    unsigned char *text = NULL;
    size_t len = 0;
    char err[512];
    if (!have_tokenizers())
        return;
    if (fio_read_file(CUT_TEXT, &text, &len, err, sizeof(err)) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    if (len > 20000)
        len = 20000;
    struct tokenizer *all[] = {gpt2, llama, bytes};
    for (size_t k = 0; k < 3; k++) {
        struct tok_ids whole = {0}, parts = {0};
        encode(all[k], text, len, 0, &whole);
        struct tok_session *s = tok_session_new(all[k], err, sizeof(err));
        size_t off = 0, cuts = 0;
        while (s && off < len) {
            size_t cut = tok_split_point(text + off, len - off, 1 + next_rand() % 300);
            CHECK(cut > 0 && off + cut <= len, "cut %zu at %zu", cut, off);
            CHECK(tok_encode(s, text + off, cut, off ? TOK_CONTINUE : 0, &parts, err, sizeof(err)) == 0, "%s", err);
            off += cut;
            cuts++;
        }
        CHECK(cuts > 10, "only %zu cuts", cuts);
        CHECK(whole.n == parts.n && memcmp(whole.v, parts.v, whole.n * sizeof(uint32_t)) == 0,
              "%s: cut encoding differs (%zu vs %zu ids)", tokenizer_name(all[k]), parts.n, whole.n);
        tok_session_free(s);
        tok_ids_free(&whole);
        tok_ids_free(&parts);
    }
    free(text);
}

static void test_empty_and_decode_errors(void)
{
    if (!have_tokenizers())
        return;
    struct tokenizer *all[] = {gpt2, llama, bytes};
    for (size_t k = 0; k < 3; k++) {
        struct tok_ids ids = {0};
        encode(all[k], "", 0, 0, &ids);
        CHECK(ids.n == 0, "%s: empty text gives %zu ids", tokenizer_name(all[k]), ids.n);
        tok_ids_free(&ids);
        uint32_t bad[] = {5, tokenizer_vocab_size(all[k])};
        struct tok_text out = {0};
        char err[512] = "";
        CHECK(tok_decode(all[k], bad, 2, 0, &out, err, sizeof(err)) != 0, "%s: decoded an id past the vocabulary",
              tokenizer_name(all[k]));
        CHECK(strstr(err, "outside the vocabulary"), "message: %s", err);
        tok_text_free(&out);
    }
    char err[512];
    CHECK(!tokenizer_open("gpt5", NULL, 0, err, sizeof(err)), "unknown name accepted");
    CHECK(strstr(err, "unknown tokenizer 'gpt5'"), "message: %s", err);
    CHECK(!tokenizer_open("sentencepiece", NULL, 0, err, sizeof(err)), "sentencepiece opened without a model");
    CHECK(strstr(err, "--tokenizer-model"), "message: %s", err);
    CHECK(!tokenizer_open_model("/nonexistent/spiece.model", 0, err, sizeof(err)), "a missing model opened");
    CHECK(strstr(err, "/nonexistent/spiece.model: No such file"), "message: %s", err);
    /* a file that is not a serialized ModelProto */
    CHECK(!tokenizer_open_model(TOK_DEFAULT_DIR "/llama-vocab.txt", 0, err, sizeof(err)), "a vocabulary opened as a model");
    CHECK(strstr(err, "llama-vocab.txt: not a SentencePiece model"), "message: %s", err);
}

/* Every tokenizer here marks a document with a token before it and has no pad. */
static void test_doc_token_placement(void)
{
    struct tokenizer *all[] = {gpt2, llama, bytes};
    const uint32_t doc[] = {50256, 1, 256};
    for (size_t k = 0; k < 3; k++) {
        if (!all[k])
            continue;
        CHECK(tokenizer_doc_token(all[k]) == doc[k], "%s: doc token %u", tokenizer_name(all[k]),
              tokenizer_doc_token(all[k]));
        CHECK(tokenizer_doc_token_at(all[k]) == TOK_DOC_START, "%s: doc token after", tokenizer_name(all[k]));
        CHECK(tokenizer_pad_token(all[k]) == -1, "%s: pad %lld", tokenizer_name(all[k]),
              (long long)tokenizer_pad_token(all[k]));
        CHECK(tokenizer_can_cut(all[k]), "%s: cannot cut", tokenizer_name(all[k]));
    }
}

/* Writes a copy of the real tokenizer file SRC into DIR/NAME with a change. */
static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f, "cannot write %s", path);
    if (f) {
        CHECK(fwrite(p, 1, n, f) == n, "short write");
        fclose(f);
    }
}

static void expect_open_error(const char *name, const char *dir, unsigned flags, const char *needle)
{
    char err[1024] = "";
    struct tokenizer *t = tokenizer_open(name, dir, flags, err, sizeof(err));
    CHECK(!t, "%s opened from a broken %s (wanted: %s)", name, dir, needle);
    CHECK(strstr(err, needle), "message \"%s\" lacks \"%s\"", err, needle);
    tokenizer_close(t);
}

static void test_corrupt_files(void)
{
    char dir[] = "/tmp/cod-test-tok-XXXXXX", path[256], err[512];
    CHECK(mkdtemp(dir), "mkdtemp");
    expect_open_error("gpt2", dir, 0, "r50k_base.tiktoken: No such file");
    expect_open_error("llama", dir, 0, "llama-vocab.txt: No such file");
    unsigned char *tk = NULL, *vocab = NULL, *merges = NULL;
    size_t tn = 0, vn = 0, mn = 0;
    if (fio_read_file(TOK_DEFAULT_DIR "/r50k_base.tiktoken", &tk, &tn, err, sizeof(err)) != 0 ||
        fio_read_file(TOK_DEFAULT_DIR "/llama-vocab.txt", &vocab, &vn, err, sizeof(err)) != 0 ||
        fio_read_file(TOK_DEFAULT_DIR "/llama-merges.bin", &merges, &mn, err, sizeof(err)) != 0) {
        CHECK(0, "%s", err);
        goto out;
    }
    snprintf(path, sizeof(path), "%s/r50k_base.tiktoken", dir);
    /* Truncated mid-file. */
    write_file(path, tk, tn / 2);
    expect_open_error("gpt2", dir, 0, "sha256");
    expect_open_error("gpt2", dir, TOK_NO_CHECKSUM, "r50k_base.tiktoken:");
    /* One byte of base64 broken on the first line. */
    tk[0] = '*';
    write_file(path, tk, tn);
    expect_open_error("gpt2", dir, TOK_NO_CHECKSUM, ":1: bad base64");
    tk[0] = 'I';
    /* A rank that is not a number. */
    char *sp = memchr(tk, ' ', tn);
    sp[1] = 'x';
    write_file(path, tk, tn);
    expect_open_error("gpt2", dir, TOK_NO_CHECKSUM, ":1: rank is not a number");
    sp[1] = '0';
    /* Second line given the first line's rank. */
    char *l2 = memchr(tk, '\n', tn) + 1, *sp2 = memchr(l2, ' ', tn);
    sp2[1] = '0';
    write_file(path, tk, tn);
    expect_open_error("gpt2", dir, TOK_NO_CHECKSUM, ":2: rank 0 appears twice");
    sp2[1] = '1';
    write_file(path, tk, tn);
    struct tokenizer *ok = tokenizer_open("gpt2", dir, 0, err, sizeof(err));
    CHECK(ok, "restored file: %s", err);
    tokenizer_close(ok);

    snprintf(path, sizeof(path), "%s/llama-vocab.txt", dir);
    write_file(path, vocab, vn);
    snprintf(path, sizeof(path), "%s/llama-merges.bin", dir);
    write_file(path, merges, mn - 2);
    expect_open_error("llama", dir, TOK_NO_CHECKSUM, "not a whole number of 4-byte merges");
    merges[0] = 0xff, merges[1] = 0xff;
    write_file(path, merges, mn);
    expect_open_error("llama", dir, TOK_NO_CHECKSUM, "outside the vocabulary");
    expect_open_error("llama", dir, 0, "sha256");
    snprintf(path, sizeof(path), "%s/llama-vocab.txt", dir);
    size_t cut = vn / 2;
    while (cut > 0 && vocab[cut] != '\n')
        cut--;
    write_file(path, vocab, cut);
    expect_open_error("llama", dir, TOK_NO_CHECKSUM, "truncated or wrong file");
    write_file(path, vocab, vn / 2 + 1);
    expect_open_error("llama", dir, TOK_NO_CHECKSUM, "llama-vocab.txt:");
out:
    free(tk);
    free(vocab);
    free(merges);
    const char *names[] = {"r50k_base.tiktoken", "llama-vocab.txt", "llama-merges.bin"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    char err[1024];
    if (access(TOK_DEFAULT_DIR "/r50k_base.tiktoken", R_OK) != 0 ||
        access(TOK_DEFAULT_DIR "/llama-vocab.txt", R_OK) != 0 ||
        access(TOK_DEFAULT_DIR "/llama-merges.bin", R_OK) != 0 || access(CUT_TEXT, R_OK) != 0)
        if (system("CORPUS_TOKENIZERS= scripts/corpus.sh >&2") != 0)
            fprintf(stderr, "scripts/corpus.sh failed: the cases that need its files will fail\n");
    gpt2 = tokenizer_open("gpt2", NULL, 0, err, sizeof(err));
    if (!gpt2)
        fprintf(stderr, "%s\n", err);
    llama = tokenizer_open("llama", NULL, 0, err, sizeof(err));
    if (!llama)
        fprintf(stderr, "%s\n", err);
    bytes = tokenizer_open("bytes", NULL, 0, err, sizeof(err));
    RUN(test_known_ids);
    RUN(test_reference_cases);
    RUN(test_special_token);
    RUN(test_invalid_utf8);
    RUN(test_fuzz_round_trip);
    RUN(test_split_points);
    RUN(test_empty_and_decode_errors);
    RUN(test_doc_token_placement);
    RUN(test_corrupt_files);
    tokenizer_close(gpt2);
    tokenizer_close(llama);
    tokenizer_close(bytes);
    CHECK_EXIT();
}
