/* A run's start and instruction data: see prepare.h. */
#include "sft/prepare.h"

#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "common/path.h"

/* Steps for train.epochs, as Hugging Face's Trainer counts them: whole
 * batches an epoch (at least one), times the epochs, rounded up. */
static long epoch_steps(double epochs, int64_t rows, int batch)
{
    int64_t per_epoch = rows / batch > 0 ? rows / batch : 1;
    double steps = epochs * (double)per_epoch;
    long n = (long)steps;
    return n < steps ? n + 1 : n;
}

static int make_rows(struct job_spec *s, const char *run_dir, int rank, struct sft_prepared *p,
                     struct train_opts *opts, char *err, size_t errlen)
{
    struct tokenizer *tok;
    uint32_t end;
    char dir[4300], part[32] = "";
    if (rank > 0)
        snprintf(part, sizeof part, ".rank%d", rank);
    if (sft_start_tokenizer(&p->source, &tok, &end, err, errlen))
        return -1;
    int rc = -1;
    if (tokenizer_vocab_size(tok) > (uint32_t)s->model.vocab) {
        snprintf(err, errlen, "init.from: the tokenizer's vocabulary (%u) is larger than the "
                              "model's (%d)", tokenizer_vocab_size(tok), s->model.vocab);
        goto out;
    }
    int with_val = s->val_glob[0] || s->sft.val_size > 0;
    if (path_fmt(dir, sizeof dir, err, errlen, "%s/sft", run_dir) ||
        fio_mkdir_p(dir, err, errlen) ||
        path_fmt(p->train_rows, sizeof p->train_rows, err, errlen, "%s/train%s.rows", dir, part) ||
        path_fmt(p->val_rows, sizeof p->val_rows, err, errlen, "%s/val%s.rows", dir, part))
        goto out;
    struct sft_tokens t = {tok, tokenizer_doc_token(tok), end,
                           tokenizer_doc_token_at(tok) == TOK_DOC_END};
    struct sft_rows_cfg c = {s->train.seq_len + 1, s->sft.cutoff_len, s->sft.pack,
                             s->sft.train_on_inputs, s->val_glob[0] ? 0 : s->sft.val_size};
    if (sft_make_rows(&t, &c, s->train_glob, s->val_glob[0] ? s->val_glob : NULL, p->train_rows,
                      p->val_rows, &p->train, &p->val, err, errlen))
        goto out;
    if (p->train.rows == 0 || (with_val && p->val.rows == 0)) {
        snprintf(err, errlen, "%s: of its %ld records none has a response token to learn "
                              "(sft.cutoff_len %d leaves none)",
                 p->train.rows == 0 ? "data.train" : "data.val",
                 p->train.rows == 0 ? p->train.records : p->val.records, s->sft.cutoff_len);
        goto out;
    }
    opts->train_rows = p->train_rows;
    opts->val_rows = with_val ? p->val_rows : NULL;
    int64_t pad = tokenizer_pad_token(tok);
    opts->pad = pad >= 0 ? (uint32_t)pad : t.doc_token;
    if (s->train.epochs > 0)
        s->train.steps = epoch_steps(s->train.epochs, p->train.rows, s->train.batch_seqs);
    if (s->train.warmup < 0)
        s->train.warmup = s->train.steps / 10;
    if (s->train.warmup > s->train.steps) {
        snprintf(err, errlen, "train.warmup: %ld is longer than the run's %ld steps (%g epochs of "
                              "%lld rows)", s->train.warmup, s->train.steps, s->train.epochs,
                 (long long)p->train.rows);
        goto out;
    }
    double slots = (double)p->train.rows * s->train.seq_len;
    char cut[64] = "no cut";
    if (s->sft.cutoff_len)
        snprintf(cut, sizeof cut, "%ld cut at %d tokens", p->train.cut, s->sft.cutoff_len);
    snprintf(p->summary, sizeof p->summary,
             "instructions (%s tokenizer): %ld records into %ld rows (%s, %ld without a response "
             "token left out), %lld of the rows' %.0f slots hold a token (padding %.1f %%), %lld "
             "targets; held out: %ld records, %ld rows, %lld targets",
             tokenizer_name(tok), p->train.records, p->train.rows, cut, p->train.no_target,
             (long long)(p->train.tokens - p->train.rows), slots,
             slots > 0 ? 100.0 * (1 - (double)(p->train.tokens - p->train.rows) / slots) : 0,
             (long long)p->train.targets, p->val.records, p->val.rows,
             (long long)p->val.targets);
    rc = 0;
out:
    tokenizer_close(tok);
    return rc;
}

int sft_prepare(struct job_spec *s, const char *work_dir, const char *run_dir, int rank,
                struct sft_prepared *p, struct train_opts *opts, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (s->init.kind == INIT_SEED)
        return 0;
    struct sft_start st;
    if (sft_start_find(s, work_dir, &st, err, errlen) || sft_start_apply(&st, s, err, errlen))
        return -1;
    snprintf(p->init_dir, sizeof p->init_dir, "%s", st.dir);
    opts->init_from = p->init_dir;
    opts->init_hf = st.hf;
    if (s->format != FORMAT_INSTRUCTIONS)
        return 0;
    if (sft_start_text(&st, work_dir, &p->source, err, errlen))
        return -1;
    p->text.data = p->source.hf ? NULL : p->source.path;
    p->text.folder = p->source.hf ? p->source.path : NULL;
    return make_rows(s, run_dir, rank, p, opts, err, errlen);
}
