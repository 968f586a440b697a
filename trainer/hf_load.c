#include "trainer/hf_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/path.h"
#include "trainer/safetensors.h"

enum { SLICE = 1 << 24 }; /* elements converted at a time: 64 MiB of fp32 */

struct shards {
    struct st_file *f;
    char (*name)[256];
    unsigned char **used; /* per file, per tensor */
    int n;
};

static void shards_close(struct shards *s)
{
    for (int i = 0; i < s->n; i++) {
        st_free(&s->f[i]);
        free(s->used[i]);
    }
    free(s->f);
    free(s->name);
    free(s->used);
    memset(s, 0, sizeof(*s));
}

static int shard_add(struct shards *s, const char *dir, const char *file, char *err, size_t errlen)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], file))
            return 0;
    char path[4400];
    if (strlen(file) >= sizeof s->name[0] || strchr(file, '/')) {
        snprintf(err, errlen, "%s/model.safetensors.index.json: weight_map names \"%s\", not a "
                              "file of the folder", dir, file);
        return -1;
    }
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s", dir, file))
        return -1;
    struct st_file *f = realloc(s->f, (size_t)(s->n + 1) * sizeof(*f));
    if (f)
        s->f = f;
    char(*nm)[256] = realloc(s->name, (size_t)(s->n + 1) * sizeof(*nm));
    if (nm)
        s->name = nm;
    unsigned char **u = realloc(s->used, (size_t)(s->n + 1) * sizeof(*u));
    if (u)
        s->used = u;
    if (!f || !nm || !u) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    if (st_map(path, &s->f[s->n], err, errlen))
        return -1;
    s->used[s->n] = calloc((size_t)s->f[s->n].n + 1, 1);
    snprintf(s->name[s->n], sizeof s->name[0], "%s", file);
    s->n++;
    if (!s->used[s->n - 1]) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    return 0;
}

/* model.safetensors, or every file the index's weight_map names. */
static int shards_open(const char *dir, struct shards *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    char path[4400];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/model.safetensors.index.json", dir))
        return -1;
    if (access(path, F_OK) != 0)
        return shard_add(s, dir, "model.safetensors", err, errlen);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s: %s (line %d)", path, je.text, je.line);
        return -1;
    }
    json_t *map = json_object_get(root, "weight_map");
    int rc = 0;
    if (!json_is_object(map) || !json_object_size(map)) {
        snprintf(err, errlen, "%s: weight_map: expected an object of tensor names to files",
                 path);
        rc = -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v)
    {
        if (rc)
            break;
        if (!json_is_string(v)) {
            snprintf(err, errlen, "%s: weight_map: %s: expected a file name", path, key);
            rc = -1;
        } else {
            rc = shard_add(s, dir, json_string_value(v), err, errlen);
        }
    }
    json_decref(root);
    return rc;
}

/* Buffers the model reads a tensor from: params (a real tensor: every
 * tensor where params holds them all, else the vectors) or the act copy. */
static void load_tensor(struct model *m, const struct param_info *p, const struct st_tensor *t,
                        real *host, float *tmp)
{
    const struct ops *o = m->ops;
    int whole = m->n_real == m->n_params, vec = p->ndim == 1;
    size_t rows = vec ? 1 : (size_t)p->shape[0], cols = vec ? p->n : (size_t)p->shape[1];
    size_t ld = vec ? cols : p->ld, rows_at_once = SLICE / ld ? SLICE / ld : 1;
    for (size_t r0 = 0; r0 < rows; r0 += rows_at_once) {
        size_t nr = rows - r0 < rows_at_once ? rows - r0 : rows_at_once;
        float *f = sizeof(real) == sizeof(float) ? (float *)host : tmp;
        for (size_t r = 0; r < nr; r++) {
            st_to_f32(t, (r0 + r) * cols, cols, f + r * ld);
            memset(f + r * ld + cols, 0, (ld - cols) * sizeof(float));
        }
        if (sizeof(real) != sizeof(float))
            for (size_t i = 0; i < nr * ld; i++)
                host[i] = (real)tmp[i];
        if (vec)
            o->upload(m->params + m->roff[(size_t)p->layer * P_KIND_COUNT + p->kind], host, cols);
        else if (whole)
            o->upload(m->params + p->offset + r0 * ld, host, nr * ld);
        else
            o->upload_act(act_at(o, m->wact, p->offset + r0 * ld), host, nr * ld);
    }
}

/* A tensor the model has no place for but that transformers passes over too. */
static int passed_over(const struct model *m, const char *name)
{
    const char *tail = strrchr(name, '.');
    return (tail && !strcmp(tail, ".inv_freq") && strstr(name, "rotary_emb")) ||
           (m->cfg.tied_embeddings && !strcmp(name, "lm_head.weight"));
}

int hf_load_weights(const char *dir, struct model *m, char *err, size_t errlen)
{
    struct shards s;
    if (shards_open(dir, &s, err, errlen)) {
        shards_close(&s);
        return -1;
    }
    /* a slice, or one row where a row is longer (a vector is one row) */
    size_t room = SLICE;
    for (int k = 0; k < m->n_tensors; k++) {
        size_t row = m->info[k].ndim == 1 ? m->info[k].n : m->info[k].ld;
        room = row > room ? row : room;
    }
    real *host = malloc(room * sizeof(real));
    float *tmp = sizeof(real) == sizeof(float) ? NULL : malloc(room * sizeof(float));
    int rc = -1;
    if (!host || (sizeof(real) != sizeof(float) && !tmp)) {
        snprintf(err, errlen, "out of memory for the conversion of %s's tensors", dir);
        goto out;
    }
    for (int k = 0; k < m->n_tensors; k++) {
        const struct param_info *p = &m->info[k];
        const struct st_tensor *t = NULL;
        int file = -1;
        for (int i = 0; i < s.n && !t; i++)
            if ((t = st_find(&s.f[i], p->name)))
                file = i;
        if (!t) {
            snprintf(err, errlen, "%s: tensor %s: missing", dir, p->name);
            goto out;
        }
        s.used[file][t - s.f[file].tensors] = 1;
        int same = t->ndim == p->ndim && t->shape[0] == p->shape[0] &&
                   (p->ndim == 1 || t->shape[1] == p->shape[1]);
        if (!same) {
            char got[96] = "[", want[96];
            for (int i = 0; i < t->ndim; i++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                         (long long)t->shape[i]);
            snprintf(want, sizeof want, p->ndim == 1 ? "[%lld]" : "[%lld,%lld]",
                     (long long)p->shape[0], (long long)p->shape[1]);
            snprintf(err, errlen, "%s/%s: tensor %s: shape %s], config.json makes it %s", dir,
                     s.name[file], p->name, got, want);
            goto out;
        }
        if (t->dtype == ST_I64) {
            snprintf(err, errlen, "%s/%s: tensor %s: dtype I64 is not a float type", dir,
                     s.name[file], p->name);
            goto out;
        }
        load_tensor(m, p, t, host, tmp);
    }
    for (int i = 0; i < s.n; i++)
        for (int k = 0; k < s.f[i].n; k++)
            if (!s.used[i][k] && !passed_over(m, s.f[i].tensors[k].name)) {
                snprintf(err, errlen,
                         "%s/%s: tensor %s: the model config.json describes has no such tensor "
                         "(another architecture?)",
                         dir, s.name[i], s.f[i].tensors[k].name);
                goto out;
            }
    if (m->n_real == m->n_params)
        model_sync_weights(m);
    rc = 0;
out:
    free(host);
    free(tmp);
    shards_close(&s);
    return rc;
}
