#include "prep/prep_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"
#include "common/shard.h"
#include "prep/sha256.h"
#include "prep/tokenizer.h"

enum { TRAIN, VAL };
static const char *const split_name[2] = {"train", "val"};

void prep_opts_default(struct prep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->tokenizer = "gpt2";
    o->val_fraction = PREP_DEFAULT_VAL_FRACTION;
    o->shard_tokens = PREP_DEFAULT_SHARD_TOKENS;
    o->progress = -1;
}

struct doc {
    char *path;
    int split;
    int64_t size;     /* from stat, for the progress bar */
    unsigned char *text;
    size_t len;
    char sha[65];
    int64_t tokens;
    size_t first_task, n_tasks;
};

struct doclist {
    struct doc *v;
    size_t n, cap;
};

static void doclist_free(struct doclist *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].path);
        free(d->v[i].text);
    }
    free(d->v);
    memset(d, 0, sizeof(*d));
}

static int doclist_add(struct doclist *d, const char *path, int split, int64_t size, char *err, size_t errlen)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        struct doc *v = realloc(d->v, cap * sizeof(*v));
        if (!v) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        d->v = v;
        d->cap = cap;
    }
    struct doc *x = &d->v[d->n];
    memset(x, 0, sizeof(*x));
    x->path = strdup(path);
    if (!x->path) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    x->split = split;
    x->size = size;
    d->n++;
    return 0;
}

static int dot_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

/* A file is a document; a directory gives its files (not subdirectories,
 * not hidden files) in name order, so that the output does not depend on
 * the order the filesystem lists them. */
