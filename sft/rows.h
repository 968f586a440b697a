/* Instruction records into training rows (a row set, common/rowset.h),
 * as LLM-Adapters' finetune.py tokenizes them:
 *   the tokens: the doc token where pretraining put it (before the text,
 *     or, for a tokenizer that ends documents with it, as the end token),
 *     then the text (prompt and response) encoded whole;
 *   the cut: at cutoff_len tokens (0: none), the doc token counted;
 *   the end token: appended when the last token is not already one and the
 *     record is shorter than cutoff_len (a record cut short gets none);
 *   the loss: over the tokens from the prompt's length on (the prompt
 *     encoded alone, with its doc token, cut the same way), which are the
 *     response's and the end token; over every token with train_on_inputs.
 * A record is a row of its own, or with pack the records run end to end
 * and are cut into blocks of a row's length (the last one shorter). A row
 * with no target (a prompt that fills the cut) is left out and counted. */
#ifndef COD_SFT_ROWS_H
#define COD_SFT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "text/tokenizer.h"

struct sft_tokens {
    const struct tokenizer *tok;
    uint32_t doc_token, end_token;
    int doc_at_end;       /* the doc token ends a document: it is the end token */
};

struct sft_rows_cfg {
    int row_tokens;       /* seq_len + 1 */
    int cutoff_len;       /* 0: no cut */
    int pack, train_on_inputs;
    long val_size;        /* records of the train set held out (a seeded choice) */
};

struct sft_rows_stats {
    long records;         /* read */
    long cut;             /* cut at cutoff_len */
    long no_target;       /* left out: nothing of theirs is a target */
    long rows;
    int64_t tokens;       /* the rows' tokens */
    int64_t targets;      /* the loss's tokens */
};

/* One record's tokens and their flags (1: a target) into ids and flags
 * (caller's buffers of max(cutoff_len, text's tokens + 2) entries; the
 * rows module sizes them). Exposed for the tests' hand-worked cases.
 * Returns the count, or -1 with err. */
int sft_record_tokens(const struct sft_tokens *t, struct tok_session *ses,
                      const struct sft_rows_cfg *c, const char *text, size_t prompt_len,
                      size_t len, struct tok_ids *ids, uint8_t **flags, size_t *flags_cap,
                      int *cut, char *err, size_t errlen);

/* The records of train_pattern into the row set train_out, and those of
 * val_pattern (or, with val_size, the held-out records of the train set)
 * into val_out (NULL pattern and no val_size: none). Statistics per set. */
int sft_make_rows(const struct sft_tokens *t, const struct sft_rows_cfg *c,
                  const char *train_pattern, const char *val_pattern, const char *train_out,
                  const char *val_out, struct sft_rows_stats *train, struct sft_rows_stats *val,
                  char *err, size_t errlen);

#endif
