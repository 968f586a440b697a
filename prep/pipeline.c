/* cod-prep's pipeline (see prep_run.h): the inputs read ahead in blocks
 * (prep/reader.h), taken in batches, and each batch through four steps,
 * the parallel ones on every thread:
 *   parse   (parallel, a block each) JSON lines into documents, their keys;
 *   decide  (in order) skipped lines counted and reported, duplicates
 *           dropped, each document's split;
 *   cut     (parallel, a document each; --split only) pieces;
 *   encode  (parallel, a piece of a document each) and write (in order).
 * The order of the output is the inputs' whatever the threads do. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/paragraphs.h"
#include "prep/reader.h"
#include "prep/run_state.h"
/* A document of the batch. */
struct bdoc {
    const unsigned char *text;
    size_t len;
    unsigned char *owned; /* a JSON line's text; a text file's is its block's */
    size_t file;
    int64_t line;         /* a JSON line's number, a Parquet row's from 1; 0 for a text file */
    int split;            /* -1: dropped as a duplicate */
    struct doc_key key;
    struct pieces pieces; /* --split; else the whole text is one piece */
    size_t first_task;
};

/* A skipped JSON line kept for its message. */
struct fault {
    int64_t line;
    enum jl_fault kind;
    char why[400];
};

/* A block of the batch and what parsing it gave. */
struct bblock {
    struct block *b;
    struct bdoc *docs;
    size_t n_docs, cap_docs;
    int64_t count[JL_KINDS];
    struct fault shown[PREP_SHOWN];
    int n_shown;
    char err[4600];
};

/* One piece of one document (or of one of its --split pieces), encoded by one thread. */
struct task {
    size_t doc, piece;
    size_t off, len;
    unsigned flags;
    struct tok_ids ids;
};
static size_t doc_pieces(const struct bdoc *d) { return d->pieces.n ? d->pieces.n : 1; }

static struct piece doc_piece(const struct bdoc *d, size_t i)
{
    return d->pieces.n ? d->pieces.v[i] : (struct piece){0, d->len};
}

static int add_doc(struct bblock *bb, size_t file, int64_t line, const unsigned char *text, size_t len,
                   unsigned char *owned)
{
    if (bb->n_docs == bb->cap_docs) {
        size_t cap = bb->cap_docs ? 2 * bb->cap_docs : 64;
        struct bdoc *v = realloc(bb->docs, cap * sizeof(*v));
        if (!v)
            return -1;
        bb->docs = v;
        bb->cap_docs = cap;
    }
    bb->docs[bb->n_docs++] = (struct bdoc){.text = text, .len = len, .owned = owned, .file = file, .line = line};
    return 0;
}

/* A line or row without text, kept for its message. */
static void skipped(struct bblock *bb, int64_t line, enum jl_fault k, const char *why)
{
    bb->count[k]++;
    if (bb->n_shown < PREP_SHOWN) {
        struct fault *x = &bb->shown[bb->n_shown++];
        x->line = line;
        x->kind = k;
        snprintf(x->why, sizeof(x->why), "%s", why);
    }
}

/* A Parquet block's rows: the texts are the block's (no copy). */
static void parquet_rows(struct run *r, struct bblock *bb)
{
    static const enum jl_fault kind[] = {[ROW_NULL] = JL_NOT_STRING, [ROW_EMPTY] = JL_EMPTY,
                                         [ROW_NOT_UTF8] = JL_INVALID_UTF8};
    static const char *const why[] = {[ROW_NULL] = "is null", [ROW_EMPTY] = "is empty",
                                      [ROW_NOT_UTF8] = "is not UTF-8"};
    struct block *b = bb->b;
    for (size_t i = 0; i < b->n_rows && !bb->err[0]; i++) {
        const struct block_row *row = &b->rows[i];
        int64_t line = b->first_line + (int64_t)i + 1;
        if (row->kind != ROW_TEXT) {
            char m[400];
            snprintf(m, sizeof(m), "\"%s\" %s", r->key.spec, why[row->kind]);
            skipped(bb, line, kind[row->kind], m);
        } else if (add_doc(bb, b->file, line, b->data + row->off, row->len, NULL) != 0)
            snprintf(bb->err, sizeof(bb->err), "out of memory");
    }
}