static int add_input(struct doclist *d, const char *path, int split, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return doclist_add(d, path, split, st.st_size, err, errlen);
    struct dirent **names;
    int n = scandir(path, &names, dot_filter, alphasort);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0, added = 0;
    for (int i = 0; i < n; i++) {
        char p[4096];
        if (rc == 0)
            rc = path_fmt(p, sizeof(p), err, errlen, "%s/%s", path, names[i]->d_name);
        if (rc == 0 && stat(p, &st) != 0) {
            snprintf(err, errlen, "%s: %s", p, strerror(errno));
            rc = -1;
        }
        if (rc == 0 && !S_ISDIR(st.st_mode)) {
            rc = doclist_add(d, p, split, st.st_size, err, errlen);
            added++;
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && !added) {
        snprintf(err, errlen, "%s: directory holds no files", path);
        rc = -1;
    }
    return rc;
}

/* One piece of one document, encoded by one thread. */
struct task {
    size_t doc, off, len;
    unsigned flags;
    struct tok_ids ids;
};

struct progress {
    int on;
    int64_t total, done;
    double start, last;
    const char *label;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Only one thread draws (thread 0), with the count it read atomically. */
static void progress_draw(struct progress *p, int64_t done, int final)
{
    if (!p->on)
        return;
    double t = now();
    if (!final && t - p->last < 0.1)
        return;
    p->last = t;
    double frac = p->total > 0 ? (double)done / (double)p->total : 1.0;
    if (frac > 1)
        frac = 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[30] = 0;
    double el = t - p->start;
    fprintf(stderr, "\rcod-prep %-5s [%s] %3d%%  %.1f/%.1f MB  %.1f MB/s", p->label, bar, (int)(frac * 100),
            (double)done / 1e6, (double)p->total / 1e6, el > 0 ? (double)done / 1e6 / el : 0.0);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

struct splitbuf {
    struct tok_ids ids; /* tokens not yet written */
    int shards;
    struct prep_split_result res;
};

struct run {
    const struct prep_opts *o;
    struct tokenizer *tok;
    char stage[4096];
    int token_bytes;
    struct splitbuf sb[2];
};

static int write_shard(struct run *r, int split, size_t n, char *err, size_t errlen)
{
    struct splitbuf *b = &r->sb[split];
    char path[4200];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s_%06d.bin", r->stage, split_name[split],
                 b->shards) != 0 ||
        shard_write(path, b->ids.v, (int64_t)n, r->token_bytes, err, errlen) != 0)
        return -1;
    b->shards++;
    memmove(b->ids.v, b->ids.v + n, (b->ids.n - n) * sizeof(uint32_t));
    b->ids.n -= n;
    return 0;
}

/* Shards are exactly shard_tokens long; the rest waits for more text. The
 * last shard is written by finish() and always holds at least 2 tokens
 * (a doc token and one token of a non-empty document), as readers require. */
static int append_doc(struct run *r, struct doc *d, struct task *tasks, char *err, size_t errlen)
{
    struct splitbuf *b = &r->sb[d->split];
    size_t total = 1;
    for (size_t t = 0; t < d->n_tasks; t++)
        total += tasks[d->first_task + t].ids.n;
    if (tok_ids_reserve(&b->ids, total) != 0) {
        snprintf(err, errlen, "out of memory for %zu tokens", total);
        return -1;
    }
    b->ids.v[b->ids.n++] = tokenizer_doc_token(r->tok);
    for (size_t t = 0; t < d->n_tasks; t++) {
        struct tok_ids *ids = &tasks[d->first_task + t].ids;
        memcpy(b->ids.v + b->ids.n, ids->v, ids->n * sizeof(uint32_t));
        b->ids.n += ids->n;
    }
    d->tokens = (int64_t)total;
    b->res.documents++;
    b->res.bytes += (int64_t)d->len;
    b->res.tokens += (int64_t)total;
    size_t limit = (size_t)r->o->shard_tokens;
    while (b->ids.n >= limit + 2)
        if (write_shard(r, d->split, limit, err, errlen) != 0)
            return -1;
    return 0;
}

static int encode_batch(struct run *r, struct doc *docs, size_t nd, struct tok_session **sess, int threads,
                        struct progress *pg, char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    size_t chunk = o->chunk_bytes ? o->chunk_bytes : 256 * 1024;
    size_t nt = 0;
    for (size_t i = 0; i < nd; i++)
        nt += docs[i].len / chunk + 1;
    struct task *tasks = calloc(nt, sizeof(*tasks));
    if (!tasks) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nt = 0;
    for (size_t i = 0; i < nd; i++) {
        docs[i].first_task = nt;
        size_t off = 0;
        do {
            size_t cut = tok_split_point(docs[i].text + off, docs[i].len - off, chunk);
            tasks[nt++] = (struct task){.doc = i, .off = off, .len = cut, .flags = off ? TOK_CONTINUE : 0};
            off += cut;
        } while (off < docs[i].len);
        docs[i].n_tasks = nt - docs[i].first_task;
    }
    int failed = 0;
    char ferr[4700] = "";
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (size_t t = 0; t < nt; t++) {
        int failed_now;
#pragma omp atomic read
        failed_now = failed;
        if (failed_now)
            continue;
        struct task *k = &tasks[t];
        struct doc *d = &docs[k->doc];
        char m[512] = "", e[4700] = "";
        int rc = 0;
        if (k->off == 0 && sha256_hex(d->text, d->len, d->sha) != 0) {
            snprintf(m, sizeof(m), "cannot compute its sha256 (libcrypto failed)");
            rc = -1;
        }
        if (rc == 0)
            rc = tok_encode(sess[omp_get_thread_num()], d->text + k->off, k->len, k->flags, &k->ids,
                            m, sizeof(m));
        if (rc == 0 && o->verify) {
            struct tok_text back = {0};
            rc = tok_decode(r->tok, k->ids.v, k->ids.n, k->flags, &back, m, sizeof(m));
            if (rc == 0 && (back.n != k->len || memcmp(back.v, d->text + k->off, k->len) != 0)) {
                size_t at = 0;
                while (at < back.n && at < k->len && back.v[at] == d->text[k->off + at])
                    at++;
                snprintf(e, sizeof(e), "%s: decode(encode(text)) differs from the text at byte %zu", d->path,
                         k->off + at);
                rc = -1;
            }
            tok_text_free(&back);
        }
        if (rc != 0 && !e[0])
            snprintf(e, sizeof(e), "%s: %s", d->path, m);
        if (rc != 0) {
#pragma omp critical(prep_error)
            {
                if (!failed)
                    snprintf(ferr, sizeof(ferr), "%s", e);
#pragma omp atomic write
                failed = 1;
            }
        }
        int64_t done;
#pragma omp atomic capture
        done = pg->done += (int64_t)k->len;
        if (omp_get_thread_num() == 0)
            progress_draw(pg, done, 0);
    }
    int rc = 0;
    if (failed) {
        snprintf(err, errlen, "%s", ferr);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < nd; i++)
        rc = append_doc(r, &docs[i], tasks, err, errlen);
    for (size_t t = 0; t < nt; t++)
        tok_ids_free(&tasks[t].ids);
    free(tasks);
    return rc;
}

static json_t *split_json(const struct splitbuf *b, int split)
{
    json_t *names = json_array();
    for (int i = 0; i < b->shards; i++) {
        char n[64];
        snprintf(n, sizeof(n), "%s_%06d.bin", split_name[split], i);
        json_array_append_new(names, json_string(n));
    }
    return json_pack("{s:I, s:I, s:I, s:o}", "documents", (json_int_t)b->res.documents, "bytes",
                     (json_int_t)b->res.bytes, "tokens", (json_int_t)b->res.tokens, "shards", names);
}

static int write_meta(struct run *r, const struct doclist *dl, char *err, size_t errlen)
{
    /* sources.txt: what each document was, so a set of shards can be traced to its text. */
    size_t cap = 256 + dl->n * 128, n = 0;
    for (size_t i = 0; i < dl->n; i++)
        cap += strlen(dl->v[i].path);
    char *src = malloc(cap);
    if (!src) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < dl->n; i++) {
        const struct doc *d = &dl->v[i];
        n += (size_t)snprintf(src + n, cap - n, "%s %12zu %10lld %-5s %s\n", d->sha, d->len,
                              (long long)d->tokens, split_name[d->split], d->path);
    }
    char src_sha[65], path[4200];
    int rc = sha256_hex(src, n, src_sha);
    if (rc != 0)
        snprintf(err, errlen, "cannot compute the sha256 of sources.txt (libcrypto failed)");
    else
        rc = path_fmt(path, sizeof(path), err, errlen, "%s/sources.txt", r->stage);
    if (rc == 0)
        rc = fio_write_text(path, src, n, err, errlen);
    free(src);
    if (rc != 0)
        return -1;

    json_t *files = json_object();
    char *fl = strdup(tokenizer_files(r->tok));
    if (!fl || !files) {
        free(fl);
        json_decref(files);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(fl, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (sp) {
            *sp = 0;
            json_object_set_new(files, line, json_string(sp + 1));
        }
    }
    free(fl);
    json_t *meta = json_pack("{s:s, s:i, s:i, s:i, s:I, s:o, s:o, s:o, s:s, s:s}", "tokenizer",
                             tokenizer_name(r->tok), "vocab_size", (int)tokenizer_vocab_size(r->tok), "doc_token",
                             (int)tokenizer_doc_token(r->tok), "token_bytes", r->token_bytes, "shard_tokens",
                             (json_int_t)r->o->shard_tokens, "tokenizer_files", files, "train",
                             split_json(&r->sb[TRAIN], TRAIN), "val", split_json(&r->sb[VAL], VAL), "sources",
                             "sources.txt", "sources_sha256", src_sha);
    /* A trailing newline, as a text file should end. */
    char *text = meta ? json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(meta);
    char *withnl = text ? malloc(strlen(text) + 2) : NULL;
    if (!withnl) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int len = sprintf(withnl, "%s\n", text);
    free(text);
    rc = path_fmt(path, sizeof(path), err, errlen, "%s/meta.json", r->stage);
    if (rc == 0)
        rc = fio_write_text(path, withnl, (size_t)len, err, errlen);
    free(withnl);
    return rc;
}

static void remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    if (!d)
        return;
    struct dirent *e;
    char p[4400];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (path_fmt(p, sizeof(p), NULL, 0, "%s/%s", stage, e->d_name) == 0)
                unlink(p);
        }
    closedir(d);
    rmdir(stage);
}

