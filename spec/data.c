/* Cheap checks of a spec's data: see data.h. */
#include "spec/data.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* vocab_size from meta.json beside the shards: 1 and *vocab when it exists
 * and is valid, 0 when there is none, -1 when it is unreadable or wrong. */
static int read_meta_vocab(const char *first_shard, int *vocab, struct spec_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], msg[256];
    if (path_copy(dir, sizeof(dir), first_shard, msg, sizeof(msg)) != 0 ||
        path_fmt(path, sizeof(path), msg, sizeof(msg), "%s/meta.json", dirname(dir)) != 0)
        return spec_fail(err, "data.train", "%s", msg);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return spec_fail(err, "model.vocab", "%s: %s", path, strerror(errno));
    }
    /* a FIFO would block the read for good (common/shard.c says the same of shards) */
    if (!S_ISREG(st.st_mode))
        return spec_fail(err, "model.vocab", "%s: not a regular file", path);
    json_error_t je;
    json_t *meta = json_load_file(path, 0, &je);
    if (!meta)
        return spec_fail(err, "model.vocab", "%s: invalid JSON at line %d: %s", path, je.line,
                         je.text);
    json_t *v = json_is_object(meta) ? json_object_get(meta, "vocab_size") : NULL;
    int ok = json_is_integer(v) && json_integer_value(v) >= 2 && json_integer_value(v) <= INT_MAX;
    if (ok)
        *vocab = (int)json_integer_value(v);
    json_decref(meta);
    if (!ok)
        return spec_fail(err, "model.vocab", "%s: no valid integer \"vocab_size\" (2 to %d)", path,
                         INT_MAX);
    return 1;
}

int spec_check_files(struct job_spec *s, int *meta_vocab, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    *meta_vocab = 0;
    /* meta.json sits beside the first train shard, so that shard is found first. */
    char first[PATH_MAX] = "";
    if (spec_each_file(s->train_glob, "data.train", first_file, first, err))
        return -1;
    int vocab = 0, have_meta = read_meta_vocab(first, &vocab, err);
    if (have_meta < 0 || spec_each_file(s->train_glob, "data.train", check_header, NULL, err) ||
        spec_each_file(s->val_glob, "data.val", check_header, NULL, err))
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
