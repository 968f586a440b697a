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
#include "text/bpe.h"
#include "text/nfc.h"
#include "text/pretok.h"
#include "text/strmap.h"
#include "text/tokenizer_impl.h"
#include "text/utf8.h"

#define SPACE_UTF8 "\xe2\x96\x81" /* ▁ */
#define GPT2_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

struct hf {
    int byte_level, nfc, ignore_merges, prefix, split_words;
    pcre2_code *re;
    uint32_t vocab, doc_token;
    int adds_doc; /* the post_processor puts the doc token first */
    unsigned char *text;   /* every id's decoded bytes, back to back */
    uint32_t *off, *len;   /* id -> its bytes; len UINT32_MAX: no such id */
    struct strmap map;     /* byte-level: a token's bytes; SentencePiece: its piece as written */
    struct bpe_pairs pairs;
    uint32_t byte_id[256]; /* byte-level: each byte's token; SentencePiece: <0xXX> */
    uint32_t space_id;     /* SentencePiece: "▁" */
};

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

/* ---- reading tokenizer.json ---- */

struct rd {
    const char *path;
    char *err;
    size_t errlen;
};

static int bad(struct rd *r, const char *field, const char *what, const char *value)
{
    snprintf(r->err, r->errlen, "%s: %s: %s%s%s%s", r->path, field, value ? "\"" : "",
             value ? value : "", value ? "\" " : "", what);
    return -1;
}

static const char *type_of(json_t *o)
{
    json_t *t = json_object_get(o, "type");
    return json_is_string(t) ? json_string_value(t) : "";
}

static int is_true(json_t *o, const char *key) { return json_is_true(json_object_get(o, key)); }

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
 * the others for U+0100 upwards in byte order. */
static void byte_chars(unsigned cp[256])
{
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
        cp[b] = printable ? (unsigned)b : 256u + (unsigned)n++;
    }
}

/* A byte-level token's characters back to its bytes; -1 if one is not of
 * the byte alphabet. */
static long unmap_bytes(const char *s, unsigned char *out, const int *from_cp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(p + i, n - i);
        unsigned cp = 0;
        if (k == 1)
            cp = p[i];
        else if (k == 2)
            cp = (p[i] & 0x1fu) << 6 | (p[i + 1] & 0x3fu);
        if (!k || k > 2 || cp >= 512 || from_cp[cp] < 0)
            return -1;
        out[o++] = (unsigned char)from_cp[cp];
        i += k;
    }
    return (long)o;
}

