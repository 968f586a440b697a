/* A job spec from a file and command-line flags, and a sweep's grid from
 * KEY=V1,V2 words: what submit and sweep share. */
#ifndef COD_CLI_SPEC_FLAGS_H
#define COD_CLI_SPEC_FLAGS_H

#include <jansson.h>

#include "clients/cli/args.h"

/* Appends the spec flags (--model, --steps, --set ...) to the option table
 * opts (room entries, the used ones first, the rest zero), each recording
 * (flag, value) in edits. */
void spec_opts_append(struct opt *opts, int room, struct strlist *edits);

/* Usage lines for the spec flags, to close a command's usage string. */
#define SPEC_FLAGS_USAGE                                                                         \
    "spec flags (over the spec file's fields; the server fills in the rest):\n"                \
    "  --name NAME  --model PRESET|JSON  --norm VARIANT|JSON  --steps N  --lr X\n"              \
    "  --warmup N  --seq-len N  --batch SEQS  --micro-batch SEQS  --seed N\n"                   \
    "  --precision mixed|bf16  --packing stream|documents  --embed-std X\n"                      \
    "  --gains learned|frozen\n"                                                                \
    "  --eval-every N  --stats-every N  --device cpu|cuda|any  --gpus N\n"                      \
    "  --data DIR (DIR/train_*.bin, DIR/val_*.bin)  --data-train GLOB  --data-val GLOB\n"       \
    "  --priority N  --max-attempts N\n"                                                        \
    "  --set PATH=VALUE  any field by its dotted path (train.beta2=0.95,\n"                     \
    "                    analysis.prune=false); VALUE is JSON, else a string\n"

/* The spec: file's JSON ("-" for stdin, NULL for none: {}) with the edits
 * applied in order. 0, or an exit code after saying what is wrong. */
int spec_build(struct cli *c, const char *file, const struct strlist *edits, json_t **out);

/* Adds one axis, "KEY=V1,V2,..." or "KEY=[JSON list]", to grid. KEY is a
 * spec flag's name without "--" (lr, seq-len, ...) or a dotted spec path.
 * 0, or an exit code after saying what is wrong. */
int grid_add(struct cli *c, json_t *grid, const char *word);

#endif
