/* A model's own tokenizer from its Hugging Face tokenizer.json, of the two
 * kinds pretrained LLaMA-style models ship:
 *
 *   byte-level BPE (GPT-2, Llama 3, Qwen2): the text optionally NFC
 *   normalized (Qwen2), cut into pieces by the pre-tokenizer's regex (a
 *   Split of behavior Isolated, or ByteLevel's own GPT-2 regex), each piece's
 *   bytes merged by the merge list's ranks (or looked up whole first where
 *   the model says ignore_merges, as Llama 3's does);
 *
 *   SentencePiece-style BPE (Llama 2, Mistral): spaces become "▁" and the
 *   text gets a leading "▁" (a Prepend/Replace normalizer or a Metaspace
 *   pre-tokenizer), every character is its piece or, with byte_fallback,
 *   its UTF-8 bytes as <0xXX> pieces, then the merges apply.
 *
 * Anything else (a Unigram or WordPiece model, another normalizer or
 * pre-tokenizer, dropout, subword prefixes) is refused, naming the field.
 * The regex is PCRE2's reading of the tokenizers crate's Oniguruma pattern.
 * The doc token is the special token the post-processor puts before a
 * sequence (Llama's <s>, <|begin_of_text|>), else <|endoftext|> (GPT-2,
 * Qwen2). Added tokens are not matched in the text: a document's text is
 * text. Lossless like the others (tokenizer.h) but for two things the file
 * asks for: NFC makes decode give the normalized text, and a literal "▁" in
 * SentencePiece-style text is encoded as its bytes (as tokenizer_llama.c
 * does), where the tokenizers crate would read it as a space. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/path.h"
#include "text/nfc.h"
#include "text/tokenizer_hf.h"
#include "text/tokenizer_impl.h"
#include "common/utf8.h"

struct hf_session {
    struct pretok pt;
    struct bpe_memo memo;
    struct tok_text norm;
    struct tok_ids sym;
};

static void hf_free(void *impl)
{
    struct hf *h = impl;
    if (!h)
        return;
    pcre2_code_free(h->re);
    free(h->text);
    free(h->off);
    free(h->len);
    strmap_free(&h->map);
    bpe_pairs_free(&h->pairs);
    free(h);
}

/* ---- encoding ---- */

static void *hf_session_new(const void *impl)
{
    const struct hf *h = impl;
    struct hf_session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (bpe_memo_init(&s->memo) != 0 || (h->re && pretok_init(&s->pt, h->re) != 0)) {
        pretok_free(&s->pt);
        bpe_memo_free(&s->memo);
        free(s);
        return NULL;
    }
    return s;
}

static void hf_session_free(void *session)
{
    struct hf_session *s = session;
    if (!s)
        return;
    pretok_free(&s->pt);
    bpe_memo_free(&s->memo);
    tok_text_free(&s->norm);
    tok_ids_free(&s->sym);
    free(s);
}

struct piece_ctx {
    const struct hf *h;
    struct hf_session *s;
    struct tok_ids *out;
};