/* The pre-tokenizer and normalizer: which kind of BPE, and its regex. */
static int read_pipeline(struct hf *h, json_t *root, struct rd *r, const char **pattern)
{
    json_t *norm = json_object_get(root, "normalizer"), *pre = json_object_get(root, "pre_tokenizer");
    int sp_norm = 0;
    *pattern = NULL;
    if (json_is_object(norm)) {
        const char *t = type_of(norm);
        if (!strcmp(t, "NFC")) {
            h->nfc = 1;
        } else if (!strcmp(t, "Sequence")) {
            /* SentencePiece's: Prepend("▁") and Replace(" " -> "▁") */
            json_t *list = json_object_get(norm, "normalizers"), *n;
            size_t i;
            int prepend = 0, replace = 0;
            json_array_foreach(list, i, n)
            {
                const char *nt = type_of(n);
                json_t *pat = json_object_get(json_object_get(n, "pattern"), "String");
                json_t *pp = json_object_get(n, "prepend"), *content = json_object_get(n, "content");
                if (!strcmp(nt, "Prepend") && json_is_string(pp) &&
                    !strcmp(json_string_value(pp), SPACE_UTF8))
                    prepend = 1;
                else if (!strcmp(nt, "Replace") && json_is_string(pat) &&
                         !strcmp(json_string_value(pat), " ") && json_is_string(content) &&
                         !strcmp(json_string_value(content), SPACE_UTF8))
                    replace = 1;
                else {
                    char field[64];
                    snprintf(field, sizeof field, "normalizer.normalizers[%zu]", i);
                    return bad(r, field, "is not read (a SentencePiece-style tokenizer's "
                                         "Prepend(\"▁\") and Replace(\" \", \"▁\") are)",
                               nt);
                }
            }
            if (!replace)
                return bad(r, "normalizer", "replaces no space by \"▁\"", NULL);
            sp_norm = 1;
            h->prefix = prepend;
        } else {
            return bad(r, "normalizer.type", "is not read (NFC, or SentencePiece's "
                                             "Prepend/Replace are)", t);
        }
    } else if (!json_is_null(norm) && norm) {
        return bad(r, "normalizer", "expected an object or null", NULL);
    }
    if (json_is_null(pre) || !pre) {
        if (!sp_norm)
            return bad(r, "pre_tokenizer", "is null, and the normalizer is not SentencePiece's: "
                                           "not a tokenizer of a kind cod reads", NULL);
        return 0;
    }
    const char *t = type_of(pre);
    if (!strcmp(t, "Metaspace")) {
        json_t *rep = json_object_get(pre, "replacement"), *scheme = json_object_get(pre, "prepend_scheme");
        if (!json_is_string(rep) || strcmp(json_string_value(rep), SPACE_UTF8))
            return bad(r, "pre_tokenizer.replacement", "is not read (\"▁\" is)", NULL);
        const char *sc = json_is_string(scheme) ? json_string_value(scheme)
                         : is_true(pre, "add_prefix_space") ? "first"
                                                            : "never";
        if (strcmp(sc, "first") && strcmp(sc, "never"))
            return bad(r, "pre_tokenizer.prepend_scheme", "is not read (\"first\" and \"never\" are)",
                       sc);
        h->prefix = !strcmp(sc, "first");
        h->split_words = is_true(pre, "split");
        return 0;
    }
    if (sp_norm)
        return bad(r, "pre_tokenizer.type", "after a SentencePiece normalizer is not read", t);
    json_t *byte_level = NULL;
    if (!strcmp(t, "ByteLevel")) {
        byte_level = pre;
        if (is_true(pre, "use_regex"))
            *pattern = GPT2_REGEX;
    } else if (!strcmp(t, "Sequence")) {
        json_t *list = json_object_get(pre, "pretokenizers"), *p;
        size_t i;
        json_array_foreach(list, i, p)
        {
            char field[96];
            const char *pt = type_of(p);
            if (!strcmp(pt, "Split") && !*pattern && !byte_level) {
                json_t *rx = json_object_get(json_object_get(p, "pattern"), "Regex");
                json_t *beh = json_object_get(p, "behavior");
                snprintf(field, sizeof field, "pre_tokenizer.pretokenizers[%zu].behavior", i);
                if (!json_is_string(beh) || strcmp(json_string_value(beh), "Isolated"))
                    return bad(r, field, "is not read (Isolated is)",
                               json_is_string(beh) ? json_string_value(beh) : "?");
                snprintf(field, sizeof field, "pre_tokenizer.pretokenizers[%zu]", i);
                if (!json_is_string(rx) || is_true(p, "invert"))
                    return bad(r, field, "is not read (a Split by a Regex, not inverted, is)",
                               "Split");
                *pattern = json_string_value(rx);
            } else if (!strcmp(pt, "ByteLevel") && !byte_level) {
                byte_level = p;
                if (is_true(p, "use_regex")) {
                    snprintf(field, sizeof field, "pre_tokenizer.pretokenizers[%zu].use_regex", i);
                    if (*pattern)
                        return bad(r, field, "true after a Split is not read", NULL);
                    *pattern = GPT2_REGEX;
                }
            } else {
                snprintf(field, sizeof field, "pre_tokenizer.pretokenizers[%zu].type", i);
                return bad(r, field, "is not read (a Split by a regex, then ByteLevel, are)", pt);
            }
        }
    } else {
        return bad(r, "pre_tokenizer.type", "is not read (ByteLevel, a Sequence of Split and "
                                            "ByteLevel, or Metaspace are)", t);
    }
    if (!byte_level)
        return bad(r, "pre_tokenizer", "has no ByteLevel step: not a byte-level BPE cod reads",
                   NULL);
    if (is_true(byte_level, "add_prefix_space"))
        return bad(r, "pre_tokenizer.add_prefix_space", "true is not read (GPT-2's, Llama 3's "
                                                        "and Qwen2's are false)", NULL);
    h->byte_level = 1;
    return 0;
}

