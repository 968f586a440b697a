/* A run's start: see start.h. */
#include "sft/start.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/path.h"
#include "eval/tokenizer_of.h"
#include "trainer/checkpoint.h"
#include "trainer/hf_config.h"

/* A fine-tuned checkpoint's tokenizer is its own start's, which may be
 * another's again: a chain this deep is a loop. */
enum { MAX_DEPTH = 16 };

static int exists(const char *dir, const char *name)
{
    char path[4500];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, R_OK) == 0;
}

/* What a directory is: a cod checkpoint (0), a Hugging Face folder (1). */
static int kind_of(const char *dir, const char *field, char *err, size_t errlen)
{
    if (exists(dir, "state.json"))
        return 0;
    if (exists(dir, "config.json"))
        return 1;
    snprintf(err, errlen,
             "%s: %s is neither a cod checkpoint (no state.json) nor a Hugging Face model "
             "folder (no config.json)",
             field, dir);
    return -1;
}

/* WORK/experiments/ID's final checkpoint. */
static int experiment_dir(int64_t id, const char *work_dir, char *dir, size_t n, char *err,
                          size_t errlen)
{
    if (!work_dir) {
        snprintf(err, errlen, "init.from.experiment: experiment %lld's checkpoints are found "
                              "under a work dir (cod-train --work-dir, cod-worker's own)",
                 (long long)id);
        return -1;
    }
    char runs[4200], why[600];
    if (path_fmt(runs, sizeof runs, err, errlen, "%s/experiments/%lld", work_dir, (long long)id))
        return -1;
    int found = checkpoint_latest(runs, dir, n, why, sizeof why);
    if (found < 0) {
        snprintf(err, errlen, "init.from.experiment: %s", why);
        return -1;
    }
    if (!found) {
        snprintf(err, errlen, "init.from.experiment: experiment %lld has no checkpoint under "
                              "%s/checkpoints (has it run on a worker that shares this work dir?)",
                 (long long)id, runs);
        return -1;
    }
    struct train_state st;
    struct job_spec s;
    if (checkpoint_read_spec(dir, &st, &s, why, sizeof why)) {
        snprintf(err, errlen, "init.from.experiment: %s", why);
        return -1;
    }
    int final = st.final >= 0 ? st.final : s.train.steps > 0 && st.step == s.train.steps;
    if (!final) {
        snprintf(err, errlen, "init.from.experiment: experiment %lld has not finished: its newest "
                              "checkpoint, %s, is of step %ld, not its last",
                 (long long)id, dir, st.step);
        return -1;
    }
    return 0;
}

static int find_from(const struct init_from *from, const char *work_dir, struct sft_start *st,
                     char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (from->kind == INIT_EXPERIMENT) {
        if (experiment_dir(from->experiment, work_dir, st->dir, sizeof st->dir, err, errlen))
            return -1;
    } else if (path_copy(st->dir, sizeof st->dir, from->path, err, errlen)) {
        return -1;
    }
    int k = kind_of(st->dir, "init.from", err, errlen);
    if (k < 0)
        return -1;
    st->hf = k;
    return 0;
}

int sft_start_find(const struct job_spec *s, const char *work_dir, struct sft_start *st,
                   char *err, size_t errlen)
{
    return find_from(&s->init, work_dir, st, err, errlen);
}

/* A shape field the spec gave that the start contradicts. */
static int differs(const char *field, long given, long start, const char *dir, char *err,
                   size_t errlen)
{
    if (given == start)
        return 0;
    snprintf(err, errlen, "%s: %ld, but the starting checkpoint (init.from %s) has %ld", field,
             given, dir, start);
    return -1;
}

/* The spec's model against the start's, or the start's taken. */
static int take_model(const struct sft_start *st, struct job_spec *s, const struct model_shape *m,
                      char *err, size_t errlen)
{
    if (s->model_from_init) {
        s->model = *m;
        s->model_from_init = 0;
        return 0;
    }
    struct model_shape *g = &s->model;
    if (!g->vocab)
        g->vocab = m->vocab;
    if (differs("model.dim", g->dim, m->dim, st->dir, err, errlen) ||
        differs("model.n_layers", g->n_layers, m->n_layers, st->dir, err, errlen) ||
        differs("model.n_heads", g->n_heads, m->n_heads, st->dir, err, errlen) ||
        differs("model.ffn_dim", g->ffn_dim, m->ffn_dim, st->dir, err, errlen) ||
        differs("model.vocab", g->vocab, m->vocab, st->dir, err, errlen))
        return -1;
    if (g->rope_theta != m->rope_theta || g->norm_eps != m->norm_eps) {
        snprintf(err, errlen, "model.%s: %g, but the starting checkpoint (init.from %s) has %g",
                 g->rope_theta != m->rope_theta ? "rope_theta" : "norm_eps",
                 g->rope_theta != m->rope_theta ? g->rope_theta : g->norm_eps, st->dir,
                 g->rope_theta != m->rope_theta ? m->rope_theta : m->norm_eps);
        return -1;
    }
    return 0;
}

static int take_norm(const struct sft_start *st, struct job_spec *s, const struct norm_variant *n,
                     char *err, size_t errlen)
{
    if (s->norm_from_init) {
        s->norm = *n;
        s->norm_from_init = 0;
        return 0;
    }
    if (variant_same(&s->norm, n))
        return 0;
    snprintf(err, errlen, "norm: \"%s\", but the starting checkpoint (init.from %s) is \"%s\"",
             s->norm.name, st->dir, n->name);
    return -1;
}

