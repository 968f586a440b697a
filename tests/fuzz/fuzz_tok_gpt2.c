/* libFuzzer harness: the GPT-2 tokenizer's loader (text/bpe_gpt2.c), which
 * reads r50k_base.tiktoken ("base64 rank" lines, exactly 50256 of them).
 * The file is a made-up byte-level vocabulary of that size (the 256 bytes,
 * then pairs and triples of common characters) whose first lines the input
 * replaces (fuzz_overlay_lines); after a line "--text--" the rest of the
 * input is text to encode with the loaded tokenizer (a fixed sample
 * without one). Checks tokenizer.h's promise that encoding is lossless,
 * which holds for any vocabulary the loader accepts: every byte has a
 * token and every merge yields the token spelling its two halves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/tok_round_trip.h"

#define RANKS 50256

static char *base;
static size_t base_n;
static char dir[300], path[400];

static size_t b64(const unsigned char *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = a[w >> 18 & 63];
        out[o++] = a[w >> 12 & 63];
        out[o++] = i + 1 < n ? a[w >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? a[w & 63] : '=';
    }
    return o;
}

/* The made-up vocabulary: bytes by rank, then every pair of bytes in order
 * of a rough English frequency, then triples (a pair and one more). */
static void make_base(void)
{
    static const char common[] = " etaoinshrdlucmfwypvbgkjqxz.,ETAOINSHRDLUCMFWYPVBGKJQXZ0123456789'\n";
    unsigned char order[256];
    int seen[256] = {0}, k = 0;
    for (const char *c = common; *c; c++)
        if (!seen[(unsigned char)*c]++)
            order[k++] = (unsigned char)*c;
    for (int b = 0; b < 256; b++)
        if (!seen[b])
            order[k++] = (unsigned char)b;
    base = malloc((size_t)RANKS * 20);
    if (!base)
        fuzz_die("out of memory");
    unsigned char tok[3];
    for (int rank = 0; rank < RANKS; rank++) {
        size_t len;
        if (rank < 256) {
            tok[0] = (unsigned char)rank;
            len = 1;
        } else if (rank < 40256) {
            int p = rank - 256;
            tok[0] = order[p / 256];
            tok[1] = order[p % 256];
            len = 2;
        } else {
            int p = rank - 40256;
            tok[0] = order[p / 256];
            tok[1] = order[p % 256];
            tok[2] = order[p % 27];
            len = 3;
        }
        base_n += b64(tok, len, base + base_n);
        base_n += (size_t)sprintf(base + base_n, " %d\n", rank);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    make_base();
    fuzz_subdir(dir, sizeof dir, "tokenizers");
    snprintf(path, sizeof path, "%s/r50k_base.tiktoken", dir);
    return 0;
}

/* Encodes text, decodes the ids, and insists on getting the text back. */
static void round_trip(struct tokenizer *t, const unsigned char *text, size_t n)
{
    struct tok_text back;
    tok_round_trip(t, text, n, TOK_ALLOW_SPECIAL, &back);
    if (back.n != n || (n && memcmp(back.v, text, n)))
        fuzz_die("gpt2: decode(encode(text)) is not the text (%zu bytes, %zu back)", n, back.n);
    tok_text_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sample[] = "The Curse of Depth: deeper layers <|endoftext|> contribute "
                                 "less.\n\n  Ünïcödé, 数字 123, \xff\xfe invalid, and 'll've.";
    const unsigned char *text;
    size_t text_n, vocab_n = fuzz_split(data, size, "\n--text--\n", &text, &text_n);
    size_t file_n;
    char *file = fuzz_overlay_lines(data, vocab_n, base, base_n, &file_n);
    fuzz_write(path, file, file_n);
    free(file);
    char err[1024];
    struct tokenizer *t = tokenizer_open("gpt2", dir, TOK_NO_CHECKSUM, err, sizeof err);
    if (!t)
        return 0;
    if (text)
        round_trip(t, text, text_n);
    else
        round_trip(t, (const unsigned char *)sample, sizeof sample - 1);
    tokenizer_close(t);
    return 0;
}
