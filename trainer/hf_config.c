#include "trainer/hf_config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/path.h"

static const char *const ARCHS[] = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};

/* Each reader returns NULL, or what is wrong with the field (err gets the
 * field's name and that). */
struct reader {
    json_t *root;
    const char *path;
    char *err;
    size_t errlen;
};

static int fail(struct reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct reader *r, const char *field, const char *fmt, ...)
{
    int n = snprintf(r->err, r->errlen, "%s: %s: ", r->path, field);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* a field absent or JSON null */
static int absent(const json_t *v) { return !v || json_is_null(v); }

/* A positive integer field; def < 0: required. */
static int get_int(struct reader *r, json_t *obj, const char *field, int def, int *out)
{
    json_t *v = json_object_get(obj, field);
    if (absent(v)) {
        if (def < 0)
            return fail(r, field, "missing (a positive integer)");
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > 1 << 30)
        return fail(r, field, "expected a positive integer");
    *out = (int)json_integer_value(v);
    return 0;
}

static int get_num(struct reader *r, json_t *obj, const char *field, double def, double *out)
{
    json_t *v = json_object_get(obj, field);
    if (absent(v)) {
        if (def < 0)
            return fail(r, field, "missing (a positive number)");
        *out = def;
        return 0;
    }
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return fail(r, field, "expected a positive number");
    *out = json_number_value(v);
    return 0;
}

static int get_bool(struct reader *r, const char *field, int def, int *out)
{
    json_t *v = json_object_get(r->root, field);
    if (absent(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v))
        return fail(r, field, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* Fields that would make the model something cod does not compute. */
static int refuse_others(struct reader *r)
{
    static const char *const moe[] = {"num_local_experts", "num_experts", "num_experts_per_tok",
                                      "moe_intermediate_size", "n_routed_experts"};
    for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
        json_t *v = json_object_get(r->root, moe[i]);
        if (!absent(v) && !(json_is_integer(v) && json_integer_value(v) == 0))
            return fail(r, moe[i], "a mixture of experts is not read (dense models only)");
    }
    if (!absent(json_object_get(r->root, "quantization_config")))
        return fail(r, "quantization_config", "a quantized model is not read (bf16, fp16 or fp32 "
                                              "weights only)");
    const char *act_field = json_object_get(r->root, "hidden_act") ? "hidden_act"
                                                                   : "hidden_activation";
    json_t *act = json_object_get(r->root, act_field);
    if (!absent(act) && (!json_is_string(act) || strcmp(json_string_value(act), "silu")))
        return fail(r, act_field, "%s%s%s is not computed (SwiGLU's silu only)",
                    json_is_string(act) ? "\"" : "", json_is_string(act) ? json_string_value(act)
                                                                           : "this value",
                    json_is_string(act) ? "\"" : "");
    static const char *const biases[] = {"attention_bias", "mlp_bias"};
    for (size_t i = 0; i < 2; i++) {
        int on = 0;
        if (get_bool(r, biases[i], 0, &on))
            return -1;
        /* Qwen2's q/k/v biases are the architecture's own; others are not read */
        if (on)
            return fail(r, biases[i], "true: biases %s are not read (Qwen2's q/k/v biases are)",
                        i ? "in the MLP" : "on every attention projection");
    }
    json_t *prf = json_object_get(r->root, "partial_rotary_factor");
    if (!absent(prf) && !(json_is_number(prf) && json_number_value(prf) == 1))
        return fail(r, "partial_rotary_factor", "RoPE on part of each head is not computed");
    return 0;
}

/* rope_theta and rope_scaling, or transformers' newer rope_parameters. */
static int read_rope(struct reader *r, struct hf_config *h)
{
    json_t *params = json_object_get(r->root, "rope_parameters");
    const char *scaling_field = "rope_scaling";
    json_t *scaling = json_object_get(r->root, "rope_scaling");
    json_t *theta_obj = r->root;
    if (!absent(params)) {
        if (!json_is_object(params))
            return fail(r, "rope_parameters", "expected an object");
        scaling = params;
        scaling_field = "rope_parameters";
        theta_obj = params;
    }
    if (get_num(r, theta_obj, "rope_theta", 10000, &h->rope_theta))
        return -1;
    int hd = h->head_dim, h2 = hd / 2;
    h->rope_freq = malloc((size_t)h2 * sizeof(double));
    if (!h->rope_freq)
        return fail(r, "rope_theta", "out of memory");
    for (int i = 0; i < h2; i++)
        h->rope_freq[i] = pow(h->rope_theta, -2.0 * i / hd);
    if (absent(scaling))
        return 0;
    if (!json_is_object(scaling))
        return fail(r, scaling_field, "expected an object or null");
    json_t *type = json_object_get(scaling, "rope_type");
    const char *type_field = "rope_type";
    if (absent(type)) {
        type = json_object_get(scaling, "type");
        type_field = "type";
    }
    char field[64];
    snprintf(field, sizeof field, "%s.%s", scaling_field, type_field);
    const char *t = json_is_string(type) ? json_string_value(type) : NULL;
    if (!t)
        return fail(r, field, "missing (\"default\" or \"llama3\" are computed)");
    if (!strcmp(t, "default"))
        return 0;
    if (strcmp(t, "llama3"))
        return fail(r, field, "\"%s\" is not computed (\"default\" and \"llama3\" are)", t);
    /* Llama 3.1's: wavelengths longer than the original context / low_freq_factor
     * are stretched by factor, shorter than it / high_freq_factor kept, and
     * those between blended (transformers' _compute_llama3_parameters) */
    double factor = 1, low = 1, high = 2;
    int orig = 1;
    struct reader sub = *r;
    char sub_path[4400];
    snprintf(sub_path, sizeof sub_path, "%s: %s", r->path, scaling_field);
    sub.path = sub_path;
    if (get_num(&sub, scaling, "factor", -1, &factor) ||
        get_num(&sub, scaling, "low_freq_factor", -1, &low) ||
        get_num(&sub, scaling, "high_freq_factor", -1, &high) ||
        get_int(&sub, scaling, "original_max_position_embeddings", -1, &orig))
        return -1;
    if (!(high > low))
        return fail(r, scaling_field, "high_freq_factor must exceed low_freq_factor");
    double low_wl = orig / low, high_wl = orig / high;
    for (int i = 0; i < h2; i++) {
        double f = h->rope_freq[i], wl = 2 * M_PI / f;
        if (wl < high_wl)
            continue;
        if (wl > low_wl) {
            h->rope_freq[i] = f / factor;
        } else {
            double s = (orig / wl - low) / (high - low);
            h->rope_freq[i] = (1 - s) * f / factor + s * f;
        }
    }
    h->llama3_rope = 1;
    return 0;
}

/* Which attention window applies, if any (checked against the sequence
 * length later). */
static int read_window(struct reader *r, struct hf_config *h)
{
    int use = 1;
    if (!strcmp(h->arch, "Qwen2ForCausalLM") && get_bool(r, "use_sliding_window", 0, &use))
        return -1;
    json_t *types = json_object_get(r->root, "layer_types");
    int sliding_layers = 0;
    if (!absent(types)) {
        if (!json_is_array(types))
            return fail(r, "layer_types", "expected a list");
        size_t i;
        json_t *v;
        json_array_foreach(types, i, v)
        {
            const char *s = json_is_string(v) ? json_string_value(v) : "";
            if (!strcmp(s, "sliding_attention"))
                sliding_layers = 1;
            else if (strcmp(s, "full_attention"))
                return fail(r, "layer_types", "entry %zu is neither \"full_attention\" nor "
                                              "\"sliding_attention\"", i);
        }
        use = sliding_layers;
    }
    if (!strcmp(h->arch, "LlamaForCausalLM") && !sliding_layers)
        return 0;
    json_t *w = json_object_get(r->root, "sliding_window");
    if (!use || absent(w))
        return 0;
    if (!json_is_integer(w) || json_integer_value(w) <= 0)
        return fail(r, "sliding_window", "expected a positive integer or null");
    h->sliding_window = (long)json_integer_value(w);
    h->window_field = "sliding_window";
    return 0;
}

int hf_config_read(const char *dir, struct hf_config *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    char path[4200];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/config.json", dir))
        return -1;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s: %s (line %d)", path, je.text, je.line);
        return -1;
    }
    struct reader r = {root, path, err, errlen};
    int rc = -1;
    json_t *archs = json_object_get(root, "architectures");
    const char *arch = json_is_array(archs) && json_array_size(archs) == 1 &&
                               json_is_string(json_array_get(archs, 0))
                           ? json_string_value(json_array_get(archs, 0))
                           : NULL;
    int known = 0;
    for (size_t i = 0; arch && i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        known |= !strcmp(arch, ARCHS[i]);
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: not a JSON object", path);
        goto out;
    }
    if (!known) {
        fail(&r, "architectures", "%s%s%s is not read (one of LlamaForCausalLM, "
                                  "MistralForCausalLM, Qwen2ForCausalLM)",
             arch ? "\"" : "", arch ? arch : "expected a list of one name", arch ? "\"" : "");
        goto out;
    }
    snprintf(h->arch, sizeof h->arch, "%s", arch);
    int is_llama = !strcmp(arch, "LlamaForCausalLM"), is_qwen = !strcmp(arch, "Qwen2ForCausalLM");
    if (refuse_others(&r) || get_int(&r, root, "hidden_size", -1, &h->dim) ||
        get_int(&r, root, "intermediate_size", -1, &h->ffn_dim) ||
        get_int(&r, root, "num_hidden_layers", -1, &h->n_layers) ||
        get_int(&r, root, "num_attention_heads", -1, &h->n_heads) ||
        get_int(&r, root, "vocab_size", -1, &h->vocab) ||
        get_int(&r, root, "max_position_embeddings", 0, &h->max_pos))
        goto out;
    /* each architecture's own default where a config leaves it out */
    if (get_int(&r, root, "num_key_value_heads", is_llama ? h->n_heads : is_qwen ? 32 : 8,
                &h->n_kv_heads))
        goto out;
    if (h->n_heads % h->n_kv_heads) {
        fail(&r, "num_key_value_heads", "%d does not divide num_attention_heads %d",
             h->n_kv_heads, h->n_heads);
        goto out;
    }
    if (absent(json_object_get(root, "head_dim")) && h->dim % h->n_heads) {
        fail(&r, "hidden_size", "%d is not a multiple of num_attention_heads %d (and no "
                                "head_dim is given)", h->dim, h->n_heads);
        goto out;
    }
    if (get_int(&r, root, "head_dim", h->dim / h->n_heads, &h->head_dim))
        goto out;
    if (h->head_dim % 2) {
        fail(&r, "head_dim", "%d is odd; RoPE rotates pairs", h->head_dim);
        goto out;
    }
    if (get_num(&r, root, "rms_norm_eps", 1e-6, &h->norm_eps) ||
        get_bool(&r, "tie_word_embeddings", 0, &h->tied) || read_rope(&r, h) ||
        read_window(&r, h))
        goto out;
    h->qkv_bias = is_qwen;
    rc = 0;
out:
    json_decref(root);
    if (rc)
        hf_config_free(h);
    return rc;
}

void hf_config_free(struct hf_config *h)
{
    free(h->rope_freq);
    h->rope_freq = NULL;
}

int hf_config_check_seq_len(const struct hf_config *h, int T, char *err, size_t errlen)
{
    if (h->sliding_window && h->sliding_window < T) {
        snprintf(err, errlen,
                 "config.json: %s: %ld is shorter than the sequence of %d tokens; a sliding "
                 "window is not computed (--seq-len %ld or less reads the model exactly)",
                 h->window_field, h->sliding_window, T, h->sliding_window);
        return -1;
    }
    return 0;
}

void hf_model_config(const struct hf_config *h, int T, struct model_config *c)
{
    memset(c, 0, sizeof(*c));
    c->dim = h->dim;
    c->n_layers = h->n_layers;
    c->n_heads = h->n_heads;
    c->ffn_dim = h->ffn_dim;
    c->vocab = h->vocab;
    c->seq_len = T;
    variant_preset("pre", &c->norm);
    c->rope_theta = h->rope_theta;
    c->norm_eps = h->norm_eps;
    c->n_kv_heads = h->n_kv_heads;
    c->head_dim = h->head_dim;
    c->qkv_bias = h->qkv_bias;
    c->tied_embeddings = h->tied;
    c->rope_freq = h->rope_freq;
    c->forward_only = 1;
}