/* A byte-level piece: a token itself (ignore_merges), or merged from its bytes. */
static int byte_piece(void *ctx, const unsigned char *p, size_t n, char *err, size_t errlen)
{
    const struct piece_ctx *c = ctx;
    const struct hf *h = c->h;
    uint64_t hash = strmap_hash(p, n);
    uint32_t id;
    if (h->ignore_merges && strmap_get_hashed(&h->map, p, n, hash, &id)) {
        if (tok_ids_push(c->out, id) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        return 0;
    }
    return bpe_memo_merge(&h->pairs, &c->s->memo, p, n, hash, NULL, p, h->byte_id, n, c->out, err,
                          errlen);
}

static int encode_byte_level(const struct hf *h, struct hf_session *s, const unsigned char *text,
                             size_t len, struct tok_ids *out, char *err, size_t errlen)
{
    struct piece_ctx c = {h, s, out};
    if (!h->re)
        return len ? byte_piece(&c, text, len, err, errlen) : 0;
    return pretok_split(h->re, &s->pt, text, len, byte_piece, &c, "hf", err, errlen);
}

/* SentencePiece-style: the symbols (pieces of characters, "▁" for spaces,
 * <0xXX> for what has no piece), then words merged one by one. */
static int encode_sp(const struct hf *h, struct hf_session *s, const unsigned char *text,
                     size_t len, unsigned flags, struct tok_ids *out, char *err, size_t errlen)
{
    struct tok_ids *sym = &s->sym;
    sym->n = 0;
    if (tok_ids_reserve(sym, len + 1) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t *v = sym->v;
    size_t n = 0;
    if (h->prefix && !(flags & TOK_CONTINUE) && len > 0)
        v[n++] = h->space_id;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_len(text + i, len - i);
        uint32_t id;
        if (k == 1 && text[i] == ' ') {
            v[n++] = h->space_id;
        } else if (k && !(k == 3 && !memcmp(text + i, SPACE_UTF8, 3)) &&
                   strmap_get(&h->map, text + i, k, &id)) {
            v[n++] = id;
        } else {
            for (size_t j = 0; j < (k ? k : 1); j++)
                v[n++] = h->byte_id[text[i + j]];
        }
        i += k ? k : 1;
    }
    /* Words: a run of "▁" then what follows up to the next "▁" (no piece
     * holds "▁" after another character, checked on load, so no merge
     * crosses); with Metaspace's split, every "▁" starts a word. */
    for (size_t w = 0; w < n;) {
        size_t e = w;
        if (h->split_words)
            e++;
        else
            while (e < n && v[e] == h->space_id)
                e++;
        while (e < n && v[e] != h->space_id)
            e++;
        size_t keyn = (e - w) * sizeof(uint32_t);
        if (bpe_memo_merge(&h->pairs, &s->memo, v + w, keyn, strmap_hash(v + w, keyn), v + w, NULL,
                           NULL, e - w, out, err, errlen))
            return -1;
        w = e;
    }
    return 0;
}

static int hf_encode(const void *impl, void *session, const unsigned char *text, size_t len,
                     unsigned flags, struct tok_ids *out, char *err, size_t errlen)
{
    const struct hf *h = impl;
    struct hf_session *s = session;
    if (h->nfc) {
        if (nfc_normalize(text, len, &s->norm, err, errlen) != 0)
            return -1;
        text = s->norm.v;
        len = s->norm.n;
    }
    return h->byte_level ? encode_byte_level(h, s, text, len, out, err, errlen)
                         : encode_sp(h, s, text, len, flags, out, err, errlen);
}

static int hf_decode(const void *impl, const uint32_t *ids, size_t n, unsigned flags,
                     struct tok_text *out, char *err, size_t errlen)
{
    const struct hf *h = impl;
    size_t start = out->n;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= h->vocab || h->len[ids[i]] == UINT32_MAX) {
            snprintf(err, errlen, "hf: token id %u at %zu is not in the vocabulary", ids[i], i);
            return -1;
        }
        if (tok_text_append(out, h->text + h->off[ids[i]], h->len[ids[i]]) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    /* SentencePiece's dummy prefix: the space encode put before the document */
    if (!h->byte_level && h->prefix && !(flags & TOK_CONTINUE) && out->n > start &&
        out->v[start] == ' ') {
        memmove(out->v + start, out->v + start + 1, out->n - start - 1);
        out->n--;
    }
    return 0;
}

int hf_open(struct tokenizer *t, const char *source, unsigned flags, char *err, size_t errlen)
{
    /* a tokenizer.json, or a folder holding one */
    char dir[4096], name[256] = "tokenizer.json";
    struct stat sb;
    if (stat(source, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(dir, sizeof dir, "%s", source);
    } else {
        const char *slash = strrchr(source, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - source) : 1, slash ? source : ".");
        snprintf(name, sizeof name, "%s", slash ? slash + 1 : source);
    }
    char path[4400];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s", dir, name))
        return -1;
    unsigned char *data;
    size_t n;
    if (tok_read_file(t, dir, name, NULL, flags | TOK_NO_CHECKSUM, &data, &n, err, errlen))
        return -1;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, n, 0, &je);
    free(data);
    if (!root) {
        snprintf(err, errlen, "%s: %s (line %d)", path, je.text, je.line);
        return -1;
    }
    struct hf *h = calloc(1, sizeof(*h));
    int rc = h ? hf_read(h, root, path, err, errlen) : -1;
    if (!h)
        snprintf(err, errlen, "%s: out of memory", path);
    json_decref(root);
    if (rc != 0) {
        hf_free(h);
        return -1;
    }
    t->vocab_size = h->vocab;
    t->doc_token = h->doc_token;
    t->adds_doc = h->adds_doc;
    t->end_token = h->end_token;
    t->impl = h;
    t->session_new = hf_session_new;
    t->session_free = hf_session_free;
    t->encode = hf_encode;
    t->decode = hf_decode;
    t->free = hf_free;
    return 0;
}
