/* Cheap checks of a spec's data: see data.h. */
#include "spec/data.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/path.h"
#include "common/shard.h"
#include "spec/fields.h"

int spec_each_file(const char *pattern, const char *field, spec_file_fn fn, void *ctx,
                   struct spec_error *err)
{
    char **paths = NULL, msg[4600];
    int n = 0;
    if (shard_glob(pattern, &paths, &n, msg, sizeof(msg)))
        return spec_fail(err, field, "%s", msg);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        if (fn(paths[i], ctx, msg, sizeof(msg)) != 0)
            rc = spec_fail(err, field, "%s", msg);
    shard_free_paths(paths, n);
    return rc;
}

static int check_header(const char *path, void *ctx, char *msg, size_t msglen)
{
    (void)ctx;
    struct shard_info info;
    return shard_check(path, &info, msg, msglen);
}

/* The first path a pattern matches. */
static int first_file(const char *path, void *ctx, char *msg, size_t msglen)
{
    char *first = ctx;
    if (first[0])
        return 0;
    return path_copy(first, PATH_MAX, path, msg, msglen);
}

/* meta.json beside a shard: 1 and *meta (caller decrefs) and its path when
 * it exists and holds a JSON object, 0 when there is none, -1 when it is
 * unreadable (refused naming field). */
static int load_meta(const char *shard, const char *field, json_t **meta, char *path,
                     size_t pathlen, struct spec_error *err)
{
    char dir[PATH_MAX], msg[256];
    if (path_copy(dir, sizeof(dir), shard, msg, sizeof(msg)) != 0 ||
        path_fmt(path, pathlen, msg, sizeof(msg), "%s/meta.json", dirname(dir)) != 0)
        return spec_fail(err, field, "%s", msg);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return spec_fail(err, field, "%s: %s", path, strerror(errno));
    }
    /* a FIFO would block the read for good (common/shard.c says the same of shards) */
    if (!S_ISREG(st.st_mode))
        return spec_fail(err, field, "%s: not a regular file", path);
    json_error_t je;
    *meta = json_load_file(path, 0, &je);
    if (!*meta)
        return spec_fail(err, field, "%s: invalid JSON at line %d: %s", path, je.line, je.text);
    if (!json_is_object(*meta)) {
        json_decref(*meta);
        return spec_fail(err, field, "%s: not a JSON object", path);
    }
    return 1;
}

/* vocab_size from meta.json beside the shards: 1 and *vocab when it exists
 * and is valid, 0 when there is none, -1 when it is unreadable or wrong. */
static int read_meta_vocab(const char *first_shard, int *vocab, struct spec_error *err)
{
    char path[PATH_MAX + 16];
    json_t *meta;
    int rc = load_meta(first_shard, "model.vocab", &meta, path, sizeof(path), err);
    if (rc <= 0)
        return rc;
    json_t *v = json_object_get(meta, "vocab_size");
    int ok = json_is_integer(v) && json_integer_value(v) >= 2 && json_integer_value(v) <= INT_MAX;
    if (ok)
        *vocab = (int)json_integer_value(v);
    json_decref(meta);
    if (!ok)
        return spec_fail(err, "model.vocab", "%s: no valid integer \"vocab_size\" (2 to %d)", path,
                         INT_MAX);
    return 1;
}

/* A token id of meta.json: absent (0), an id below vocab_size (1), or refused. */
static int meta_token(json_t *meta, const char *key, const char *path, const char *field,
                      uint32_t *id, struct spec_error *err)
{
    json_t *v = json_object_get(meta, key), *vs = json_object_get(meta, "vocab_size");
    if (!v)
        return 0;
    json_int_t top = json_is_integer(vs) ? json_integer_value(vs) : (json_int_t)UINT32_MAX + 1;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= top)
        return spec_fail(err, field, "%s: \"%s\" must be a token id, an integer in [0, %lld)", path,
                         key, (long long)top);
    *id = (uint32_t)json_integer_value(v);
    return 1;
}

