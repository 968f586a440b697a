/* Reading a Hugging Face tokenizer.json (tokenizer_hf.c says which kinds)
 * into struct hf: its normalizer and pre-tokenizer, its BPE model with the
 * vocabulary, merges and added tokens, the doc token and the regex.
 * Anything else is refused, naming the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/nfc.h"
#include "text/tokenizer_hf.h"
#include "common/utf8.h"

#define GPT2_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

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

int hf_read(struct hf *h, json_t *root, const char *path, char *err, size_t errlen)
{
    struct rd r = {path, err, errlen};
    const char *pattern = NULL;
    int rc = read_pipeline(h, root, &r, &pattern);
    if (rc == 0)
        rc = read_model(h, root, &r);
    if (rc == 0)
        rc = read_doc_token(h, root, &r);
    if (rc == 0 && (h->end_token = end_token(root)) >= h->vocab)
        h->end_token = UINT32_MAX;
    if (rc == 0 && pattern)
        rc = compile_regex(h, pattern, &r);
    return rc;
}