/* SentencePiece's byte fallback pieces, <0x00> … <0xFF>: 1 and the byte. */
static int byte_piece_value(const char *p, unsigned *byte)
{
    static const char hex[] = "0123456789ABCDEF";
    if (strlen(p) != 6 || memcmp(p, "<0x", 3) != 0 || p[5] != '>' || !p[3] || !p[4])
        return 0;
    const char *hi = strchr(hex, p[3]), *lo = strchr(hex, p[4]);
    if (!hi || !lo)
        return 0;
    *byte = (unsigned)((hi - hex) * 16 + (lo - hex));
    return 1;
}

/* The model: BPE, its vocabulary and merges, and the added tokens. */
static int read_model(struct hf *h, json_t *root, struct rd *r)
{
    json_t *model = json_object_get(root, "model");
    const char *t = type_of(model);
    if (strcmp(t, "BPE"))
        return bad(r, "model.type", "is not read (BPE only)", t[0] ? t : "?");
    if (!json_is_null(json_object_get(model, "dropout")) && json_object_get(model, "dropout"))
        return bad(r, "model.dropout", "is not read (null only)", NULL);
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(model, affixes[i]);
        if (json_is_string(v) && json_string_value(v)[0]) {
            char field[64];
            snprintf(field, sizeof field, "model.%s", affixes[i]);
            return bad(r, field, "is not read (none only)", json_string_value(v));
        }
    }
    h->ignore_merges = is_true(model, "ignore_merges");
    if (!h->byte_level && !is_true(model, "byte_fallback"))
        return bad(r, "model.byte_fallback", "false is not read for a SentencePiece-style "
                                              "tokenizer (its <0xXX> pieces spell what has no piece)",
                   NULL);
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    json_t *added = json_object_get(root, "added_tokens");
    if (!json_is_object(vocab) || !json_is_array(merges))
        return bad(r, "model", "has no vocab object or merges list", NULL);
    /* ids: the vocabulary's and the added tokens' */
    size_t max_id = 0, text_bytes = 0, i;
    const char *key;
    json_t *v, *a;
    json_object_foreach(vocab, key, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 24)
            return bad(r, "model.vocab", "holds an id that is not an integer in [0, 2^24]", key);
        max_id = (size_t)json_integer_value(v) > max_id ? (size_t)json_integer_value(v) : max_id;
        text_bytes += strlen(key);
    }
    json_array_foreach(added, i, a)
    {
        json_t *id = json_object_get(a, "id"), *c = json_object_get(a, "content");
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > 1 << 24 ||
            !json_is_string(c))
            return bad(r, "added_tokens", "holds an entry without an id and content", NULL);
        max_id = (size_t)json_integer_value(id) > max_id ? (size_t)json_integer_value(id) : max_id;
        text_bytes += strlen(json_string_value(c));
    }
    h->vocab = (uint32_t)max_id + 1;
    h->text = malloc(text_bytes + 1);
    h->off = calloc(h->vocab, sizeof(uint32_t));
    h->len = malloc(h->vocab * sizeof(uint32_t));
    if (!h->text || !h->off || !h->len || strmap_init(&h->map, json_object_size(vocab)) ||
        bpe_pairs_init(&h->pairs, json_array_size(merges) + 1))
        return bad(r, "model", "out of memory", NULL);
    memset(h->len, 0xff, h->vocab * sizeof(uint32_t));
    unsigned cp[256];
    int from_cp[512];
    byte_chars(cp);
    memset(from_cp, 0xff, sizeof from_cp);
    for (int b = 0; b < 256; b++)
        from_cp[cp[b]] = b;
    size_t tn = 0;
    unsigned char buf[1024];
    json_object_foreach(vocab, key, v)
    {
        uint32_t id = (uint32_t)json_integer_value(v);
        long n = (long)strlen(key);
        const unsigned char *bytes = (const unsigned char *)key;
        if (h->byte_level) {
            if (n > (long)sizeof buf || (n = unmap_bytes(key, buf, from_cp)) < 0)
                return bad(r, "model.vocab", "is not of the byte-level alphabet", key);
            bytes = buf;
        }
        if (h->len[id] != UINT32_MAX)
            return bad(r, "model.vocab", "has the id of another token", key);
        if (strmap_put(&h->map, bytes, (size_t)n, id) != 0)
            return bad(r, "model.vocab", "appears twice, or out of memory", key);
        /* the decoded form; SentencePiece: "▁" is a space, <0xXX> its byte */
        h->off[id] = (uint32_t)tn;
        unsigned byte;
        if (!h->byte_level && byte_piece_value(key, &byte)) {
            h->text[tn++] = (unsigned char)byte;
            h->byte_id[byte] = id;
        } else if (!h->byte_level) {
            for (size_t k = 0; k < (size_t)n;) {
                if (!strncmp(key + k, SPACE_UTF8, 3)) {
                    /* a non-"▁" before "▁" would let merges cross the words encode cuts */
                    if (k > 0 && strncmp(key + k - 3, SPACE_UTF8, 3))
                        return bad(r, "model.vocab", "has \"▁\" after another character: not "
                                                     "a SentencePiece vocabulary cod reads",
                                   key);
                    h->text[tn++] = ' ';
                    k += 3;
                } else {
                    h->text[tn++] = (unsigned char)key[k++];
                }
            }
        } else {
            memcpy(h->text + tn, bytes, (size_t)n);
            tn += (size_t)n;
        }
        h->len[id] = (uint32_t)(tn - h->off[id]);
    }
    json_array_foreach(added, i, a)
    {
        uint32_t id = (uint32_t)json_integer_value(json_object_get(a, "id"));
        const char *c = json_string_value(json_object_get(a, "content"));
        if (h->len[id] != UINT32_MAX)
            continue;
        h->off[id] = (uint32_t)tn;
        h->len[id] = (uint32_t)strlen(c);
        memcpy(h->text + tn, c, strlen(c));
        tn += strlen(c);
    }
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        int found = h->byte_level ? strmap_get(&h->map, &c, 1, &h->byte_id[b])
                                  : h->len[h->byte_id[b]] == 1 && h->text[h->off[h->byte_id[b]]] == c &&
                                        h->byte_id[b] != 0;
        if (!found) {
            char what[96];
            snprintf(what, sizeof what, "has no token for byte 0x%02x (%s)", b,
                     h->byte_level ? "not a byte-level vocabulary" : "byte_fallback's <0xXX>");
            return bad(r, "model.vocab", what, NULL);
        }
    }
    if (!h->byte_level && !strmap_get(&h->map, SPACE_UTF8, 3, &h->space_id))
        return bad(r, "model.vocab", "has no \"▁\" piece", NULL);
    /* merges: "a b" or ["a", "b"], best first; a pair listed twice keeps its last rank */
    json_t *mg;
    json_array_foreach(merges, i, mg)
    {
        const char *pa, *pb;
        char two[2048];
        if (json_is_array(mg) && json_array_size(mg) == 2 && json_is_string(json_array_get(mg, 0)) &&
            json_is_string(json_array_get(mg, 1))) {
            pa = json_string_value(json_array_get(mg, 0));
            pb = json_string_value(json_array_get(mg, 1));
        } else if (json_is_string(mg) && strlen(json_string_value(mg)) < sizeof two &&
                   strchr(json_string_value(mg), ' ')) {
            snprintf(two, sizeof two, "%s", json_string_value(mg));
            char *sp = strchr(two, ' ');
            *sp = 0;
            pa = two;
            pb = sp + 1;
        } else {
            return bad(r, "model.merges", "holds an entry that is not a pair", NULL);
        }
        unsigned char ab[2048];
        long la = (long)strlen(pa), lb = (long)strlen(pb);
        if (la + lb >= (long)sizeof ab)
            return bad(r, "model.merges", "joins pieces too long", pa);
        if (h->byte_level) {
            la = unmap_bytes(pa, ab, from_cp);
            lb = la < 0 ? -1 : unmap_bytes(pb, ab + la, from_cp);
        } else {
            memcpy(ab, pa, (size_t)la);
            memcpy(ab + la, pb, (size_t)lb);
        }
        uint32_t ia, ib, res;
        if (la < 0 || lb < 0 || !strmap_get(&h->map, ab, (size_t)la, &ia) ||
            !strmap_get(&h->map, ab + la, (size_t)lb, &ib) ||
            !strmap_get(&h->map, ab, (size_t)(la + lb), &res)) {
            char what[128];
            snprintf(what, sizeof what, "entry %zu joins pieces or makes one the vocabulary lacks", i);
            return bad(r, "model.merges", what, NULL);
        }
        if (bpe_pairs_set(&h->pairs, ia, ib, (uint32_t)i, res) != 0)
            return bad(r, "model.merges", "out of memory", NULL);
    }
    return 0;
}

