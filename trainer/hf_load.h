/* The weights of a model folder into a model, by Hugging Face tensor name:
 * DIR/model.safetensors, or the shards DIR/model.safetensors.index.json
 * lists (a cod checkpoint's model.safetensors reads the same way). Each
 * file is mapped, not read, and each tensor goes to the backend a slice of
 * rows at a time, converted from bf16, fp16, fp32 or fp64: the host holds
 * one slice (64 MiB), never the model. A tensor missing, of another shape,
 * or one the model has no place for is an error naming it (a rotary_emb
 * buffer, and a tied model's stored lm_head, are passed over as
 * transformers passes over them). */
#ifndef COD_HF_LOAD_H
#define COD_HF_LOAD_H

#include <stddef.h>

#include "trainer/model.h"

/* 0, or -1 with err naming the file and the tensor. */
int hf_load_weights(const char *dir, struct model *m, char *err, size_t errlen);

#endif
