/* An item's texts into tokens as the harness's HFLM encodes a request
 * (lm_eval/api/model.py's _encode_pair, loglikelihood): the context's
 * trailing whitespace moves to the continuation; the context and the whole
 * string are encoded, each with the doc token first where the BOS policy
 * says, and the continuation is the whole's tokens after the context's
 * count; an empty context is the doc token alone. */
#ifndef COD_EVAL_ENCODE_H
#define COD_EVAL_ENCODE_H

#include <stddef.h>

#include "eval/task.h"

/* Encodes every item of t (threads share the items). An item that cannot
 * be scored (a continuation of no token, or of more than max_len) is
 * flagged in bad[i] with why[i] (malloc'ed). 0, or -1 with err (out of
 * memory, a tokenizer's failure). */
int eval_encode(struct eval_task *t, const struct eval_encoding *e, unsigned char *bad,
                char **why, char *err, size_t errlen);

#endif