/* The added token of that content, or UINT32_MAX. */
static uint32_t added_id(json_t *root, const char *content)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(root, "added_tokens"), i, a)
    {
        json_t *c = json_object_get(a, "content");
        if (json_is_string(c) && !strcmp(json_string_value(c), content))
            return (uint32_t)json_integer_value(json_object_get(a, "id"));
    }
    return UINT32_MAX;
}

/* The special token a TemplateProcessing puts first, if any. */
static const char *template_first(json_t *pp)
{
    if (!strcmp(type_of(pp), "Sequence")) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(pp, "processors"), i, p)
        {
            const char *s = template_first(p);
            if (s)
                return s;
        }
        return NULL;
    }
    if (strcmp(type_of(pp), "TemplateProcessing"))
        return NULL;
    json_t *first = json_array_get(json_object_get(pp, "single"), 0);
    json_t *id = json_object_get(json_object_get(first, "SpecialToken"), "id");
    return json_is_string(id) ? json_string_value(id) : NULL;
}

/* The end of an answer: the first of these the file adds (else the doc token). */
static uint32_t end_token(json_t *root)
{
    static const char *const known[] = {"</s>", "<|endoftext|>", "<|end_of_text|>"};
    uint32_t id = UINT32_MAX;
    for (size_t i = 0; id == UINT32_MAX && i < 3; i++)
        id = added_id(root, known[i]);
    return id;
}