/* Step 1 for one block: its documents and their keys, its bad lines. */
static void parse_block(struct run *r, struct bblock *bb)
{
    struct block *b = bb->b;
    const struct input_file *f = &r->in.v[b->file];
    if (f->format == INPUT_PARQUET)
        parquet_rows(r, bb);
    else if (f->format == INPUT_TEXT) {
        if (b->len == 0)
            snprintf(bb->err, sizeof(bb->err), "%s: empty file (a document needs text)", f->path);
        else if (add_doc(bb, b->file, 0, b->data, b->len, NULL) != 0)
            snprintf(bb->err, sizeof(bb->err), "out of memory");
    } else {
        int64_t line = b->first_line;
        for (size_t pos = 0; pos < b->len && !bb->err[0]; line++) {
            const unsigned char *nl = memchr(b->data + pos, '\n', b->len - pos);
            size_t end = nl ? (size_t)(nl - b->data) : b->len;
            char *text, why[400];
            size_t tlen;
            enum jl_fault k = jl_line_text(&r->key, (const char *)b->data + pos, end - pos, &text, &tlen, why,
                                           sizeof(why));
            if (k == JL_KINDS)
                snprintf(bb->err, sizeof(bb->err), "out of memory");
            else if (k != JL_OK)
                skipped(bb, line, k, why);
            else if (add_doc(bb, b->file, line, (unsigned char *)text, tlen, (unsigned char *)text) != 0) {
                free(text);
                snprintf(bb->err, sizeof(bb->err), "out of memory");
            }
            pos = end + 1;
        }
        /* the documents hold copies of their text: the lines can go */
        free(b->data);
        b->data = NULL;
        b->len = 0;
    }
    for (size_t i = 0; i < bb->n_docs && !bb->err[0]; i++)
        if (doc_key_of(bb->docs[i].text, bb->docs[i].len, &bb->docs[i].key) != 0)
            snprintf(bb->err, sizeof(bb->err), "%s: cannot compute a document's sha256 (libcrypto failed)",
                     f->path);
}

/* A message about a document or a skipped line, where it is first:
 * "FILE:LINE: why", "FILE: why" (a text file) or, for a Parquet row,
 * "FILE: row N: why" (N from 0, as pyarrow counts). */
static void placed(char *out, size_t n, const struct input_file *f, int64_t line, const char *why, const char *more)
{
    if (f->format == INPUT_PARQUET)
        snprintf(out, n, "%s: row %lld: %s%s", f->path, (long long)line - 1, why, more);
    else if (line)
        snprintf(out, n, "%s:%lld: %s%s", f->path, (long long)line, why, more);
    else
        snprintf(out, n, "%s: %s%s", f->path, why, more);
}

/* Step 2, in input order. */
static int decide(struct run *r, struct bblock *bb, char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    struct prep_result *res = r->res;
    const struct input_file *f = &r->in.v[bb->b->file];
    if (f->format == INPUT_PARQUET) {
        res->parquet_rows += (int64_t)bb->b->n_rows;
        res->parquet_groups += bb->b->groups;
        res->parquet_files += bb->b->last;
    }
    for (int i = 0; i < bb->n_shown; i++) {
        const struct fault *x = &bb->shown[i];
        if (o->strict) {
            placed(err, errlen, f, x->line, x->why,
                   f->format == INPUT_PARQUET ? " (--strict stops at the first row without text)"
                                              : " (--strict stops at the first line without text)");
            return -1;
        }
        if (res->n_shown < PREP_SHOWN)
            placed(res->shown[res->n_shown++], sizeof(res->shown[0]), f, x->line, x->why, "");
    }
    for (int k = 0; k < JL_KINDS; k++) {
        res->skipped[k] += bb->count[k];
        res->skipped_total += bb->count[k];
    }
    for (size_t i = 0; i < bb->n_docs; i++) {
        struct bdoc *d = &bb->docs[i];
        res->read++;
        int fresh = dedup_add(&r->seen, &d->key);
        if (fresh < 0) {
            snprintf(err, errlen, "out of memory for the table of documents seen");
            return -1;
        }
        if (!fresh) {
            d->split = -1;
            res->duplicates++;
        } else if (f->split >= 0)
            d->split = f->split;
        else
            d->split = doc_key_held_out(&d->key, o->val_fraction) ? VAL : TRAIN;
    }
    return 0;
}

static int verify_task(struct run *r, const struct task *k, const struct bdoc *d, char *m, size_t mlen)
{
    struct tok_text back = {0};
    int rc = tok_decode(r->tok, k->ids.v, k->ids.n, k->flags, &back, m, mlen);
    const unsigned char *want = d->text + k->off;
    if (rc == 0 && (back.n != k->len || memcmp(back.v, want, k->len) != 0)) {
        size_t at = 0;
        while (at < back.n && at < k->len && back.v[at] == want[at])
            at++;
        snprintf(m, mlen, "decode(encode(text)) differs from the text at byte %zu", k->off + at);
        rc = -1;
    }
    tok_text_free(&back);
    return rc;
}

static void draw(struct run *r, int64_t stored, int64_t text, int final)
{
    progress_draw(&r->pg, stored, text, r->docs_done, r->res->skipped_total, final);
}

