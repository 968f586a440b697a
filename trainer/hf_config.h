/* A Hugging Face model folder's config.json, read into what cod's model
 * computes: LlamaForCausalLM (Llama 2 and 3), MistralForCausalLM and
 * Qwen2ForCausalLM, with grouped-query attention, tied or untied
 * embeddings, rope_theta and Llama 3's rope_scaling, rms_norm_eps, Qwen2's
 * q/k/v biases and head_dim. Anything the model would compute otherwise (an
 * unknown architecture, a mixture of experts, another activation, another
 * RoPE scaling, biases elsewhere, a quantized model, a sliding window
 * shorter than the sequence) is refused with the config field named, never
 * computed as something else (docs/formats.md). */
#ifndef COD_HF_CONFIG_H
#define COD_HF_CONFIG_H

#include <stddef.h>

#include "trainer/model.h"

struct hf_config {
    char arch[48];
    int dim, n_layers, n_heads, n_kv_heads, head_dim, ffn_dim, vocab;
    int max_pos;            /* max_position_embeddings; 0 when not given */
    int tied, qkv_bias;
    double rope_theta, norm_eps;
    long sliding_window;    /* the attention window, 0 when none applies */
    const char *window_field; /* the field that set it */
    int llama3_rope;        /* rope_scaling of rope_type "llama3" */
    double *rope_freq;      /* [head_dim / 2] inverse frequencies, scaling applied */
};

/* Reads DIR/config.json. 0, or -1 with err naming the file and the field. */
int hf_config_read(const char *dir, struct hf_config *h, char *err, size_t errlen);
void hf_config_free(struct hf_config *h);
/* 0 when sequences of T tokens are computed as the model computes them;
 * -1 with err naming the sliding window that is shorter. */
int hf_config_check_seq_len(const struct hf_config *h, int T, char *err, size_t errlen);
/* The forward-only model_config of sequences of T tokens (pre norm);
 * its rope_freq points into h. */
void hf_model_config(const struct hf_config *h, int T, struct model_config *c);

#endif
