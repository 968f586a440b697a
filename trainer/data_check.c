/* The full data check: see data_check.h. */
#include "trainer/data_check.h"

#include <limits.h>
#include <stdint.h>

#include "common/shard.h"
#include "spec/data.h"
#include "spec/fields.h"

/* Raises *(uint32_t *)ctx to the largest token id of the shard at path. */
static int scan_max_token(const char *path, void *ctx, char *msg, size_t msglen)
{
    uint32_t *max_tok = ctx;
    struct shard sh;
    if (shard_open(&sh, path, msg, msglen))
        return -1;
    for (int64_t i = 0; i < sh.n_tokens; i++) {
        uint32_t t = shard_token(&sh, i);
        if (t > *max_tok)
            *max_tok = t;
    }
    shard_close(&sh);
    return 0;
}

int spec_check_data(struct job_spec *s, struct spec_error *err)
{
    int meta_vocab;
    if (spec_check_files(s, &meta_vocab, err))
        return -1;
    /* instruction records are tokenized with the starting checkpoint's
     * tokenizer, whose vocabulary is the model's (sft/start.h) */
    if (meta_vocab || s->format == FORMAT_INSTRUCTIONS)
        return 0;
    uint32_t max_tok = 0;
    if (spec_each_file(s->train_glob, "data.train", scan_max_token, &max_tok, err) ||
        spec_each_file(s->val_glob, "data.val", scan_max_token, &max_tok, err))
        return -1;
    if (s->model.vocab == 0) {
        if (max_tok >= (uint32_t)INT_MAX)
            return spec_fail(err, "model.vocab", "the data's largest token id %u is too large",
                             max_tok);
        s->model.vocab = max_tok < 1 ? 2 : (int)max_tok + 1;
        return 0;
    }
    if (max_tok >= (uint32_t)s->model.vocab)
        return spec_fail(err, "model.vocab", "the data holds token id %u, outside vocab %d", max_tok,
                         s->model.vocab);
    return 0;
}