/* A document's fault, as "FILE: why", "FILE:LINE: why" or "FILE: row N: why". */
static void doc_error(const struct run *r, const struct bdoc *d, const char *why, char *out, size_t n)
{
    placed(out, n, &r->in.v[d->file], d->line, why, "");
}

/* Steps 3 and 4 for the kept documents of a batch. */
static int encode_batch(struct run *r, struct bdoc **docs, size_t nd, int64_t stored_from, int64_t stored_to,
                        char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    int failed = 0;
    char ferr[4700] = "";
    if (o->split_tokens > 0) {
#pragma omp parallel num_threads(r->threads)
        {
            struct tok_ids scratch = {0};
#pragma omp for schedule(dynamic, 1)
            for (size_t i = 0; i < nd; i++) {
                char m[512];
                if (para_cut(r->sess[omp_get_thread_num()], docs[i]->text, docs[i]->len, o->split_tokens,
                             &docs[i]->pieces, &scratch, m, sizeof(m)) != 0) {
#pragma omp critical(prep_error)
                    if (!failed) {
                        doc_error(r, docs[i], m, ferr, sizeof(ferr));
                        failed = 1;
                    }
                }
            }
            tok_ids_free(&scratch);
        }
        if (failed) {
            snprintf(err, errlen, "%s", ferr);
            return -1;
        }
    }
    size_t chunk = !tokenizer_can_cut(r->tok) ? SIZE_MAX : o->chunk_bytes ? o->chunk_bytes : 256 * 1024;
    size_t nt = 0, text = 0;
    for (size_t i = 0; i < nd; i++)
        for (size_t p = 0; p < doc_pieces(docs[i]); p++) {
            size_t len = doc_piece(docs[i], p).len;
            nt += chunk == SIZE_MAX ? 1 : len / chunk + 1;
            text += len;
        }
    struct task *tasks = calloc(nt ? nt : 1, sizeof(*tasks));
    if (!tasks) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nt = 0;
    for (size_t i = 0; i < nd; i++) {
        docs[i]->first_task = nt;
        for (size_t p = 0; p < doc_pieces(docs[i]); p++) {
            struct piece pc = doc_piece(docs[i], p);
            size_t off = 0;
            do {
                size_t cut = chunk == SIZE_MAX ? pc.len
                                               : tok_split_point(docs[i]->text + pc.off + off, pc.len - off, chunk);
                tasks[nt++] = (struct task){.doc = i, .piece = p, .off = pc.off + off, .len = cut,
                                            .flags = off ? TOK_CONTINUE : 0};
                off += cut;
            } while (off < pc.len);
        }
    }
    int64_t done_text = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(r->threads)
    for (size_t t = 0; t < nt; t++) {
        int failed_now;
#pragma omp atomic read
        failed_now = failed;
        if (failed_now)
            continue;
        struct task *k = &tasks[t];
        const struct bdoc *d = docs[k->doc];
        char m[512] = "";
        int rc = tok_encode(r->sess[omp_get_thread_num()], d->text + k->off, k->len, k->flags, &k->ids, m,
                            sizeof(m));
        if (rc == 0 && o->verify)
            rc = verify_task(r, k, d, m, sizeof(m));
        if (rc != 0) {
#pragma omp critical(prep_error)
            {
                if (!failed)
                    doc_error(r, d, m, ferr, sizeof(ferr));
#pragma omp atomic write
                failed = 1;
            }
        }
        int64_t done;
#pragma omp atomic capture
        done = done_text += (int64_t)k->len;
        if (omp_get_thread_num() == 0)
            draw(r, stored_from + (int64_t)((double)(stored_to - stored_from) * (double)done / (double)(text ? text : 1)),
                 r->text_done + done, 0);
    }
    int rc = 0;
    if (failed) {
        snprintf(err, errlen, "%s", ferr);
        rc = -1;
    }
    /* in order: each piece a document, its doc token before or after it */
    uint32_t doc_tok = tokenizer_doc_token(r->tok);
    int at_end = tokenizer_doc_token_at(r->tok) == TOK_DOC_END;
    for (size_t i = 0, t = 0; rc == 0 && i < nd; i++) {
        struct bdoc *d = docs[i];
        struct shard_sink *sink = &r->sink[d->split];
        struct prep_split_result *sr = &r->res->split[d->split];
        struct file_stat *fs = &r->files[d->file];
        if (doc_pieces(d) > 1)
            r->res->cut++;
        for (size_t p = 0; rc == 0 && p < doc_pieces(d); p++) {
            int64_t tokens = 1;
            if (!at_end)
                rc = sink_append(sink, &doc_tok, 1, err, errlen);
            for (; rc == 0 && t < nt && tasks[t].doc == i && tasks[t].piece == p; t++) {
                rc = sink_append(sink, tasks[t].ids.v, tasks[t].ids.n, err, errlen);
                tokens += (int64_t)tasks[t].ids.n;
            }
            if (rc == 0 && at_end)
                rc = sink_append(sink, &doc_tok, 1, err, errlen);
            size_t len = doc_piece(d, p).len;
            sr->documents++;
            sr->bytes += (int64_t)len;
            sr->tokens += tokens;
            fs->docs[d->split]++;
            fs->bytes[d->split] += (int64_t)len;
            fs->tokens[d->split] += tokens;
            r->docs_done++;
        }
    }
    r->text_done += (int64_t)text;
    for (size_t t = 0; t < nt; t++)
        tok_ids_free(&tasks[t].ids);
    free(tasks);
    return rc;
}