/* Old shards go first (a run with fewer shards must not leave extras
 * behind), meta.json arrives last: a reader that sees meta.json sees the
 * shards it lists. */
static int commit(struct run *r, char *err, size_t errlen)
{
    const char *out = r->o->out_dir;
    const char *const old[] = {"meta.json", "sources.txt", "train_*.bin", "val_*.bin"};
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        char pat[4200];
        glob_t g;
        if (path_fmt(pat, sizeof(pat), err, errlen, "%s/%s", out, old[i]) != 0)
            return -1;
        if (glob(pat, 0, NULL, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; k++)
                if (unlink(g.gl_pathv[k]) != 0 && errno != ENOENT) {
                    snprintf(err, errlen, "%s: cannot remove: %s", g.gl_pathv[k], strerror(errno));
                    globfree(&g);
                    return -1;
                }
        globfree(&g);
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < r->sb[s].shards; i++) {
            char a[4200], b[4200];
            if (path_fmt(a, sizeof(a), err, errlen, "%s/%s_%06d.bin", r->stage, split_name[s], i) ||
                path_fmt(b, sizeof(b), err, errlen, "%s/%s_%06d.bin", out, split_name[s], i))
                return -1;
            if (rename(a, b) != 0) {
                snprintf(err, errlen, "%s: cannot move into place: %s", b, strerror(errno));
                return -1;
            }
        }
    const char *last[] = {"sources.txt", "meta.json"};
    for (int i = 0; i < 2; i++) {
        char a[4200], b[4200];
        if (path_fmt(a, sizeof(a), err, errlen, "%s/%s", r->stage, last[i]) ||
            path_fmt(b, sizeof(b), err, errlen, "%s/%s", out, last[i]))
            return -1;
        if (rename(a, b) != 0) {
            snprintf(err, errlen, "%s: cannot move into place: %s", b, strerror(errno));
            return -1;
        }
    }
    if (fio_fsync_path(out) != 0) {
        snprintf(err, errlen, "%s: fsync: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}

static int check_opts(const struct prep_opts *o, char *err, size_t errlen)
{
    if (!o->out_dir || !*o->out_dir) {
        snprintf(err, errlen, "no output directory (--out DIR)");
        return -1;
    }
    if (o->n_inputs <= 0) {
        snprintf(err, errlen, "no input files");
        return -1;
    }
    if (!(o->val_fraction >= 0 && o->val_fraction < 1)) {
        snprintf(err, errlen, "validation fraction %g is not in [0, 1)", o->val_fraction);
        return -1;
    }
    if (o->shard_tokens < 2 || o->shard_tokens > INT32_MAX - 2) {
        snprintf(err, errlen, "shard size %lld tokens is not in [2, %d]", (long long)o->shard_tokens,
                 INT32_MAX - 2);
        return -1;
    }
    return 0;
}

static int run_docs(struct run *r, struct doclist *dl, char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    struct tok_session **sess = calloc((size_t)threads, sizeof(*sess));
    if (!sess) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < threads; i++)
        if (!(sess[i] = tok_session_new(r->tok, err, errlen)))
            rc = -1;
    struct progress pg = {.on = o->progress, .start = now(), .label = tokenizer_name(r->tok)};
    for (size_t i = 0; i < dl->n; i++)
        pg.total += dl->v[i].size;
    size_t batch = o->batch_bytes ? o->batch_bytes : 32u << 20;
    for (size_t i = 0; rc == 0 && i < dl->n;) {
        size_t j = i, bytes = 0;
        while (rc == 0 && j < dl->n && (j == i || bytes < batch)) {
            struct doc *d = &dl->v[j];
            if (fio_read_file(d->path, &d->text, &d->len, err, errlen) != 0)
                rc = -1;
            else if (d->len == 0) {
                snprintf(err, errlen, "%s: empty file (a document needs text)", d->path);
                rc = -1;
            }
            bytes += d->len;
            j++;
        }
        if (rc == 0)
            rc = encode_batch(r, dl->v + i, j - i, sess, threads, &pg, err, errlen);
        for (size_t k = i; k < j; k++) {
            free(dl->v[k].text);
            dl->v[k].text = NULL;
        }
        i = j;
    }
    if (rc == 0) {
        progress_draw(&pg, pg.total, 1);
    } else if (pg.on)
        fputc('\n', stderr);
    for (int i = 0; i < threads; i++)
        tok_session_free(sess[i]);
    free(sess);
    return rc;
}

int prep_run(const struct prep_opts *o, struct prep_result *res, char *err, size_t errlen)
{
    double t0 = now();
    memset(res, 0, sizeof(*res));
    if (check_opts(o, err, errlen) != 0)
        return -1;
    struct doclist dl = {0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < o->n_inputs; i++)
        rc = add_input(&dl, o->inputs[i], TRAIN, err, errlen);
    for (int i = 0; rc == 0 && i < o->n_val_inputs; i++)
        rc = add_input(&dl, o->val_inputs[i], VAL, err, errlen);
    if (rc == 0 && o->n_val_inputs == 0)
        for (size_t i = 0; i < dl.n; i++)
            if (floor((double)(i + 1) * o->val_fraction) > floor((double)i * o->val_fraction))
                dl.v[i].split = VAL;
    struct run r = {.o = o};
    if (rc == 0 && !(r.tok = tokenizer_open(o->tokenizer, o->tokenizer_dir, o->tokenizer_flags, err, errlen)))
        rc = -1;
    if (rc == 0) {
        r.token_bytes = tokenizer_vocab_size(r.tok) > 65536 ? 4 : 2;
        rc = fio_mkdir_p(o->out_dir, err, errlen);
    }
    int staged = 0;
    if (rc == 0) {
        if (path_fmt(r.stage, sizeof(r.stage), err, errlen, "%s/.cod-prep-XXXXXX", o->out_dir) != 0)
            rc = -1;
        else if (!mkdtemp(r.stage)) {
            snprintf(err, errlen, "%s: cannot create a staging directory: %s", o->out_dir, strerror(errno));
            rc = -1;
        } else
            staged = 1;
    }
    if (rc == 0)
        rc = run_docs(&r, &dl, err, errlen);
    for (int s = 0; rc == 0 && s < 2; s++)
        if (r.sb[s].ids.n)
            rc = write_shard(&r, s, r.sb[s].ids.n, err, errlen);
    if (rc == 0)
        rc = write_meta(&r, &dl, err, errlen);
    if (rc == 0)
        rc = commit(&r, err, errlen);
    if (staged)
        remove_stage(r.stage);
    for (int s = 0; s < 2; s++) {
        res->split[s] = r.sb[s].res;
        res->split[s].shards = r.sb[s].shards;
        tok_ids_free(&r.sb[s].ids);
    }
    tokenizer_close(r.tok);
    doclist_free(&dl);
    res->seconds = now() - t0;
    return rc;
}
