/* cod-analyze's analyses over held-out tokens: prune, angular, stats and
 * logits run the model forward over shards (or a row set) and print what
 * they measured as tables and heat maps; with --out they write prune.json,
 * angular.json, stats.json or the logits' .npy file. */
#ifndef COD_ANALYZE_HELDOUT_H
#define COD_ANALYZE_HELDOUT_H

#include "analyze/eval.h"
#include "kernels/ops.h"

/* cmd (prune, angular, stats or logits) on dir's model over val (NULL: a
 * checkpoint's data.val), sequences of T in batches of B (0: dir's own),
 * the first `tokens` held-out tokens; at->n tasks go with prune. Exit
 * status: 0 done, 1 failed, 2 a bad source. */
int analyze_heldout(const char *cmd, const char *dir, const struct ops *ops, const char *device,
                    const char *val, int T, int B, long long tokens, const char *out,
                    const struct analyze_tasks *at);

#endif