int spec_data_docs(const char *pattern, const char *field, struct data_docs *d,
                   struct spec_error *err)
{
    memset(d, 0, sizeof(*d));
    char first[PATH_MAX] = "", path[PATH_MAX + 16];
    if (spec_each_file(pattern, field, first_file, first, err))
        return -1;
    json_t *meta = NULL;
    int rc = load_meta(first, field, &meta, path, sizeof(path), err);
    if (rc <= 0) {
        snprintf(d->missing, sizeof(d->missing),
                 "no meta.json beside %s to name its \"doc_token\" (shards without one, llm.c's, "
                 "declare no document boundaries)", first);
        return rc;
    }
    rc = meta_token(meta, "doc_token", path, field, &d->doc_token, err);
    if (rc == 0)
        snprintf(d->missing, sizeof(d->missing), "%s has no \"doc_token\"", path);
    d->known = rc > 0;
    if (rc >= 0 && (rc = meta_token(meta, "pad_token", path, field, &d->pad_token, err)) >= 0) {
        d->has_pad = rc > 0;
        json_t *at = json_object_get(meta, "doc_token_at");
        const char *a = json_string_value(at);
        rc = 0;
        if (at && (!a || (strcmp(a, "start") && strcmp(a, "end"))))
            rc = spec_fail(err, field, "%s: \"doc_token_at\" must be \"start\" or \"end\"", path);
        d->at_end = a && !strcmp(a, "end");
    }
    json_decref(meta);
    return rc < 0 ? -1 : 0;
}

/* documents packing: each shard set must say where its documents begin. */
static int check_docs(const char *pattern, const char *field, struct spec_error *err)
{
    struct data_docs d;
    if (spec_data_docs(pattern, field, &d, err))
        return -1;
    if (!d.known)
        return spec_fail(err, field,
                         "data.packing \"documents\" needs the shards' document boundaries: %s",
                         d.missing);
    return 0;
}

/* A file of instruction records that can be read (its records are the
 * worker's to read: sft/records.h). */
static int readable(const char *path, void *ctx, char *msg, size_t msglen)
{
    (void)ctx;
    if (access(path, R_OK) == 0)
        return 0;
    snprintf(msg, msglen, "%s: %s", path, strerror(errno));
    return -1;
}

/* init.from's path is a cod checkpoint (state.json) or a Hugging Face
 * folder (config.json); what they hold is the worker's to read. */
static int check_init(const struct job_spec *s, struct spec_error *err)
{
    if (s->init.kind != INIT_PATH)
        return 0;
    char path[PATH_MAX + 32];
    static const char *const marks[] = {"state.json", "config.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", s->init.path, marks[i]);
        if (access(path, R_OK) == 0)
            return 0;
    }
    return spec_fail(err, "init.from",
                     "%s is neither a cod checkpoint (no state.json) nor a Hugging Face model "
                     "folder (no config.json)",
                     s->init.path);
}

int spec_check_files(struct job_spec *s, int *meta_vocab, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    *meta_vocab = 0;
    if (check_init(s, err))
        return -1;
    if (s->format == FORMAT_INSTRUCTIONS)
        return spec_each_file(s->train_glob, "data.train", readable, NULL, err) ||
                       (s->val_glob[0] &&
                        spec_each_file(s->val_glob, "data.val", readable, NULL, err))
                   ? -1
                   : 0;
    /* meta.json sits beside the first train shard, so that shard is found first. */
    char first[PATH_MAX] = "";
    if (spec_each_file(s->train_glob, "data.train", first_file, first, err))
        return -1;
    int vocab = 0, have_meta = read_meta_vocab(first, &vocab, err);
    if (have_meta < 0 || spec_each_file(s->train_glob, "data.train", check_header, NULL, err) ||
        spec_each_file(s->val_glob, "data.val", check_header, NULL, err))
        return -1;
    if (s->packing == PACKING_DOCUMENTS && (check_docs(s->train_glob, "data.train", err) ||
                                            check_docs(s->val_glob, "data.val", err)))
        return -1;
    if (!have_meta)
        return 0;
    *meta_vocab = vocab;
    /* The tokenizer's vocabulary is trusted when meta.json states it. */
    if (s->model.vocab == 0)
        s->model.vocab = vocab;
    else if (vocab > s->model.vocab)
        return spec_fail(err, "model.vocab",
                         "vocab %d is smaller than the data's vocabulary (%d in meta.json)",
                         s->model.vocab, vocab);
    return 0;
}
