/* The LLaMA-1/2 SentencePiece tokenizer (vocab 32000, byte fallback), as
 * llama-tokenizer-js implements it, from two files that scripts/corpus.sh
 * extracts from that package:
 *   llama-vocab.txt   the 32000 pieces, one per line, id = line number
 *   llama-merges.bin  uint16-LE id pairs, one merge per 4 bytes, best first
 * A space becomes "▁", the text gets a leading "▁" (the dummy prefix), every
 * character becomes its piece or, if it has none, its UTF-8 bytes as
 * <0xXX> tokens; then merges apply by priority over the whole text.
 *
 * Differences from llama-tokenizer-js, all outside ordinary text: a literal
 * "▁" (U+2581) and invalid UTF-8 bytes are encoded as byte tokens so that
 * they decode back to themselves; ties between equal merges go leftmost
 * exactly (the package's position tie-break can spill into the next rank on
 * texts that are mostly byte-fallback characters); no BOS is added here,
 * cod-prep writes it as the doc token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "text/bpe.h"
#include "text/strmap.h"
#include "text/tokenizer_impl.h"
#include "common/utf8.h"

#define LLAMA_VOCAB_FILE "llama-vocab.txt"
#define LLAMA_MERGES_FILE "llama-merges.bin"
#define LLAMA_VOCAB_SHA256 "0f97b4337921e6e7e9b4620fc73338ee570aecd3c16038bc23870a887e995045"
#define LLAMA_MERGES_SHA256 "8d3881127fb4ad6d0983ccf96fd737e06d23705d4558583da667c05a637726e9"
#define LLAMA_VOCAB 32000
#define LLAMA_BOS 1
#define LLAMA_EOS 2
#define LLAMA_BYTE0 3u /* <0x00> */
#define SPACE_UTF8 "\xe2\x96\x81" /* ▁ */

struct llama {
    unsigned char *text; /* decoded form of every piece, back to back */
    uint32_t *off, *len; /* id -> decoded bytes */
    struct strmap map;   /* piece as written in the vocab -> id */
    struct bpe_pairs pairs;
    uint32_t ascii_id[128]; /* a one-character piece for each ASCII byte, or UINT32_MAX */
    uint32_t space_id;
};

struct llama_session {
    struct bpe_memo memo;
    struct tok_ids sym;
};

static void llama_free(void *impl)
{
    struct llama *l = impl;
    if (!l)
        return;
    free(l->text);
    free(l->off);
    free(l->len);
    strmap_free(&l->map);
    bpe_pairs_free(&l->pairs);
    free(l);
}

static int is_byte_piece(const unsigned char *p, size_t n, unsigned *byte)
{
    static const char hex[] = "0123456789ABCDEF";
    if (n != 6 || memcmp(p, "<0x", 3) != 0 || p[5] != '>')
        return 0;
    const char *hi = memchr(hex, p[3], 16), *lo = memchr(hex, p[4], 16);
    if (!hi || !lo || !p[3] || !p[4])
        return 0;
    *byte = (unsigned)((hi - hex) * 16 + (lo - hex));
    return 1;
}

