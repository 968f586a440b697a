#include "trainer/export_hf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/fileio.h"
#include "common/path.h"
#include "spec/params.h"
#include "trainer/block.h"
#include "trainer/safetensors.h"

int export_hf_supported(const struct job_spec *s, char *err, size_t errlen)
{
    int L = s->model.n_layers;
    for (int l = 1; l <= L; l++) {
        struct block_cfg b;
        variant_block(&s->norm, l, L, &b);
        const char *why = NULL;
        char scale[96];
        if (b.post)
            why = "normalizes after the residual add (Post-LN); LLaMA normalizes before";
        else if (b.sandwich)
            why = "normalizes each sub-layer's output too (sandwich); LLaMA has no such norm";
        else if (b.s_attn != 1 || b.s_ffn != 1) {
            snprintf(scale, sizeof(scale),
                     "scales its sub-layers by %.4g / %.4g (1/sqrt(layer)); LLaMA does not",
                     b.s_attn, b.s_ffn);
            why = scale;
        } else if (b.residual == RES_LAYERSCALE || b.residual == RES_SKIPINIT)
            why = "multiplies each branch by a learned scale; LLaMA has no such parameter";
        else if (b.alpha != 1)
            why = "multiplies the residual stream by alpha at each add; LLaMA adds it as is";
        if (why) {
            snprintf(err, errlen,
                     "norm variant \"%s\" cannot be exported to a Hugging Face LLaMA: block %d %s, "
                     "so LlamaForCausalLM would silently compute another model "
                     "(exportable: pre, scaled_init, depth_scaled_init)",
                     s->norm.name, l, why);
            return -1;
        }
    }
    return 0;
}

/* The config transformers needs to rebuild cod's LLaMA (docs/variants.md). */
static json_t *config_json(const struct job_spec *s)
{
    const struct model_shape *m = &s->model;
    return json_pack("{s:[s], s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:b, s:s, "
                     "s:s, s:b, s:b, s:f, s:f}",
                     "architectures", "LlamaForCausalLM", "model_type", "llama", "hidden_size",
                     m->dim, "intermediate_size", m->ffn_dim, "num_attention_heads", m->n_heads,
                     "num_key_value_heads", m->n_heads, "head_dim", m->dim / m->n_heads,
                     "num_hidden_layers", m->n_layers, "vocab_size", m->vocab,
                     "max_position_embeddings", s->train.seq_len, "rms_norm_eps",
                     s->model.norm_eps, "rope_theta", s->model.rope_theta, "tie_word_embeddings", 0, "hidden_act", "silu",
                     "torch_dtype", "float32", "attention_bias", 0, "mlp_bias", 0,
                     "attention_dropout", 0.0, "initializer_range", s->norm.init_std);
}

/* The tensors LlamaForCausalLM holds, in cod's shapes: HF stores a Linear
 * as [out, in], as cod does. RoPE needs no q/k permutation: cod's is the
 * non-interleaved rotate_half of HF's LLaMA (docs/variants.md), not Meta's
 * interleaved original. */
static int list_tensors(const struct job_spec *s, struct st_tensor *t)
{
    const struct model_shape *m = &s->model;
    const struct param_dims d = params_dims_of_spec(s);
    struct param_tensor p[PARAMS_BLOCK_MAX];
    int n = 0;
#define ADD(q, ...)                                                                        \
    do {                                                                                   \
        snprintf(t[n].name, sizeof(t[n].name), __VA_ARGS__);                               \
        t[n].dtype = ST_F32;                                                               \
        t[n].ndim = (q)->ndim;                                                             \
        t[n].shape[0] = (q)->rows;                                                         \
        t[n].shape[1] = (q)->cols;                                                         \
        n++;                                                                               \
    } while (0)
    int c = params_outer(&d, 0, p);
    for (int k = 0; k < c; k++)
        ADD(&p[k], "%s", p[k].name);
    c = params_block(&d, &s->norm, p);
    for (int l = 0; l < m->n_layers; l++)
        for (int k = 0; k < c; k++)
            ADD(&p[k], "model.layers.%d.%s", l, p[k].name);
    c = params_outer(&d, 1, p);
    for (int k = 0; k < c; k++)
        ADD(&p[k], "%s", p[k].name);
#undef ADD
    return n;
}

int export_hf(const char *ckpt_dir, const struct job_spec *s, const char *out_dir, char *err,
              size_t errlen)
{
    if (export_hf_supported(s, err, errlen))
        return -1;
    char path[4400];
    struct st_file in;
    if (path_fmt(path, sizeof(path), err, errlen, "%s/model.safetensors", ckpt_dir) ||
        st_read(path, &in, err, errlen))
        return -1;
    int max_tensors = PARAMS_OUTER_MAX * 2 + PARAMS_BLOCK_MAX * s->model.n_layers;
    struct st_tensor *t = calloc((size_t)max_tensors, sizeof(*t));
    int n = t ? list_tensors(s, t) : 0;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)t[i].shape[0] * (size_t)t[i].shape[1];
    float *data = t ? malloc(total * sizeof(float)) : NULL;
    int rc = -1;
    if (!data) {
        snprintf(err, errlen, "out of memory exporting %s", ckpt_dir);
        goto out;
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        int64_t shape[2] = {t[i].shape[0], t[i].shape[1]};
        char inner[512];
        if (st_get_f32(&in, t[i].name, shape, t[i].ndim, data + off, inner, sizeof(inner))) {
            snprintf(err, errlen, "%s: %s", path, inner);
            goto out;
        }
        t[i].data = data + off;
        off += (size_t)shape[0] * (size_t)shape[1];
    }
    if (fio_mkdir_p(out_dir, err, errlen))
        goto out;
    const char *meta[] = {"format", "pt", "producer", "cod"};
    if (path_fmt(path, sizeof(path), err, errlen, "%s/model.safetensors", out_dir) ||
        st_write(path, t, n, meta, 2, err, errlen))
        goto out;
    if (fio_write_json(config_json(s), out_dir, "config.json", err, errlen))
        goto out;
    rc = 0;
out:
    free(data);
    free(t);
    st_free(&in);
    return rc;
}