static void free_batch(struct bblock *bbs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < bbs[i].n_docs; k++) {
            free(bbs[i].docs[k].owned);
            pieces_free(&bbs[i].docs[k].pieces);
        }
        free(bbs[i].docs);
        block_free(bbs[i].b);
    }
}

static int run_batch(struct run *r, struct bblock *bbs, size_t nb, int64_t stored_from, int64_t stored_to,
                     char *err, size_t errlen)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(r->threads)
    for (size_t i = 0; i < nb; i++)
        parse_block(r, &bbs[i]);
    size_t kept = 0;
    for (size_t i = 0; i < nb; i++) {
        if (bbs[i].err[0]) {
            snprintf(err, errlen, "%s", bbs[i].err);
            return -1;
        }
        if (decide(r, &bbs[i], err, errlen) != 0)
            return -1;
        for (size_t k = 0; k < bbs[i].n_docs; k++)
            kept += bbs[i].docs[k].split >= 0;
        if (bbs[i].b->last)
            snprintf(r->files[bbs[i].b->file].sha, sizeof(r->files[0].sha), "%s", bbs[i].b->sha256);
    }
    struct bdoc **docs = malloc((kept ? kept : 1) * sizeof(*docs));
    if (!docs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < nb; i++)
        for (size_t k = 0; k < bbs[i].n_docs; k++)
            if (bbs[i].docs[k].split >= 0)
                docs[n++] = &bbs[i].docs[k];
    int rc = encode_batch(r, docs, n, stored_from, stored_to, err, errlen);
    free(docs);
    return rc;
}

/* Reads every input in batches of about batch_bytes (see run_state.h). */
int prep_pipeline(struct run *r, char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    /* 4 MB of text a thread per round (8 MB at least): enough that the end
     * of a round, where threads wait for the last pieces, costs little, and
     * memory grows with the cores, not with the inputs */
    size_t batch = o->batch_bytes ? o->batch_bytes : (size_t)(r->threads > 2 ? r->threads : 2) * (4u << 20);
    size_t block = o->block_bytes ? o->block_bytes : 1u << 20;
    int readers = r->threads < 8 ? r->threads : 8;
    /* each file in flight may hold a few blocks ahead, the one being taken
     * from a whole batch: a large file decompresses while the last batch encodes */
    struct reader *rd = reader_start(&r->in, r->key.spec, readers, block, 4 * block, batch, err, errlen);
    if (!rd)
        return -1;
    size_t cap = 64;
    struct bblock *bbs = malloc(cap * sizeof(*bbs));
    int rc = bbs ? 0 : -1;
    if (!bbs)
        snprintf(err, errlen, "out of memory");
    int64_t stored_base = 0; /* the stored bytes of the files read whole */
    int end = 0;
    while (rc == 0 && !end) {
        size_t nb = 0, bytes = 0;
        int64_t from = r->stored_done;
        while (rc == 0 && (nb == 0 || bytes < batch)) {
            struct block *b = reader_next(rd, err, errlen);
            if (!b) {
                if (err[0])
                    rc = -1;
                end = 1;
                break;
            }
            if (nb == cap) {
                struct bblock *g = realloc(bbs, 2 * cap * sizeof(*bbs));
                if (!g) {
                    block_free(b);
                    snprintf(err, errlen, "out of memory");
                    rc = -1;
                    break;
                }
                bbs = g;
                cap *= 2;
            }
            memset(&bbs[nb], 0, sizeof(bbs[nb]));
            bbs[nb++].b = b;
            bytes += b->len;
            r->stored_done = stored_base + b->stored_end;
            if (b->last) {
                stored_base += r->in.v[b->file].size;
                r->stored_done = stored_base;
            }
        }
        if (rc == 0 && nb)
            rc = run_batch(r, bbs, nb, from, r->stored_done, err, errlen);
        free_batch(bbs, nb);
    }
    free(bbs);
    reader_stop(rd);
    return rc;
}
