#include "analyze/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/path.h"
#include "trainer/checkpoint.h"
#include "trainer/train.h"

int analyze_open_source(const char *dir, struct source *src, const char *val, int need_val, int T,
                        int B, int *max_B, char *err, size_t errlen)
{
    char path[4400];
    memset(src, 0, sizeof(*src));
    if (path_fmt(path, sizeof(path), err, errlen, "%s/state.json", dir))
        return -1;
    if (access(path, F_OK) == 0) {
        if (checkpoint_read_spec(dir, NULL, &src->spec, err, errlen))
            return -1;
        struct job_spec *s = &src->spec;
        if (T)
            s->train.seq_len = T;
        src->mc = train_model_config(s);
        src->mc.forward_only = 1;
        *max_B = B ? B : s->train.micro_batch;
        src->val = val ? val : s->val_glob;
        snprintf(src->what, sizeof src->what, "norm %s", s->norm.name);
        return 0;
    }
    if (path_fmt(path, sizeof(path), err, errlen, "%s/config.json", dir))
        return -1;
    if (access(path, F_OK) != 0) {
        snprintf(err, errlen, "%s: neither a cod checkpoint (no state.json) nor a Hugging Face "
                              "model folder (no config.json)", dir);
        return -1;
    }
    src->hf = 1;
    if (hf_config_read(dir, &src->h, err, errlen))
        return -1;
    if (!val && need_val) {
        snprintf(err, errlen, "%s is a Hugging Face model folder: --val names its held-out "
                              "shards (cod-prep --tokenizer hf with the model's tokenizer.json)",
                 dir);
        return -1;
    }
    if (!T)
        T = src->h.max_pos && src->h.max_pos < 2048 ? src->h.max_pos : 2048;
    if (hf_config_check_seq_len(&src->h, T, err, errlen))
        return -1;
    hf_model_config(&src->h, T, &src->mc);
    *max_B = B ? B : (8192 + T - 1) / T;
    src->val = val;
    snprintf(src->what, sizeof src->what, "%s%s%s%s", src->h.arch,
             src->h.n_kv_heads != src->h.n_heads ? ", grouped-query" : "",
             src->h.tied ? ", tied embeddings" : "", src->h.llama3_rope ? ", llama3 RoPE" : "");
    return 0;
}

double analyze_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void analyze_print_memory(const struct model *m, const char *device)
{
    const struct ops *o = m->ops;
    double mib = 1 << 20;
    double weights = (double)m->n_real * sizeof(real) +
                     (o->act_is_real ? 0 : (double)m->n_params * o->act_bytes);
    printf("model: %.2f M parameters; on %s %.1f MiB: weights %.1f MiB (%s), activations "
           "%.1f MiB for %d × %d tokens\n",
           (double)m->n_weights / 1e6, device, (double)m->bytes / mib, weights / mib,
           o->act_is_real ? (sizeof(real) == 4 ? "fp32" : "fp64") : "bf16",
           ((double)m->bytes - weights) / mib, m->max_B, m->cfg.seq_len);
}


int analyze_positive(const char *flag, const char *s, long long *out)
{
    char *end;
    *out = strtoll(s, &end, 10);
    if (*end || *out <= 0 || *out > 1 << 30) {
        fprintf(stderr, "cod-analyze: %s %s: expected a positive integer\n", flag, s);
        return -1;
    }
    return 0;
}
