/* Dispatch by tokenizer name, the growable id and byte buffers, and the
 * document cut rule that lets cod-prep encode one long document on several
 * threads. */
#include "text/tokenizer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/path.h"
#include "text/sha256.h"

int tok_ids_reserve(struct tok_ids *a, size_t extra)
{
    if (a->n + extra <= a->cap)
        return 0;
    /* from small: a batch holds an array per short document */
    size_t cap = a->cap ? a->cap : 16;
    while (cap < a->n + extra)
        cap *= 2;
    uint32_t *v = realloc(a->v, cap * sizeof(*v));
    if (!v)
        return -1;
    a->v = v;
    a->cap = cap;
    return 0;
}

int tok_ids_push(struct tok_ids *a, uint32_t id)
{
    if (a->n == a->cap && tok_ids_reserve(a, 1) != 0)
        return -1;
    a->v[a->n++] = id;
    return 0;
}

void tok_ids_free(struct tok_ids *a)
{
    free(a->v);
    memset(a, 0, sizeof(*a));
}

int tok_text_append(struct tok_text *t, const void *p, size_t n)
{
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + n)
            cap *= 2;
        unsigned char *v = realloc(t->v, cap);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    if (n)
        memcpy(t->v + t->n, p, n);
    t->n += n;
    return 0;
}

void tok_text_free(struct tok_text *t)
{
    free(t->v);
    memset(t, 0, sizeof(*t));
}

int tok_read_file(struct tokenizer *t, const char *dir, const char *name, const char *pinned,
                  unsigned flags, unsigned char **data, size_t *len, char *err, size_t errlen)
{
    char path[4096];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s", dir, name) != 0)
        return -1;
    if (fio_read_file(path, data, len, err, errlen) != 0) {
        size_t m = strlen(err);
        snprintf(err + m, errlen > m ? errlen - m : 0,
                 " (fetch the tokenizer files with scripts/corpus.sh, or point --tokenizer-dir at them)");
        return -1;
    }
    char hex[65];
    if (sha256_hex(*data, *len, hex) != 0) {
        snprintf(err, errlen, "%s: cannot compute its sha256 (libcrypto failed)", path);
        free(*data);
        *data = NULL;
        return -1;
    }
    if (!(flags & TOK_NO_CHECKSUM) && pinned && strcmp(hex, pinned) != 0) {
        snprintf(err, errlen, "%s: sha256 %s is not the pinned %s (corrupt or wrong file)", path, hex,
                 pinned);
        free(*data);
        *data = NULL;
        return -1;
    }
    size_t m = strlen(t->files);
    snprintf(t->files + m, sizeof(t->files) - m, "%s %s\n", name, hex);
    return 0;
}

typedef int (*open_fn)(struct tokenizer *, const char *, unsigned, char *, size_t);

/* where: the files' directory, or the model file for sentencepiece */
static struct tokenizer *open_with(const char *name, open_fn open, const char *where, unsigned flags, char *err,
                                   size_t errlen)
{
    struct tokenizer *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->name = name;
    t->doc_at = TOK_DOC_START;
    t->pad_token = -1;
    t->end_token = UINT32_MAX;
    t->cuts = 1;
    if (open(t, where, flags, err, errlen) != 0) {
        free(t);
        return NULL;
    }
    if (t->end_token == UINT32_MAX)
        t->end_token = t->doc_token;
    return t;
}

struct tokenizer *tokenizer_open(const char *name, const char *dir, unsigned flags, char *err,
                                 size_t errlen)
{
    static const struct {
        const char *name;
        open_fn open;
    } table[] = {{"gpt2", gpt2_open}, {"llama", llama_open}, {"bytes", bytes_open}, {"hf", hf_open}};
    if (!dir)
        dir = TOK_DEFAULT_DIR;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(name, table[i].name) == 0)
            return open_with(table[i].name, table[i].open, dir, flags, err, errlen);
    if (!strcmp(name, "sentencepiece"))
        snprintf(err, errlen, "the sentencepiece tokenizer needs a model file (--tokenizer-model FILE.model)");
    else
        snprintf(err, errlen, "unknown tokenizer '%s' (want gpt2, llama, bytes, sentencepiece or hf)", name);
    return NULL;
}

struct tokenizer *tokenizer_open_model(const char *model, unsigned flags, char *err, size_t errlen)
{
    return open_with("sentencepiece", sentencepiece_open, model, flags, err, errlen);
}

void tokenizer_close(struct tokenizer *t)
{
    if (!t)
        return;
    if (t->free)
        t->free(t->impl);
    free(t);
}

const char *tokenizer_name(const struct tokenizer *t) { return t->name; }
uint32_t tokenizer_vocab_size(const struct tokenizer *t) { return t->vocab_size; }
uint32_t tokenizer_doc_token(const struct tokenizer *t) { return t->doc_token; }
int tokenizer_doc_token_at(const struct tokenizer *t) { return t->doc_at; }
int tokenizer_adds_doc_token(const struct tokenizer *t) { return t->adds_doc; }
int64_t tokenizer_pad_token(const struct tokenizer *t) { return t->pad_token; }
uint32_t tokenizer_end_token(const struct tokenizer *t) { return t->end_token; }
int tokenizer_can_cut(const struct tokenizer *t) { return t->cuts; }
const char *tokenizer_files(const struct tokenizer *t) { return t->files; }

struct tok_session {
    const struct tokenizer *t;
    void *impl;
};

struct tok_session *tok_session_new(const struct tokenizer *t, char *err, size_t errlen)
{
    struct tok_session *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->t = t;
    if (t->session_new) {
        s->impl = t->session_new(t->impl);
        if (!s->impl) {
            snprintf(err, errlen, "%s: out of memory for an encoding session", t->name);
            free(s);
            return NULL;
        }
    }
    return s;
}

void tok_session_free(struct tok_session *s)
{
    if (!s)
        return;
    if (s->t->session_free)
        s->t->session_free(s->impl);
    free(s);
}

int tok_encode(struct tok_session *s, const unsigned char *text, size_t len, unsigned flags,
               struct tok_ids *out, char *err, size_t errlen)
{
    return s->t->encode(s->t->impl, s->impl, text, len, flags, out, err, errlen);
}

int tok_decode(const struct tokenizer *t, const uint32_t *ids, size_t n, unsigned flags,
               struct tok_text *out, char *err, size_t errlen)
{
    return t->decode(t->impl, ids, n, flags, out, err, errlen);
}

static int ascii_letter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

/* Why "letter, space, letter" is safe: for gpt2 the piece holding the left
 * letter is a letter run or a contraction, which ends there, and the regex
 * scan restarts at the space with nothing carried over; for llama no
 * vocabulary piece holds a non-space followed by "▁" (checked on load), so no
 * merge crosses; bytes never merge. */
size_t tok_split_point(const unsigned char *text, size_t len, size_t want)
{
    if (want == 0)
        want = 1;
    for (size_t p = want; p + 1 < len; p++)
        if (text[p] == ' ' && ascii_letter(text[p - 1]) && ascii_letter(text[p + 1]))
            return p;
    return len;
}