/* A Hugging Face folder's model as cod trains it: what only the forward
 * computes is refused, naming config.json's field. */
static int hf_shape(const struct sft_start *st, const struct job_spec *s, struct model_shape *m,
                    char *err, size_t errlen)
{
    struct hf_config h;
    if (hf_config_read(st->dir, &h, err, errlen))
        return -1;
    const char *why = h.n_kv_heads != h.n_heads ? "num_key_value_heads: grouped-query attention"
                      : h.qkv_bias              ? "attention_bias: q/k/v biases"
                      : h.tied                  ? "tie_word_embeddings: tied embeddings"
                      : h.head_dim * h.n_heads != h.dim ? "head_dim: a head size apart from the width"
                      : h.llama3_rope ? "rope_scaling: Llama 3's scaled RoPE"
                                      : NULL;
    int rc = -1;
    if (why)
        snprintf(err, errlen, "init.from: %s/config.json: %s is computed forward only "
                              "(cod-analyze reads it), not trained",
                 st->dir, why);
    else if (!hf_config_check_seq_len(&h, s->train.seq_len, err, errlen))
        rc = 0;
    if (rc == 0) {
        memset(m, 0, sizeof *m);
        snprintf(m->preset, sizeof m->preset, "custom");
        *m = (struct model_shape){.dim = h.dim, .n_layers = h.n_layers, .n_heads = h.n_heads,
                                  .ffn_dim = h.ffn_dim, .vocab = h.vocab, .embed_std = 0.02,
                                  .rope_theta = h.rope_theta, .norm_eps = h.norm_eps};
        snprintf(m->preset, sizeof m->preset, "custom");
    }
    hf_config_free(&h);
    return rc;
}

int sft_start_apply(const struct sft_start *st, struct job_spec *s, char *err, size_t errlen)
{
    struct model_shape m;
    struct norm_variant n;
    if (st->hf) {
        if (hf_shape(st, s, &m, err, errlen))
            return -1;
        variant_preset("pre", &n); /* a Hugging Face Llama is Pre-LN */
    } else {
        struct job_spec ck;
        struct train_state ts;
        if (checkpoint_read_spec(st->dir, &ts, &ck, err, errlen))
            return -1;
        m = ck.model;
        n = ck.norm;
    }
    return take_model(st, s, &m, err, errlen) || take_norm(st, s, &n, err, errlen) ? -1 : 0;
}

/* config.json's eos_token_id (the first of a list): 1 and *id, or 0. */
static int hf_eos(const char *dir, uint32_t *id)
{
    char path[4500];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *c = json_load_file(path, 0, NULL), *v = c ? json_object_get(c, "eos_token_id") : NULL;
    if (json_is_array(v))
        v = json_array_get(v, 0);
    int ok = json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1 << 30;
    if (ok)
        *id = (uint32_t)json_integer_value(v);
    json_decref(c);
    return ok;
}

/* Where a start's tokenizer is: a Hugging Face folder, or the shards (a
 * glob) the first checkpoint down its chain of starts was trained on. */
static int text_of(const struct sft_start *st, const char *work_dir, int depth,
                   struct sft_text_source *src, char *err, size_t errlen)
{
    if (st->hf) {
        src->hf = 1;
        snprintf(src->path, sizeof src->path, "%s", st->dir);
        return 0;
    }
    struct job_spec ck;
    struct train_state ts;
    if (checkpoint_read_spec(st->dir, &ts, &ck, err, errlen))
        return -1;
    if (ck.format == FORMAT_INSTRUCTIONS) {
        struct sft_start from;
        if (depth >= MAX_DEPTH) {
            snprintf(err, errlen, "init.from: %s: a chain of starts %d deep (a loop?)", st->dir,
                     depth);
            return -1;
        }
        return find_from(&ck.init, work_dir, &from, err, errlen) ||
                       text_of(&from, work_dir, depth + 1, src, err, errlen)
                   ? -1
                   : 0;
    }
    src->hf = 0;
    snprintf(src->path, sizeof src->path, "%s", ck.train_glob);
    return 0;
}

int sft_start_text(const struct sft_start *st, const char *work_dir, struct sft_text_source *src,
                   char *err, size_t errlen)
{
    memset(src, 0, sizeof *src);
    return text_of(st, work_dir, 0, src, err, errlen);
}

int sft_start_tokenizer(const struct sft_text_source *src, struct tokenizer **tok,
                        uint32_t *end_token, char *err, size_t errlen)
{
    struct eval_tokenizer t;
    char why[8192];
    *tok = NULL;
    if (src->hf ? eval_tokenizer_of_folder(src->path, &t, why, sizeof why)
                : eval_tokenizer_of_data(src->path, NULL, NULL, &t, why, sizeof why)) {
        snprintf(err, errlen, "init.from: the tokenizer of %.4300s: %.3000s", src->path, why);
        return -1;
    }
    *tok = t.tok;
    if (!src->hf || !hf_eos(src->path, end_token) || *end_token >= tokenizer_vocab_size(*tok))
        *end_token = tokenizer_end_token(*tok);
    return 0;
}
