/* Read-ahead threads that hand blocks over in input order: see reader.h. */
#include "prep/reader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/parquet_input.h"
#include "text/decompress.h"

/* A Parquet file open for its units, freed by the last of them. */
struct shared_pq {
    struct pq_input *p;
    int refs;
};

/* A unit in flight: unit % threads picks its slot, and a slot is taken
 * again only once the consumer is done with the unit before. */
struct slot {
    size_t unit;
    size_t file;
    int group;             /* Parquet: a row group, or the hash (== the groups' count); -1: the whole file */
    struct shared_pq *pq;
    int claimed, done;
    struct block *head, *tail;
    size_t bytes;
    int failed;
    char err[4400];
};

struct reader {
    const struct input_list *in;
    const char *text_key;
    int threads;
    size_t block_bytes, queue_bytes, lead_bytes;
    pthread_mutex_t mu;
    pthread_cond_t more, room;
    size_t next_claim, cur;   /* units: the next to claim, the one being taken from */
    size_t claim_file;        /* the file whose units are being claimed */
    struct shared_pq *claim_pq; /* that file, when Parquet and open */
    int claim_group;
    int opening;              /* a thread is opening claim_file's footer */
    int stop;
    struct slot *slots;
    pthread_t *tids;
    int started;
};

/* Hands a block to the consumer, waiting while the slot is full. 0, or -1 when stopping. */
static int push(struct reader *r, struct slot *s, struct block *b)
{
    pthread_mutex_lock(&r->mu);
    while (!r->stop && s->bytes >= (s->unit == r->cur ? r->lead_bytes : r->queue_bytes))
        pthread_cond_wait(&r->room, &r->mu);
    int stop = r->stop;
    if (!stop) {
        if (s->tail)
            s->tail->next = b;
        else
            s->head = b;
        s->tail = b;
        s->bytes += b->len;
        pthread_cond_broadcast(&r->more);
    }
    pthread_mutex_unlock(&r->mu);
    if (stop)
        block_free(b);
    return stop ? -1 : 0;
}

static int stopping(struct reader *r)
{
    pthread_mutex_lock(&r->mu);
    int s = r->stop;
    pthread_mutex_unlock(&r->mu);
    return s;
}

static struct block *new_block(size_t file, unsigned char *data, size_t len, int64_t line, int64_t stored)
{
    struct block *b = calloc(1, sizeof(*b));
    if (b)
        *b = (struct block){.file = file, .data = data, .len = len, .first_line = line, .stored_end = stored};
    return b;
}

static int64_t count_lines(const unsigned char *p, size_t n)
{
    int64_t k = 0;
    for (const unsigned char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))); p++)
        k++;
    return k;
}

/* Reads one file into blocks. 0, or -1 with err (or when stopping, err empty). */
static int read_file(struct reader *r, struct slot *s, char *err, size_t errlen)
{
    const struct input_file *f = &r->in->v[s->file];
    struct dz *z = dz_open(f->path, err, errlen);
    if (!z)
        return -1;
    size_t cap = r->block_bytes + 1, len = 0;
    unsigned char *buf = malloc(cap);
    int64_t line = 1;
    int rc = 0;
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", f->path);
        rc = -1;
    }
    while (rc == 0) {
        if (len + 1 >= cap) {
            /* a text file is held whole; a JSON line longer than a block too */
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) {
                snprintf(err, errlen, "%s: out of memory for %zu bytes (one document or line)", f->path, cap * 2);
                rc = -1;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = dz_read(z, buf + len, cap - 1 - len, err, errlen);
        if (n < 0) {
            rc = -1;
            break;
        }
        len += (size_t)n;
        size_t cut = 0;
        if (n == 0)
            cut = len;
        else if (f->format == INPUT_JSONL && len >= r->block_bytes) {
            unsigned char *nl = memrchr(buf, '\n', len);
            cut = nl ? (size_t)(nl - buf) + 1 : 0;
        }
        if (!cut && n > 0)
            continue;
        /* the block keeps buf; what follows the cut moves to a new buffer */
        size_t rest = len - cut, ncap = r->block_bytes + 1 > rest + 1 ? r->block_bytes + 1 : rest + 1;
        unsigned char *next = n == 0 ? NULL : malloc(ncap);
        struct block *b = new_block(s->file, buf, cut, line, dz_consumed(z));
        if ((n != 0 && !next) || !b) {
            free(next);
            free(b);
            snprintf(err, errlen, "%s: out of memory", f->path);
            rc = -1;
            break;
        }
        if (next)
            memcpy(next, buf + cut, rest);
        buf[cut] = 0;
        line += count_lines(buf, cut);
        b->last = n == 0;
        if (b->last && dz_sha256(z, b->sha256) != 0) {
            snprintf(err, errlen, "%s: sha256 failed (libcrypto)", f->path);
            block_free(b);
            buf = next;
            rc = -1;
            break;
        }
        buf = next;
        cap = ncap;
        len = rest;
        if (push(r, s, b) != 0) {
            err[0] = 0;
            rc = -1;
        } else if (n == 0)
            break;
        else if (stopping(r)) {
            err[0] = 0;
            rc = -1;
        }
    }
    free(buf);
    dz_close(z);
    return rc;
}

