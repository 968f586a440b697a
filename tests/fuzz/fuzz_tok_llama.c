/* libFuzzer harness: the LLaMA tokenizer's loader (text/tokenizer_llama.c),
 * which reads llama-vocab.txt (exactly 32000 pieces, one a line, the byte
 * pieces at ids 3-258) and llama-merges.bin (pairs of uint16 ids). Both are
 * made up here at their required sizes: control and byte pieces, "▁", the
 * printable ASCII characters, then letter pairs and triples with and
 * without a leading "▁", and the merges that build each of those. An input
 * is lines that replace the vocabulary's first ones (fuzz_overlay_lines),
 * then after a line "--merges--" bytes that replace the merges' first
 * bytes, then after a line "--text--" text to encode (a fixed sample
 * without one). Encoding is not checked for a round trip: a vocabulary
 * that is not LLaMA's may merge into a control or byte piece, which
 * decodes to other bytes; only the pinned files are promised one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/tok_round_trip.h"

#define VOCAB 32000
#define SPACE "\xe2\x96\x81"

static char *vocab;
static size_t vocab_n;
static unsigned char *merges;
static size_t merges_n;
static char dir[300], vocab_path[400], merges_path[400];

static void piece(const char *text, uint32_t left, uint32_t right)
{
    vocab_n += (size_t)sprintf(vocab + vocab_n, "%s%s", vocab_n ? "\n" : "", text);
    if (left == UINT32_MAX)
        return;
    unsigned char *m = merges + merges_n;
    m[0] = (unsigned char)left;
    m[1] = (unsigned char)(left >> 8);
    m[2] = (unsigned char)right;
    m[3] = (unsigned char)(right >> 8);
    merges_n += 4;
}

static void make_base(void)
{
    vocab = malloc((size_t)VOCAB * 16);
    merges = malloc((size_t)VOCAB * 4);
    if (!vocab || !merges)
        fuzz_die("out of memory");
    const uint32_t none = UINT32_MAX;
    piece("<unk>", none, none);
    piece("<s>", none, none);
    piece("</s>", none, none);
    char p[16];
    for (int b = 0; b < 256; b++) {
        snprintf(p, sizeof p, "<0x%02X>", b);
        piece(p, none, none);
    }
    const uint32_t space = 259, ascii0 = 260; /* ascii0 + c - '!' is character c */
    piece(SPACE, none, none);
    for (int c = '!'; c <= '~'; c++) {
        snprintf(p, sizeof p, "%c", c);
        piece(p, none, none);
    }
#define LETTER(i) (ascii0 + 'a' - '!' + (uint32_t)(i))
    uint32_t id = ascii0 + 94, pair0 = id, spaced0, spaced_pair0;
    for (int a = 0; a < 26; a++)
        for (int b = 0; b < 26; b++, id++) {
            snprintf(p, sizeof p, "%c%c", 'a' + a, 'a' + b);
            piece(p, LETTER(a), LETTER(b));
        }
    spaced0 = id;
    for (int a = 0; a < 26; a++, id++) {
        snprintf(p, sizeof p, SPACE "%c", 'a' + a);
        piece(p, space, LETTER(a));
    }
    spaced_pair0 = id;
    for (int a = 0; a < 26; a++)
        for (int b = 0; b < 26; b++, id++) {
            snprintf(p, sizeof p, SPACE "%c%c", 'a' + a, 'a' + b);
            piece(p, spaced0 + (uint32_t)a, LETTER(b));
        }
    for (int k = 0; id < VOCAB; k++)
        for (int c = 0; c < 26 && id < VOCAB; c++, id++) {
            int pair = k % 676, spaced = k >= 676;
            snprintf(p, sizeof p, "%s%c%c%c", spaced ? SPACE : "", 'a' + pair / 26, 'a' + pair % 26,
                     'a' + c);
            piece(p, (spaced ? spaced_pair0 : pair0) + (uint32_t)pair, LETTER(c));
        }
#undef LETTER
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    make_base();
    fuzz_subdir(dir, sizeof dir, "tokenizers");
    snprintf(vocab_path, sizeof vocab_path, "%s/llama-vocab.txt", dir);
    snprintf(merges_path, sizeof merges_path, "%s/llama-merges.bin", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sample[] = "The Curse of Depth: deeper layers contribute less.\n\n"
                                 "  Ünïcödé, 数字 123, " SPACE " \xff\xfe invalid, <s> and <0x41>.";
    const unsigned char *text, *m;
    size_t text_n, m_n, head_n = fuzz_split(data, size, "\n--text--\n", &text, &text_n);
    size_t v_n = fuzz_split(data, head_n, "\n--merges--\n", &m, &m_n);
    size_t file_n;
    char *file = fuzz_overlay_lines(data, v_n, vocab, vocab_n, &file_n);
    fuzz_write(vocab_path, file, file_n);
    free(file);
    if (m && m_n >= merges_n) {
        fuzz_write(merges_path, m, m_n);
    } else {
        unsigned char *mf = malloc(merges_n);
        if (!mf)
            fuzz_die("out of memory");
        memcpy(mf, merges, merges_n);
        if (m_n)
            memcpy(mf, m, m_n);
        fuzz_write(merges_path, mf, merges_n);
        free(mf);
    }
    char err[1024];
    struct tokenizer *t = tokenizer_open("llama", dir, TOK_NO_CHECKSUM, err, sizeof err);
    if (!t)
        return 0;
    struct tok_text back;
    if (text)
        tok_round_trip(t, text, text_n, 0, &back);
    else
        tok_round_trip(t, (const unsigned char *)sample, sizeof sample - 1, 0, &back);
    tok_text_free(&back);
    tokenizer_close(t);
    return 0;
}
