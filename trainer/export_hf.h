/* Export of a checkpoint to a Hugging Face LLaMA folder (config.json and
 * model.safetensors, fp32) that transformers' LlamaForCausalLM loads and
 * runs to the same logits. Only a model whose every block computes what
 * stock LLaMA computes can be exported: Pre-LN, unscaled norms, a plain
 * residual — pre, and scaled_init / depth_scaled_init, which differ from it
 * only at init. Every other variant (lns, post, deepnorm, mixln, sandwich,
 * layerscale, skipinit, an object form not equivalent to pre) is refused
 * with the reason, rather than written as a model that would silently
 * compute something else. */
#ifndef COD_EXPORT_HF_H
#define COD_EXPORT_HF_H

#include <stddef.h>

#include "spec/spec.h"

/* 0 if stock LLaMA computes the spec's model; -1 with err naming the
 * variant and the block setting LLaMA cannot express. */
int export_hf_supported(const struct job_spec *s, char *err, size_t errlen);

/* Writes out_dir/config.json and out_dir/model.safetensors from the
 * checkpoint directory ckpt_dir whose spec is s. 0, or -1 with err. */
int export_hf(const char *ckpt_dir, const struct job_spec *s, const char *out_dir, char *err,
              size_t errlen);

#endif
