/* cod-prep's run (see prep_run.h): the options checked, the inputs listed,
 * the tokenizer and its per-thread sessions opened and the staging
 * directory made; then the pipeline (pipeline.c), the counts checked and
 * the output published (publish.c), and everything released whether or
 * not it succeeded. */
#include "prep/prep_run.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"
#include "prep/run_state.h"

void prep_opts_default(struct prep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->tokenizer = "gpt2";
    o->val_fraction = PREP_DEFAULT_VAL_FRACTION;
    o->shard_tokens = PREP_DEFAULT_SHARD_TOKENS;
    o->progress = -1;
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
    if (o->split_tokens < 0) {
        snprintf(err, errlen, "--split paragraphs:%lld: N must be positive", (long long)o->split_tokens);
        return -1;
    }
    if (!strcmp(o->tokenizer, "sentencepiece") && o->verify) {
        snprintf(err, errlen,
                 "--verify checks decode(encode(text)) == text, which a SentencePiece model's normaliser does "
                 "not keep; it is for gpt2, llama and bytes");
        return -1;
    }
    return 0;
}

/* After the inputs: a run that kept nothing to train on has failed. */
static int check_counts(const struct run *r, char *err, size_t errlen)
{
    const struct prep_result *res = r->res;
    if (res->split[TRAIN].documents + res->split[VAL].documents == 0) {
        snprintf(err, errlen, "no document to tokenize: %lld read, %lld lines without text, %lld duplicates",
                 (long long)res->read, (long long)res->skipped_total, (long long)res->duplicates);
        return -1;
    }
    if (res->split[TRAIN].documents == 0) {
        if (r->o->n_val_inputs)
            snprintf(err, errlen, "no document to train on: every training document is a copy of a held-out one");
        else
            snprintf(err, errlen,
                     "no document to train on: the %lld documents were all held out by --val-fraction %g "
                     "(chosen by their text's hash); give more documents or a smaller fraction",
                     (long long)res->split[VAL].documents, r->o->val_fraction);
        return -1;
    }
    return 0;
}

static int open_tokenizer(struct run *r, char *err, size_t errlen)
{
    const struct prep_opts *o = r->o;
    if (!strcmp(o->tokenizer, "sentencepiece") && o->tokenizer_model)
        r->tok = tokenizer_open_model(o->tokenizer_model, o->tokenizer_flags, err, errlen);
    else if (o->tokenizer_model) {
        snprintf(err, errlen, "a tokenizer model file is for --tokenizer sentencepiece, not %s", o->tokenizer);
        return -1;
    } else
        r->tok = tokenizer_open(o->tokenizer, o->tokenizer_dir, o->tokenizer_flags, err, errlen);
    if (!r->tok)
        return -1;
    r->token_bytes = tokenizer_vocab_size(r->tok) > 65536 ? 4 : 2;
    r->sess = calloc((size_t)r->threads, sizeof(*r->sess));
    if (!r->sess) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < r->threads; i++)
        if (!(r->sess[i] = tok_session_new(r->tok, err, errlen)))
            return -1;
    return 0;
}

int prep_run(const struct prep_opts *o, struct prep_result *res, char *err, size_t errlen)
{
    double t0 = progress_now();
    memset(res, 0, sizeof(*res));
    struct run r = {.o = o, .res = res, .threads = o->threads > 0 ? o->threads : omp_get_max_threads()};
    int rc = check_opts(o, err, errlen);
    if (rc == 0)
        rc = jl_key_parse(&r.key, o->text_key ? o->text_key : PREP_DEFAULT_TEXT_KEY, err, errlen);
    /* held-out inputs first: a document in both is kept where --val put it */
    for (int i = 0; rc == 0 && i < o->n_val_inputs; i++)
        rc = inputs_add(&r.in, o->val_inputs[i], VAL, err, errlen);
    for (int i = 0; rc == 0 && i < o->n_inputs; i++)
        rc = inputs_add(&r.in, o->inputs[i], o->n_val_inputs ? TRAIN : -1, err, errlen);
    if (rc == 0 && !(r.files = calloc(r.in.n, sizeof(*r.files)))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    res->files = (int64_t)r.in.n;
    if (rc == 0)
        rc = open_tokenizer(&r, err, errlen);
    if (rc == 0)
        rc = fio_mkdir_p(o->out_dir, err, errlen);
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
    for (int s = 0; s < 2; s++)
        sink_init(&r.sink[s], r.stage, prep_split_name(s), r.token_bytes, o->shard_tokens);
    if (rc == 0) {
        progress_start(&r.pg, o->progress < 0 ? isatty(2) : o->progress, tokenizer_name(r.tok), r.in.bytes);
        rc = prep_pipeline(&r, err, errlen);
        if (rc == 0)
            progress_draw(&r.pg, r.in.bytes, r.text_done, r.docs_done, res->skipped_total, 1);
        else if (r.pg.on)
            fputc('\n', stderr);
    }
    for (int s = 0; rc == 0 && s < 2; s++)
        rc = sink_finish(&r.sink[s], err, errlen);
    for (int s = 0; s < 2; s++) {
        sink_abort(&r.sink[s]);
        res->split[s].shards = r.sink[s].shards;
    }
    if (rc == 0)
        rc = check_counts(&r, err, errlen);
    if (rc == 0)
        rc = publish_meta(&r, err, errlen);
    if (rc == 0)
        rc = publish_commit(&r, err, errlen);
    if (staged)
        publish_remove_stage(r.stage);
    for (int i = 0; r.sess && i < r.threads; i++)
        tok_session_free(r.sess[i]);
    free(r.sess);
    tokenizer_close(r.tok);
    dedup_free(&r.seen);
    jl_key_free(&r.key);
    free(r.files);
    inputs_free(&r.in);
    res->seconds = progress_now() - t0;
    return rc;
}