struct push_ctx {
    struct reader *r;
    struct slot *s;
};

static int push_to(void *ctx, struct block *b)
{
    struct push_ctx *p = ctx;
    return push(p->r, p->s, b);
}

/* One unit's work: 0, or -1 with err (empty when stopping). */
static int run_unit(struct reader *r, struct slot *s, char *err, size_t errlen)
{
    if (s->group < 0)
        return read_file(r, s, err, errlen);
    struct push_ctx ctx = {r, s};
    if (s->group == pq_input_groups(s->pq->p))
        return pq_input_hash(s->pq->p, s->file, push_to, &ctx, err, errlen);
    return pq_input_group(s->pq->p, s->file, s->group, r->block_bytes, push_to, &ctx, err, errlen);
}

/* Under the lock: the claiming lets go of the file whose units are all claimed. */
static void release_locked(struct reader *r)
{
    if (--r->claim_pq->refs == 0) {
        pq_input_close(r->claim_pq->p);
        free(r->claim_pq);
    }
    r->claim_pq = NULL;
}

static void release(struct reader *r, struct shared_pq *pq)
{
    if (!pq)
        return;
    pthread_mutex_lock(&r->mu);
    int last = --pq->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (last) {
        pq_input_close(pq->p);
        free(pq);
    }
}

/* Under the lock: claims the next unit into its slot (or, for a Parquet file
 * not yet open, opens it first, the lock let go meanwhile). The slot, or
 * NULL when there is nothing left or the reader stops. */
static struct slot *claim(struct reader *r)
{
    for (;;) {
        while (!r->stop && r->claim_file < r->in->n && (r->opening || r->next_claim >= r->cur + (size_t)r->threads))
            pthread_cond_wait(&r->room, &r->mu);
        if (r->stop || r->claim_file >= r->in->n)
            return NULL;
        const struct input_file *f = &r->in->v[r->claim_file];
        struct slot *s = &r->slots[r->next_claim % (size_t)r->threads];
        *s = (struct slot){.unit = r->next_claim, .file = r->claim_file, .group = -1, .claimed = 1};
        if (f->format != INPUT_PARQUET) {
            r->claim_file++;
            r->next_claim++;
            return s;
        }
        if (r->claim_pq) {
            s->group = r->claim_group++;
            s->pq = r->claim_pq;
            s->pq->refs++;
            if (r->claim_group > pq_input_groups(r->claim_pq->p)) {
                release_locked(r);
                r->claim_file++;
            }
            r->next_claim++;
            return s;
        }
        s->claimed = 0;
        r->opening = 1;
        pthread_mutex_unlock(&r->mu);
        char err[4400] = "";
        struct shared_pq *pq = calloc(1, sizeof(*pq));
        if (!pq)
            snprintf(err, sizeof(err), "%s: out of memory", f->path);
        else if (!(pq->p = pq_input_open(f->path, r->text_key, err, sizeof(err)))) {
            free(pq);
            pq = NULL;
        }
        pthread_mutex_lock(&r->mu);
        r->opening = 0;
        pthread_cond_broadcast(&r->room);
        if (pq) {
            pq->refs = 1; /* the claiming's own, let go with the file's last unit */
            r->claim_pq = pq;
            r->claim_group = 0;
            continue;
        }
        /* the file's one unit: its error, reported when the consumer comes to it */
        *s = (struct slot){.unit = r->next_claim++, .file = r->claim_file++, .group = -1, .claimed = 1,
                           .failed = 1};
        snprintf(s->err, sizeof(s->err), "%s", err);
        pthread_cond_broadcast(&r->more);
    }
}

