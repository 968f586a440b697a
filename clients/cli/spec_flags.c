/* Spec flags and grid axes (see spec_flags.h). The server checks every field
 * again; the local checks only catch what is plainly a typo on the command
 * line, so that it fails as bad usage rather than as a refused spec. */
#include "clients/cli/spec_flags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"

enum sf_kind {
    SF_STR,  /* always a string */
    SF_INT,  /* a whole number */
    SF_NUM,  /* a number */
    SF_ANY,  /* JSON if it parses (a number, true, an object...), else a string */
    SF_SET,  /* PATH=VALUE, the value as SF_ANY */
    SF_DATA, /* DIR: data.train = DIR/train_*.bin, data.val = DIR/val_*.bin */
};

static const struct spec_flag {
    const char *flag, *path;
    enum sf_kind kind;
} flags[] = {
    {"--name", "name", SF_STR},
    {"--model", "model", SF_ANY},
    {"--norm", "norm", SF_ANY},
    {"--steps", "train.steps", SF_INT},
    {"--lr", "train.lr", SF_NUM},
    {"--warmup", "train.warmup", SF_INT},
    {"--seq-len", "train.seq_len", SF_INT},
    {"--batch", "train.batch_seqs", SF_INT},
    {"--micro-batch", "train.micro_batch", SF_INT},
    {"--seed", "train.seed", SF_INT},
    {"--precision", "train.precision", SF_STR},
    {"--packing", "data.packing", SF_STR},
    {"--embed-std", "model.embed_std", SF_NUM},
    {"--gains", "norm.gains", SF_STR},
    {"--eval-every", "eval.every", SF_INT},
    {"--stats-every", "stats.every", SF_INT},
    {"--device", "resources.device", SF_STR},
    {"--gpus", "resources.gpus", SF_INT},
    {"--data", "data", SF_DATA},
    {"--data-train", "data.train", SF_STR},
    {"--data-val", "data.val", SF_STR},
    {"--priority", "priority", SF_INT},
    {"--max-attempts", "max_attempts", SF_INT},
    {"--set", "", SF_SET},
};
enum { NFLAGS = sizeof flags / sizeof flags[0] };

void spec_opts_append(struct opt *opts, int room, struct strlist *edits)
{
    int n = 0;
    while (n < room - 1 && opts[n].name)
        n++;
    for (int i = 0; i < NFLAGS && n < room - 1; i++)
        opts[n++] = (struct opt){flags[i].flag, OPT_PAIRS, edits};
    opts[n] = (struct opt){0};
}

/* word as a JSON value of the given kind; NULL (with a message) when it is
 * not one. what names it in the message. */