static int parse_vocab(struct llama *l, const char *path, const unsigned char *data, size_t n,
                       char *err, size_t errlen)
{
    l->text = malloc(n + 1);
    l->off = malloc(LLAMA_VOCAB * sizeof(uint32_t));
    l->len = malloc(LLAMA_VOCAB * sizeof(uint32_t));
    if (!l->text || !l->off || !l->len || strmap_init(&l->map, LLAMA_VOCAB) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t pos = 0, tn = 0;
    uint32_t id = 0;
    for (;; id++) {
        const unsigned char *eol = memchr(data + pos, '\n', n - pos);
        size_t end = eol ? (size_t)(eol - data) : n;
        const unsigned char *p = data + pos;
        size_t pn = end - pos;
        if (id >= LLAMA_VOCAB) {
            snprintf(err, errlen, "%s: more than %d pieces (wrong file)", path, LLAMA_VOCAB);
            return -1;
        }
        if (pn == 0) {
            snprintf(err, errlen, "%s:%u: empty piece (corrupt file)", path, id + 1);
            return -1;
        }
        int put = strmap_put(&l->map, p, pn, id);
        if (put != 0) {
            snprintf(err, errlen, put > 0 ? "%s:%u: piece appears twice" : "%s:%u: out of memory",
                     path, id + 1);
            return -1;
        }
        unsigned byte;
        int want_byte = id >= LLAMA_BYTE0 && id < LLAMA_BYTE0 + 256;
        int got_byte = is_byte_piece(p, pn, &byte);
        if (want_byte != got_byte || (got_byte && byte != id - LLAMA_BYTE0)) {
            snprintf(err, errlen, "%s:%u: ids 3-258 must be the byte pieces <0x00>-<0xFF> in order",
                     path, id + 1);
            return -1;
        }
        /* The decoded form: a byte piece is its byte, control pieces are
         * nothing, "▁" is a space. A non-space before "▁" would let merges
         * cross the cut points of tok_split_point(). */
        l->off[id] = (uint32_t)tn;
        if (got_byte) {
            l->text[tn++] = (unsigned char)byte;
        } else if (id >= LLAMA_BYTE0) {
            for (size_t i = 0; i < pn;) {
                if (i + 3 <= pn && memcmp(p + i, SPACE_UTF8, 3) == 0) {
                    if (i > 0 && (i < 3 || memcmp(p + i - 3, SPACE_UTF8, 3) != 0)) {
                        snprintf(err, errlen, "%s:%u: piece has '▁' after another character; "
                                 "not a LLaMA vocabulary", path, id + 1);
                        return -1;
                    }
                    l->text[tn++] = ' ';
                    i += 3;
                } else {
                    l->text[tn++] = p[i++];
                }
            }
        }
        l->len[id] = (uint32_t)(tn - l->off[id]);
        if (!eol)
            break;
        pos = end + 1;
    }
    if (id + 1 != LLAMA_VOCAB) {
        snprintf(err, errlen, "%s: %u pieces, LLaMA has %d (truncated or wrong file)", path, id + 1,
                 LLAMA_VOCAB);
        return -1;
    }
    if (!strmap_get(&l->map, SPACE_UTF8, 3, &l->space_id)) {
        snprintf(err, errlen, "%s: no '▁' piece; not a LLaMA vocabulary", path);
        return -1;
    }
    for (int c = 0; c < 128; c++) {
        unsigned char b = (unsigned char)c;
        if (!strmap_get(&l->map, &b, 1, &l->ascii_id[c]))
            l->ascii_id[c] = UINT32_MAX;
    }
    return 0;
}

static int parse_merges(struct llama *l, const char *path, const unsigned char *data, size_t n,
                        char *err, size_t errlen)
{
    if (n == 0 || n % 4) {
        snprintf(err, errlen, "%s: %zu bytes, not a whole number of 4-byte merges (corrupt file)",
                 path, n);
        return -1;
    }
    size_t count = n / 4;
    if (bpe_pairs_init(&l->pairs, count) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    unsigned char buf[512];
    for (size_t i = 0; i < count; i++) {
        uint32_t a = data[4 * i] | (uint32_t)data[4 * i + 1] << 8;
        uint32_t b = data[4 * i + 2] | (uint32_t)data[4 * i + 3] << 8;
        if (a >= LLAMA_VOCAB || b >= LLAMA_VOCAB) {
            snprintf(err, errlen, "%s: merge %zu names id %u, outside the vocabulary (corrupt file)",
                     path, i, a >= LLAMA_VOCAB ? a : b);
            return -1;
        }
        /* Entries went into the map in id order, so entry i is piece i. */
        const unsigned char *pa = l->map.blob + l->map.ent[a].off, *pb = l->map.blob + l->map.ent[b].off;
        size_t la = l->map.ent[a].len, lb = l->map.ent[b].len;
        if (la + lb > sizeof(buf)) {
            snprintf(err, errlen, "%s: merge %zu joins pieces too long for any vocabulary (corrupt file)",
                     path, i);
            return -1;
        }
        memcpy(buf, pa, la);
        memcpy(buf + la, pb, lb);
        uint32_t r;
        if (!strmap_get(&l->map, buf, la + lb, &r)) {
            snprintf(err, errlen, "%s: merge %zu (%u, %u) makes no piece of the vocabulary (corrupt file)",
                     path, i, a, b);
            return -1;
        }
        /* A pair listed twice keeps its last rank, as the package's Map does. */
        if (bpe_pairs_set(&l->pairs, a, b, (uint32_t)i, r) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
    }
    return 0;
}

static void *llama_session_new(const void *impl)
{
    (void)impl;
    struct llama_session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (bpe_memo_init(&s->memo) != 0) {
        bpe_memo_free(&s->memo);
        free(s);
        return NULL;
    }
    return s;
}

static void llama_session_free(void *session)
{
    struct llama_session *s = session;
    if (!s)
        return;
    bpe_memo_free(&s->memo);
    tok_ids_free(&s->sym);
    free(s);
}

static int to_symbols(const struct llama *l, const unsigned char *text, size_t len, unsigned flags,
                      struct tok_ids *sym)
{
    sym->n = 0;
    if (tok_ids_reserve(sym, len + 1) != 0)
        return -1;
    uint32_t *v = sym->v;
    size_t n = 0;
    if (!(flags & TOK_CONTINUE) && len > 0)
        v[n++] = l->space_id;
    for (size_t i = 0; i < len;) {
        unsigned char c = text[i];
        if (c < 0x80) {
            v[n++] = c == ' ' ? l->space_id : l->ascii_id[c] != UINT32_MAX ? l->ascii_id[c] : LLAMA_BYTE0 + c;
            i++;
            continue;
        }
        size_t k = utf8_len(text + i, len - i);
        uint32_t id;
        if (k == 0) {
            v[n++] = LLAMA_BYTE0 + c;
            i++;
        } else if (!(k == 3 && memcmp(text + i, SPACE_UTF8, 3) == 0) && strmap_get(&l->map, text + i, k, &id)) {
            v[n++] = id;
            i += k;
        } else {
            for (size_t j = 0; j < k; j++)
                v[n++] = LLAMA_BYTE0 + text[i + j];
            i += k;
        }
    }
    sym->n = n;
    return 0;
}

static int llama_encode(const void *impl, void *session, const unsigned char *text, size_t len,
                        unsigned flags, struct tok_ids *out, char *err, size_t errlen)
{
    const struct llama *l = impl;
    struct llama_session *s = session;
    if (to_symbols(l, text, len, flags, &s->sym) != 0 || tok_ids_reserve(out, s->sym.n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const uint32_t *sym = s->sym.v;
    size_t n = s->sym.n;
    /* Words: a run of "▁" then everything up to the next "▁" that follows a
     * non-"▁". No merge crosses such a boundary (see parse_vocab), so each
     * word is merged alone and memoised. */
    for (size_t w = 0; w < n;) {
        size_t e = w;
        while (e < n && sym[e] == l->space_id)
            e++;
        while (e < n && sym[e] != l->space_id)
            e++;
        size_t keyn = (e - w) * sizeof(uint32_t);
        if (bpe_memo_merge(&l->pairs, &s->memo, sym + w, keyn, strmap_hash(sym + w, keyn), sym + w,
                           NULL, NULL, e - w, out, err, errlen) != 0)
            return -1;
        w = e;
    }
    return 0;
}

static int llama_decode(const void *impl, const uint32_t *ids, size_t n, unsigned flags,
                        struct tok_text *out, char *err, size_t errlen)
{
    const struct llama *l = impl;
    size_t start = out->n;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= LLAMA_VOCAB) {
            snprintf(err, errlen, "llama: token id %u at %zu is outside the vocabulary (32000)", ids[i], i);
            return -1;
        }
        if (tok_text_append(out, l->text + l->off[ids[i]], l->len[ids[i]]) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    /* The dummy prefix: the space encode put in front of the document. */
    if (!(flags & TOK_CONTINUE) && out->n > start && out->v[start] == ' ') {
        memmove(out->v + start, out->v + start + 1, out->n - start - 1);
        out->n--;
    }
    return 0;
}

int llama_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen)
{
    struct llama *l = calloc(1, sizeof(*l));
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    unsigned char *vocab = NULL, *merges = NULL;
    size_t vn, mn;
    char vpath[4096], mpath[4096];
    int rc = path_fmt(vpath, sizeof(vpath), err, errlen, "%s/%s", dir, LLAMA_VOCAB_FILE) ||
                     path_fmt(mpath, sizeof(mpath), err, errlen, "%s/%s", dir, LLAMA_MERGES_FILE)
                 ? -1
                 : 0;
    if (rc == 0)
        rc = tok_read_file(t, dir, LLAMA_VOCAB_FILE, LLAMA_VOCAB_SHA256, flags, &vocab, &vn, err, errlen);
    if (rc == 0)
        rc = tok_read_file(t, dir, LLAMA_MERGES_FILE, LLAMA_MERGES_SHA256, flags, &merges, &mn, err, errlen);
    if (rc == 0)
        rc = parse_vocab(l, vpath, vocab, vn, err, errlen);
    if (rc == 0)
        rc = parse_merges(l, mpath, merges, mn, err, errlen);
    free(vocab);
    free(merges);
    if (rc != 0) {
        llama_free(l);
        return -1;
    }
    t->vocab_size = LLAMA_VOCAB;
    t->doc_token = LLAMA_BOS;
    t->end_token = LLAMA_EOS;
    t->adds_doc = 1;
    t->impl = l;
    t->session_new = llama_session_new;
    t->session_free = llama_session_free;
    t->encode = llama_encode;
    t->decode = llama_decode;
    t->free = llama_free;
    return 0;
}