static void *reader_thread(void *arg)
{
    struct reader *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        struct slot *s = claim(r);
        while (s && s->failed)
            s = claim(r);
        pthread_mutex_unlock(&r->mu);
        if (!s)
            return NULL;
        char err[4400] = "";
        int rc = run_unit(r, s, err, sizeof(err));
        release(r, s->pq);
        pthread_mutex_lock(&r->mu);
        if (rc != 0) {
            s->failed = 1;
            snprintf(s->err, sizeof(s->err), "%s", err);
        } else
            s->done = 1;
        pthread_cond_broadcast(&r->more);
        pthread_mutex_unlock(&r->mu);
    }
}

struct reader *reader_start(const struct input_list *in, const char *text_key, int threads, size_t block_bytes,
                            size_t queue_bytes, size_t lead_bytes, char *err, size_t errlen)
{
    struct reader *r = calloc(1, sizeof(*r));
    int parquet = 0;
    for (size_t i = 0; i < in->n; i++)
        parquet |= in->v[i].format == INPUT_PARQUET;
    if (threads < 1)
        threads = 1;
    /* a Parquet file's row groups are units of their own: no fewer threads for one file */
    if ((size_t)threads > in->n && !parquet)
        threads = in->n ? (int)in->n : 1;
    if (r) {
        r->slots = calloc((size_t)threads, sizeof(*r->slots));
        r->tids = calloc((size_t)threads, sizeof(*r->tids));
    }
    if (!r || !r->slots || !r->tids) {
        if (r) {
            free(r->slots);
            free(r->tids);
        }
        free(r);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *r = (struct reader){.in = in, .text_key = text_key, .threads = threads, .block_bytes = block_bytes,
                         .queue_bytes = queue_bytes,
                         .lead_bytes = lead_bytes > queue_bytes ? lead_bytes : queue_bytes, .slots = r->slots,
                         .tids = r->tids};
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->more, NULL);
    pthread_cond_init(&r->room, NULL);
    for (int i = 0; i < threads; i++) {
        int e = pthread_create(&r->tids[i], NULL, reader_thread, r);
        if (e != 0) {
            snprintf(err, errlen, "cannot start a reading thread: %s", strerror(e));
            reader_stop(r);
            return NULL;
        }
        r->started++;
    }
    return r;
}

struct block *reader_next(struct reader *r, char *err, size_t errlen)
{
    err[0] = 0;
    pthread_mutex_lock(&r->mu);
    struct block *b = NULL;
    for (;;) {
        struct slot *s = &r->slots[r->cur % (size_t)r->threads];
        if (s->claimed && s->unit == r->cur) {
            if (s->head) {
                b = s->head;
                s->head = b->next;
                if (!s->head)
                    s->tail = NULL;
                s->bytes -= b->len;
                b->next = NULL;
                pthread_cond_broadcast(&r->room);
                break;
            }
            if (s->failed) {
                snprintf(err, errlen, "%s", s->err);
                break;
            }
            if (s->done) {
                s->claimed = 0;
                r->cur++;
                pthread_cond_broadcast(&r->room);
                continue;
            }
        } else if (r->cur == r->next_claim && r->claim_file >= r->in->n && !r->opening)
            break;
        pthread_cond_wait(&r->more, &r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return b;
}

void reader_stop(struct reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->room);
    pthread_cond_broadcast(&r->more);
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < r->started; i++)
        pthread_join(r->tids[i], NULL);
    for (int i = 0; i < r->threads; i++)
        for (struct block *b = r->slots[i].head, *n; b; b = n) {
            n = b->next;
            block_free(b);
        }
    if (r->claim_pq && --r->claim_pq->refs == 0) {
        pq_input_close(r->claim_pq->p);
        free(r->claim_pq);
    }
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->more);
    pthread_cond_destroy(&r->room);
    free(r->slots);
    free(r->tids);
    free(r);
}
