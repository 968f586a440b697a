/* libFuzzer harness: reading a checkpoint (trainer/checkpoint.c), which a
 * worker resumes from and cod-analyze reads, wherever it came from. An
 * input is a state.json, optionally followed by a line
 * "--model.safetensors--" and the checkpoint's model.safetensors. The
 * state is read as cod-analyze reads it (its spec through spec_from_json),
 * then the whole checkpoint is loaded into a small model made once: two
 * layerscale blocks of width 8 whose FFN width, 12, is padded in the
 * parameter buffer, so that loading unpacks rows. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spec/spec.h"
#include "tests/fuzz/fuzz_util.h"
#include "trainer/checkpoint.h"

static struct model m;
static char dir[300], state_path[400], model_path[400];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    struct model_config c = {.dim = 8, .n_layers = 2, .n_heads = 2, .ffn_dim = 12, .vocab = 16,
                             .seq_len = 4, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = 0.02};
    char err[512];
    if (variant_preset("layerscale", &c.norm) != 0 || model_create(&m, &ops_cpu, &c, 1, err, sizeof err) != 0)
        fuzz_die("model_create: %s", err);
    fuzz_subdir(dir, sizeof dir, "step_00000004");
    snprintf(state_path, sizeof state_path, "%s/state.json", dir);
    snprintf(model_path, sizeof model_path, "%s/model.safetensors", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const unsigned char *model;
    size_t model_n, state_n = fuzz_split(data, size, "\n--model.safetensors--\n", &model, &model_n);
    fuzz_write(state_path, data, state_n);
    if (model)
        fuzz_write(model_path, model, model_n);
    else if (unlink(model_path) != 0 && errno != ENOENT)
        fuzz_die("unlink %s", model_path);
    struct train_state st;
    json_t *spec;
    char err[4600];
    if (checkpoint_read_state(dir, &st, &spec, err, sizeof err) == 0) {
        struct job_spec s;
        struct spec_error se;
        spec_from_json(spec, &s, &se);
        json_decref(spec);
    }
    if (checkpoint_load(dir, &m, NULL, NULL, &st, &spec, err, sizeof err) == 0)
        json_decref(spec);
    return 0;
}
