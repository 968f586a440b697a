/* GPT-2's byte-level BPE (OpenAI's r50k_base, vocab 50257) read from a
 * tiktoken file: one "base64(bytes) rank" line per token, the rank being the
 * token id. Text is cut into pieces by GPT-2's pre-tokenizer regex (PCRE2,
 * Unicode classes, JIT), each piece is looked up whole, then in the session's
 * cache, and only then run through the merge loop: the same procedure as
 * tiktoken, so the ids agree with it. <|endoftext|> is id 50256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "text/bpe.h"
#include "text/pretok.h"
#include "text/strmap.h"
#include "text/tokenizer_impl.h"

#define GPT2_FILE "r50k_base.tiktoken"
#define GPT2_SHA256 "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
#define GPT2_RANKS 50256
#define GPT2_EOT_TEXT "<|endoftext|>"
#define GPT2_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

struct gpt2 {
    unsigned char *bytes; /* every token's bytes, back to back */
    uint32_t *off, *len;  /* token id -> its bytes */
    uint32_t byte_id[256];
    struct strmap map;    /* bytes -> id */
    struct bpe_pairs pairs;
    pcre2_code *re;
};

struct gpt2_session {
    struct pretok pt;
    struct bpe_memo memo;
};

static void gpt2_free(void *impl)
{
    struct gpt2 *g = impl;
    if (!g)
        return;
    free(g->bytes);
    free(g->off);
    free(g->len);
    strmap_free(&g->map);
    bpe_pairs_free(&g->pairs);
    pcre2_code_free(g->re);
    free(g);
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict base64: length a multiple of 4, '=' only as trailing padding. */
static long b64decode(const unsigned char *s, size_t n, unsigned char *out)
{
    if (n == 0 || n % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            if (s[i + k] == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad)
                return -1;
            v[k] = b64val(s[i + k]);
            if (v[k] < 0)
                return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = (unsigned char)(w >> 16);
        if (pad < 2)
            out[o++] = (unsigned char)(w >> 8);
        if (pad < 1)
            out[o++] = (unsigned char)w;
    }
    return (long)o;
}

static int parse_tiktoken(struct gpt2 *g, const char *path, const unsigned char *data, size_t n,
                          char *err, size_t errlen)
{
    g->bytes = malloc(n + 1);
    g->off = malloc(GPT2_RANKS * sizeof(uint32_t));
    g->len = malloc(GPT2_RANKS * sizeof(uint32_t));
    if (!g->bytes || !g->off || !g->len || strmap_init(&g->map, GPT2_RANKS) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memset(g->len, 0xff, GPT2_RANKS * sizeof(uint32_t));
    size_t pos = 0, line = 0, bn = 0;
    while (pos < n) {
        line++;
        const unsigned char *eol = memchr(data + pos, '\n', n - pos);
        size_t end = eol ? (size_t)(eol - data) : n;
        const unsigned char *sp = memchr(data + pos, ' ', end - pos);
        if (!sp) {
            snprintf(err, errlen, "%s:%zu: expected 'base64 rank', found no space", path, line);
            return -1;
        }
        size_t b64n = (size_t)(sp - data) - pos;
        long got = b64decode(data + pos, b64n, g->bytes + bn);
        if (got <= 0) {
            snprintf(err, errlen, "%s:%zu: bad base64 token", path, line);
            return -1;
        }
        unsigned long rank = 0;
        size_t q = (size_t)(sp - data) + 1;
        if (q == end) {
            snprintf(err, errlen, "%s:%zu: missing rank", path, line);
            return -1;
        }
        for (; q < end; q++) {
            if (data[q] < '0' || data[q] > '9' || rank > 100000000) {
                snprintf(err, errlen, "%s:%zu: rank is not a number", path, line);
                return -1;
            }
            rank = rank * 10 + (data[q] - '0');
        }
        if (rank >= GPT2_RANKS) {
            snprintf(err, errlen, "%s:%zu: rank %lu out of range (r50k_base has %d tokens)", path,
                     line, rank, GPT2_RANKS);
            return -1;
        }
        if (g->len[rank] != UINT32_MAX) {
            snprintf(err, errlen, "%s:%zu: rank %lu appears twice", path, line, rank);
            return -1;
        }
        int put = strmap_put(&g->map, g->bytes + bn, (size_t)got, (uint32_t)rank);
        if (put != 0) {
            snprintf(err, errlen, put > 0 ? "%s:%zu: token bytes appear twice" : "%s:%zu: out of memory",
                     path, line);
            return -1;
        }
        g->off[rank] = (uint32_t)bn;
        g->len[rank] = (uint32_t)got;
        bn += (size_t)got;
        pos = end + 1;
    }
    if (line != GPT2_RANKS) {
        snprintf(err, errlen, "%s: %zu tokens, r50k_base has %d (truncated or wrong file)", path, line,
                 GPT2_RANKS);
        return -1;
    }
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        if (!strmap_get(&g->map, &c, 1, &g->byte_id[b])) {
            snprintf(err, errlen, "%s: byte 0x%02x has no token; not a byte-level BPE file", path, b);
            return -1;
        }
    }
    return 0;
}

/* tiktoken merges two adjacent parts when their concatenation is a token, at
 * that token's rank: every split of every token into two tokens is a pair. */
static int build_pairs(struct gpt2 *g, const char *path, char *err, size_t errlen)
{
    size_t total = 0;
    for (uint32_t id = 0; id < GPT2_RANKS; id++)
        total += g->len[id] > 1 ? g->len[id] - 1 : 0;
    if (bpe_pairs_init(&g->pairs, total) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (uint32_t id = 0; id < GPT2_RANKS; id++) {
        const unsigned char *b = g->bytes + g->off[id];
        for (uint32_t k = 1; k < g->len[id]; k++) {
            uint32_t a, c;
            if (strmap_get(&g->map, b, k, &a) && strmap_get(&g->map, b + k, g->len[id] - k, &c) &&
                bpe_pairs_set(&g->pairs, a, c, id, id) != 0) {
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
        }
    }
    return 0;
}

static void *gpt2_session_new(const void *impl)
{
    const struct gpt2 *g = impl;
    struct gpt2_session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (pretok_init(&s->pt, g->re) != 0 || bpe_memo_init(&s->memo) != 0) {
        pretok_free(&s->pt);
        bpe_memo_free(&s->memo);
        free(s);
        return NULL;
    }
    return s;
}

static void gpt2_session_free(void *session)
{
    struct gpt2_session *s = session;
    if (!s)
        return;
    pretok_free(&s->pt);
    bpe_memo_free(&s->memo);
    free(s);
}

struct piece_ctx {
    const struct gpt2 *g;
    struct gpt2_session *s;
    struct tok_ids *out;
};

/* A piece: one byte's token, a token itself, or merged from its bytes. */
static int encode_piece(void *ctx, const unsigned char *p, size_t n, char *err, size_t errlen)
{
    const struct piece_ctx *c = ctx;
    const struct gpt2 *g = c->g;
    uint32_t id;
    uint64_t h = n == 1 ? 0 : strmap_hash(p, n);
    if (n == 1 || strmap_get_hashed(&g->map, p, n, h, &id)) {
        if (tok_ids_push(c->out, n == 1 ? g->byte_id[p[0]] : id) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        return 0;
    }
    return bpe_memo_merge(&g->pairs, &c->s->memo, p, n, h, NULL, p, g->byte_id, n, c->out, err,
                          errlen);
}

static int encode_ordinary(const struct gpt2 *g, struct gpt2_session *s, const unsigned char *text,
                           size_t len, struct tok_ids *out, char *err, size_t errlen)
{
    struct piece_ctx c = {g, s, out};
    return pretok_split(g->re, &s->pt, text, len, encode_piece, &c, "gpt2", err, errlen);
}

static int gpt2_encode(const void *impl, void *session, const unsigned char *text, size_t len,
                       unsigned flags, struct tok_ids *out, char *err, size_t errlen)
{
    const struct gpt2 *g = impl;
    struct gpt2_session *s = session;
    if (!(flags & TOK_ALLOW_SPECIAL))
        return encode_ordinary(g, s, text, len, out, err, errlen);
    const size_t sl = sizeof(GPT2_EOT_TEXT) - 1;
    while (len) {
        const unsigned char *hit = memmem(text, len, GPT2_EOT_TEXT, sl);
        size_t seg = hit ? (size_t)(hit - text) : len;
        if (encode_ordinary(g, s, text, seg, out, err, errlen) != 0)
            return -1;
        if (!hit)
            break;
        if (tok_ids_push(out, GPT2_RANKS) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        text += seg + sl;
        len -= seg + sl;
    }
    return 0;
}

static int gpt2_decode(const void *impl, const uint32_t *ids, size_t n, unsigned flags,
                       struct tok_text *out, char *err, size_t errlen)
{
    (void)flags;
    const struct gpt2 *g = impl;
    for (size_t i = 0; i < n; i++) {
        int rc;
        if (ids[i] < GPT2_RANKS)
            rc = tok_text_append(out, g->bytes + g->off[ids[i]], g->len[ids[i]]);
        else if (ids[i] == GPT2_RANKS)
            rc = tok_text_append(out, GPT2_EOT_TEXT, sizeof(GPT2_EOT_TEXT) - 1);
        else {
            snprintf(err, errlen, "gpt2: token id %u at %zu is outside the vocabulary (50257)", ids[i], i);
            return -1;
        }
        if (rc != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int gpt2_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen)
{
    struct gpt2 *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    unsigned char *data;
    size_t n;
    char path[4096];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s", dir, GPT2_FILE) != 0 ||
        tok_read_file(t, dir, GPT2_FILE, GPT2_SHA256, flags, &data, &n, err, errlen) != 0) {
        gpt2_free(g);
        return -1;
    }
    int rc = parse_tiktoken(g, path, data, n, err, errlen);
    free(data);
    if (rc == 0)
        rc = build_pairs(g, path, err, errlen);
    if (rc == 0) {
        char msg[300];
        g->re = pretok_compile(GPT2_REGEX, msg, sizeof(msg));
        if (!g->re) {
            snprintf(err, errlen, "gpt2 pre-tokenizer regex: %s", msg);
            rc = -1;
        }
    }
    if (rc != 0) {
        gpt2_free(g);
        return -1;
    }
    t->vocab_size = GPT2_RANKS + 1;
    t->doc_token = GPT2_RANKS;
    t->impl = g;
    t->session_new = gpt2_session_new;
    t->session_free = gpt2_session_free;
    t->encode = gpt2_encode;
    t->decode = gpt2_decode;
    t->free = gpt2_free;
    return 0;
}