static json_t *value_of(struct cli *c, enum sf_kind kind, const char *word, const char *what)
{
    char *end;
    errno = 0;
    switch (kind) {
    case SF_INT: {
        long long x = strtoll(word, &end, 10);
        if (!errno && end != word && !*end)
            return json_integer(x);
        fail(c, EXIT_USAGE, "%s wants a whole number, not \"%s\"", what, word);
        return NULL;
    }
    case SF_NUM: {
        double x = strtod(word, &end);
        if (!errno && end != word && !*end && isfinite(x))
            return json_real(x);
        fail(c, EXIT_USAGE, "%s wants a number, not \"%s\"", what, word);
        return NULL;
    }
    case SF_ANY: {
        json_t *j = json_loads(word, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
        return j ? j : json_string(word);
    }
    default:
        return json_string(word);
    }
}

/* The key a spec section's name goes under in its object form (the
 * server's spec_name_key): "norm": "lns" is {"base": "lns"}. */
static const char *name_key(const char *section)
{
    return !strcmp(section, "norm") ? "base" : !strcmp(section, "model") ? "preset" : NULL;
}

/* Sets obj's dotted path to v (stolen), making objects on the way; a
 * section given by its name takes its object form (--norm lns --gains frozen). */
static int set_path(struct cli *c, json_t *obj, const char *path, json_t *v)
{
    char buf[256];
    if (!v)
        return EXIT_USAGE;
    if (!*path || snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        json_decref(v);
        return fail(c, EXIT_USAGE, "\"%s\" is not a spec field path", path);
    }
    char *key = buf, *dot;
    json_t *root = obj;
    while ((dot = strchr(key, '.'))) {
        *dot = 0;
        json_t *next = json_object_get(obj, key);
        if (json_is_string(next) && obj == root && name_key(key) &&
            json_object_set_new(obj, key, next = json_pack("{s:O}", name_key(key), next)) != 0)
            next = NULL;
        if (!next && json_object_set_new(obj, key, next = json_object()) != 0)
            next = NULL;
        if (!json_is_object(next)) {
            json_decref(v);
            return fail(c, EXIT_USAGE, "cannot set %s: %s is not an object", path, key);
        }
        obj = next;
        key = dot + 1;
    }
    if (!*key || json_object_set_new(obj, key, v) != 0)
        return fail(c, EXIT_USAGE, "cannot set %s", path);
    return 0;
}

static const struct spec_flag *flag_named(const char *flag)
{
    for (int i = 0; i < NFLAGS; i++)
        if (!strcmp(flags[i].flag, flag))
            return &flags[i];
    return NULL;
}

static int apply(struct cli *c, json_t *spec, const struct spec_flag *f, const char *word)
{
    if (f->kind == SF_SET) {
        const char *eq = strchr(word, '=');
        if (!eq || eq == word)
            return fail(c, EXIT_USAGE, "--set wants PATH=VALUE, not \"%s\"", word);
        char path[256];
        if (path_fmt(path, sizeof path, NULL, 0, "%.*s", (int)(eq - word), word) != 0)
            return fail(c, EXIT_USAGE, "\"%.*s\" is not a spec field path", (int)(eq - word), word);
        return set_path(c, spec, path, value_of(c, SF_ANY, eq + 1, "--set"));
    }
    if (f->kind == SF_DATA) {
        char train[4096], val[4096], err[256];
        if (path_fmt(train, sizeof train, err, sizeof err, "%s/train_*.bin", word) ||
            path_fmt(val, sizeof val, err, sizeof err, "%s/val_*.bin", word))
            return fail(c, EXIT_USAGE, "--data: %s", err);
        int rc = set_path(c, spec, "data.train", json_string(train));
        return rc ? rc : set_path(c, spec, "data.val", json_string(val));
    }
    return set_path(c, spec, f->path, value_of(c, f->kind, word, f->flag));
}

int spec_build(struct cli *c, const char *file, const struct strlist *edits, json_t **out)
{
    json_error_t je;
    *out = NULL;
    int from_stdin = file && !strcmp(file, "-");
    FILE *f = file && !from_stdin ? fopen(file, "r") : stdin;
    if (!f)
        return fail(c, EXIT_USAGE, "cannot read the spec %s: %s", file, strerror(errno));
    json_t *spec = file ? json_loadf(f, JSON_REJECT_DUPLICATES, &je) : json_object();
    if (file && !from_stdin)
        fclose(f);
    if (!spec)
        return file ? fail(c, EXIT_USAGE, "%s, line %d, column %d: %s",
                           from_stdin ? "stdin" : file, je.line, je.column, je.text)
                    : fail(c, EXIT_USAGE, "out of memory");
    if (!json_is_object(spec)) {
        json_decref(spec);
        return fail(c, EXIT_USAGE, "%s: a spec is a JSON object", file);
    }
    /* whole sections first (--model, --norm, --set norm=...), then the
     * fields inside them, so that --embed-std before --model is kept */
    for (int inner = 0; inner <= 1; inner++)
        for (int i = 0; i + 1 < edits->n; i += 2) {
            const struct spec_flag *f = flag_named(edits->v[i]);
            const char *path = f->kind == SF_SET ? edits->v[i + 1] : f->path;
            const char *eq = f->kind == SF_SET ? strchr(path, '=') : NULL;
            const char *dot = strchr(path, '.');
            int is_inner = f->kind == SF_DATA || (dot && (!eq || dot < eq));
            if (is_inner != inner)
                continue;
            int rc = apply(c, spec, f, edits->v[i + 1]);
            if (rc) {
                json_decref(spec);
                return rc;
            }
        }
    *out = spec;
    return 0;
}

int grid_add(struct cli *c, json_t *grid, const char *word)
{
    const char *eq = strchr(word, '=');
    if (!eq || eq == word || !eq[1])
        return fail(c, EXIT_USAGE, "a grid axis is KEY=V1,V2,..., not \"%s\"", word);
    char key[256], flag[260];
    snprintf(key, sizeof key, "%.*s", (int)(eq - word), word);
    snprintf(flag, sizeof flag, "--%s", key);
    const struct spec_flag *f = flag_named(flag);
    if (f && (f->kind == SF_SET || f->kind == SF_DATA))
        return fail(c, EXIT_USAGE, "%s cannot be a grid axis", key);
    const char *path = f ? f->path : key;
    if (json_object_get(grid, path))
        return fail(c, EXIT_USAGE, "the grid names %s twice", path);
    json_t *vals = eq[1] == '[' ? json_loads(eq + 1, JSON_REJECT_DUPLICATES, NULL) : json_array();
    if (!json_is_array(vals)) {
        json_decref(vals);
        return fail(c, EXIT_USAGE, "%s: the values are not a JSON list", key);
    }
    if (json_object_set_new(grid, path, vals) != 0)
        return fail(c, EXIT_USAGE, "out of memory");
    if (eq[1] == '[')
        return 0;
    for (const char *v = eq + 1;;) {
        size_t len = strcspn(v, ",");
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)len, v);
        json_t *x = value_of(c, f ? f->kind : SF_ANY, one, key);
        if (!x || json_array_append_new(vals, x) != 0)
            return x ? fail(c, EXIT_USAGE, "out of memory") : EXIT_USAGE;
        if (!v[len])
            return 0;
        v += len + 1;
    }
}