static int read_doc_token(struct hf *h, json_t *root, struct rd *r)
{
    const char *first = template_first(json_object_get(root, "post_processor"));
    static const char *const known[] = {"<|begin_of_text|>", "<s>", "<|endoftext|>"};
    h->doc_token = first ? added_id(root, first) : UINT32_MAX;
    h->adds_doc = first != NULL;
    for (size_t i = 0; h->doc_token == UINT32_MAX && !first && i < 3; i++)
        h->doc_token = added_id(root, known[i]);
    if (h->doc_token == UINT32_MAX || h->doc_token >= h->vocab)
        return bad(r, "post_processor", "names no document token, and added_tokens holds none of "
                                        "<|begin_of_text|>, <s>, <|endoftext|>", first);
    return 0;
}

/* cod-prep cuts long documents at a space between two ASCII letters
 * (tok_split_point); a regex that matched across one would encode the
 * halves apart otherwise than the whole. */
static int check_cut(struct hf *h, struct rd *r)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(h->re, NULL);
    const char *probe = "ab cd";
    int rc = md ? pcre2_match(h->re, (PCRE2_SPTR)probe, 5, 0, 0, md, NULL) : -1;
    size_t end = rc >= 0 ? pcre2_get_ovector_pointer(md)[1] : 0;
    pcre2_match_data_free(md);
    if (end != 2)
        return bad(r, "pre_tokenizer", "splits \"ab cd\" otherwise than \"ab\", \" cd\": cod-prep's "
                                       "cut points would change its tokens", NULL);
    return 0;
}

static int compile_regex(struct hf *h, const char *pattern, struct rd *r)
{
    char msg[300];
    h->re = pretok_compile(pattern, msg, sizeof(msg));
    return h->re ? check_cut(h, r) : bad(r, "pre_tokenizer's regex", msg, NULL);
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
    struct rd r = {path, err, errlen};
    const char *pattern = NULL;
    int rc = h ? 0 : bad(&r, "tokenizer", "out of memory", NULL);
    if (rc == 0)
        rc = read_pipeline(h, root, &r, &pattern);
    if (rc == 0)
        rc = read_model(h, root, &r);
    if (rc == 0)
        rc = read_doc_token(h, root, &r);
    if (rc == 0 && (t->end_token = end_token(root)) >= h->vocab)
        t->end_token = UINT32_MAX;
    if (rc == 0 && pattern)
        rc = compile_regex(h, pattern, &r);
    json_decref(root);
    if (rc != 0) {
        hf_free(h);
        return -1;
    }
    t->vocab_size = h->vocab;
    t->doc_token = h->doc_token;
    t->adds_doc = h->adds_doc;
    t->impl = h;
    t->session_new = hf_session_new;
    t->session_free = hf_session_free;
    t->encode = hf_encode;
    t->decode = hf_decode;
    t->free = hf_free;
    return 0;
}
