#include "trainer/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"
#include "trainer/safetensors.h"

#define ST_REAL (sizeof(real) == 4 ? ST_F32 : ST_F64)

static int rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    char p[4400];
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (path_fmt(p, sizeof(p), NULL, 0, "%s/%s", dir, e->d_name) != 0 || unlink(p) != 0)
            rc = -1;
    }
    closedir(d);
    return rmdir(dir) == 0 ? rc : -1;
}

/* Steps of the complete checkpoints, newest first. */
static int list_steps(const char *ckdir, long **steps, int *n)
{
    *steps = NULL;
    *n = 0;
    DIR *d = opendir(ckdir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int cap = 0;
    while ((e = readdir(d))) {
        long s;
        char rest[8];
        if (sscanf(e->d_name, "step_%ld%7s", &s, rest) != 1)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            long *p = realloc(*steps, (size_t)cap * sizeof(long));
            if (!p) {
                closedir(d);
                return -1;
            }
            *steps = p;
        }
        (*steps)[(*n)++] = s;
    }
    closedir(d);
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0 && (*steps)[j] > (*steps)[j - 1]; j--) {
            long t = (*steps)[j];
            (*steps)[j] = (*steps)[j - 1];
            (*steps)[j - 1] = t;
        }
    return 0;
}

/* Writes nsets copies of the model's tensor list, set i from bufs[i] with
 * names suffixed by suffixes[i]: the weights are one set, Adam's moments two.
 * A tensor whose rows are padded in the buffer is packed first. */
static int write_sets(const char *path, const struct model *m, const real *const *bufs,
                      const char *const *suffixes, int nsets, char *err, size_t errlen)
{
    size_t nt = (size_t)m->n_tensors * nsets, packed = 0;
    for (int i = 0; i < m->n_tensors; i++)
        if (m->info[i].ndim == 2 && m->info[i].ld != (size_t)m->info[i].shape[1])
            packed += m->info[i].n;
    real *host = malloc(((size_t)nsets * m->n_params + (size_t)nsets * packed) * sizeof(real));
    struct st_tensor *t = calloc(nt, sizeof(*t));
    if (!host || !t) {
        free(host);
        free(t);
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    for (int k = 0; k < nsets; k++)
        m->ops->download(host + (size_t)k * m->n_params, bufs[k], m->n_params);
    real *spare = host + (size_t)nsets * m->n_params;
    for (size_t i = 0; i < nt; i++) {
        int k = (int)(i / m->n_tensors);
        const struct param_info *p = &m->info[i % m->n_tensors];
        const real *image = host + (size_t)k * m->n_params;
        snprintf(t[i].name, sizeof(t[i].name), "%s%s", p->name, suffixes[k]);
        t[i].dtype = ST_REAL;
        t[i].ndim = p->ndim;
        t[i].shape[0] = p->shape[0];
        t[i].shape[1] = p->shape[1];
        if (p->ndim == 2 && p->ld != (size_t)p->shape[1]) {
            param_pack(p, image, spare);
            t[i].data = spare;
            spare += p->n;
        } else {
            t[i].data = image + p->offset;
        }
    }
    const char *meta[] = {"format", "pt", "producer", "cod"};
    int rc = st_write(path, t, (int)nt, meta, 2, err, errlen);
    free(host);
    free(t);
    return rc;
}

/* A checkpoint that could not be written: its temporary directory goes
 * (a full disk gets that room back; a resume never reads a .tmp anyway),
 * and err, which names the file and the operation that failed, says which
 * checkpoint was lost and which one a resume starts from. -1. */
static int not_written(const char *run_dir, const char *tmp, long step, char *err, size_t errlen)
{
    char why[1024], newest[4400], e[256];
    snprintf(why, sizeof(why), "%s", err);
    rm_tree(tmp);
    int found = checkpoint_latest(run_dir, newest, sizeof(newest), e, sizeof(e));
    snprintf(err, errlen, "the checkpoint of step %ld was not written: %s; %s%s", step, why,
             found == 1 ? "a resume starts from " : "no complete checkpoint to resume from",
             found == 1 ? newest : "");
    return -1;
}

/* The checkpoint's three files, into the directory tmp. */
static int write_files(const char *tmp, const struct model *m, const real *adam_m,
                       const real *adam_v, const struct train_state *st, json_t *spec,
                       char *err, size_t errlen)
{
    char path[4400];
    if (fio_mkdir_p(tmp, err, errlen))
        return -1;
    const real *weights[] = {m->params}, *moments[] = {adam_m, adam_v};
    const char *plain[] = {""}, *moment_names[] = {".exp_avg", ".exp_avg_sq"};
    if (path_fmt(path, sizeof(path), err, errlen, "%s/model.safetensors", tmp) ||
        write_sets(path, m, weights, plain, 1, err, errlen))
        return -1;
    if (path_fmt(path, sizeof(path), err, errlen, "%s/optim.safetensors", tmp) ||
        (adam_m && write_sets(path, m, moments, moment_names, 2, err, errlen)))
        return -1;
    json_t *state = json_pack("{s:I, s:I, s:I, s:I, s:s, s:O, s:b}", "step", (json_int_t)st->step,
                              "samples", (json_int_t)st->samples, "tokens",
                              (json_int_t)st->tokens, "seed", (json_int_t)st->seed, "real",
                              REAL_NAME, "spec", spec, "final", st->final > 0);
    if (fio_write_json(state, tmp, "state.json", err, errlen))
        return -1;
    if (fio_fsync_path(tmp) != 0) {
        snprintf(err, errlen, "%s: fsync failed: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int checkpoint_save(const char *run_dir, const struct model *m, const real *adam_m,
                    const real *adam_v, const struct train_state *st, json_t *spec, int keep,
                    char *err, size_t errlen)
{
    char ckdir[4096], final[4200], tmp[4300], path[4400];
    if (path_fmt(ckdir, sizeof(ckdir), err, errlen, "%s/checkpoints", run_dir) ||
        path_fmt(final, sizeof(final), err, errlen, "%s/step_%08ld", ckdir, st->step) ||
        path_fmt(tmp, sizeof(tmp), err, errlen, "%s.tmp", final) || fio_mkdir_p(ckdir, err, errlen))
        return -1;
    rm_tree(tmp);
    if (write_files(tmp, m, adam_m, adam_v, st, spec, err, errlen))
        return not_written(run_dir, tmp, st->step, err, errlen);
    rm_tree(final);
    if (rename(tmp, final) != 0) {
        snprintf(err, errlen, "rename %s to %s: %s", tmp, final, strerror(errno));
        return not_written(run_dir, tmp, st->step, err, errlen);
    }
    if (fio_fsync_path(ckdir) != 0) {
        snprintf(err, errlen, "%s: fsync failed: %s", ckdir, strerror(errno));
        return -1;
    }
    long *steps;
    int n;
    if (list_steps(ckdir, &steps, &n) == 0) {
        for (int i = keep; i < n; i++) {
            if (path_fmt(path, sizeof(path), NULL, 0, "%s/step_%08ld", ckdir, steps[i]) == 0)
                rm_tree(path);
        }
        free(steps);
    }
    return 0;
}

int checkpoint_latest(const char *run_dir, char *path, size_t pathlen, char *err, size_t errlen)
{
    char ckdir[4096];
    if (path_fmt(ckdir, sizeof(ckdir), err, errlen, "%s/checkpoints", run_dir))
        return -1;
    long *steps;
    int n;
    if (list_steps(ckdir, &steps, &n)) {
        snprintf(err, errlen, "%s: %s", ckdir, strerror(errno));
        return -1;
    }
    int found = n > 0;
    if (found && path_fmt(path, pathlen, err, errlen, "%s/step_%08ld", ckdir, steps[0]))
        found = -1;
    free(steps);
    return found;
}

static int read_tensors(const char *path, struct model *m, real *dst, const char *suffix,
                        char *err, size_t errlen)
{
    struct st_file f;
    if (st_read(path, &f, err, errlen))
        return -1;
    size_t widest = 0;
    for (int i = 0; i < m->n_tensors; i++)
        widest = m->info[i].n > widest ? m->info[i].n : widest;
    /* zeroed: the padding between and inside tensors must read as zeros */
    real *host = calloc(m->n_params + widest, sizeof(real));
    if (!host) {
        st_free(&f);
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    real *spare = host + m->n_params;
    int rc = 0;
    char name[200];
    for (int i = 0; rc == 0 && i < m->n_tensors; i++) {
        const struct param_info *p = &m->info[i];
        int packed = p->ndim == 2 && p->ld != (size_t)p->shape[1];
        real *to = packed ? spare : host + p->offset;
        snprintf(name, sizeof(name), "%s%s", p->name, suffix);
#ifdef COD_REAL_DOUBLE
        rc = st_get_f64(&f, name, p->shape, p->ndim, to, err, errlen);
#else
        rc = st_get_f32(&f, name, p->shape, p->ndim, to, err, errlen);
#endif
        if (rc == 0 && packed)
            param_unpack(p, spare, host);
    }
    if (rc == 0)
        m->ops->upload(dst, host, m->n_params);
    else {
        char inner[512];
        snprintf(inner, sizeof(inner), "%s", err);
        snprintf(err, errlen, "%s: %s", path, inner);
    }
    free(host);
    st_free(&f);
    return rc;
}

int checkpoint_load_weights(const char *ckpt_dir, struct model *m, char *err, size_t errlen)
{
    char path[4400];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/model.safetensors", ckpt_dir) ||
        read_tensors(path, m, m->params, "", err, errlen))
        return -1;
    model_sync_weights(m);
    return 0;
}

int checkpoint_read_state(const char *ckpt_dir, struct train_state *st, json_t **spec_out,
                          char *err, size_t errlen)
{
    char path[4400];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/state.json", ckpt_dir))
        return -1;
    json_error_t je;
    json_t *state = json_load_file(path, 0, &je);
    json_int_t step, samples, seed;
    json_t *spec = NULL;
    if (!state || json_unpack(state, "{s:I, s:I, s:I, s:o}", "step", &step, "samples", &samples,
                              "seed", &seed, "spec", &spec) != 0) {
        snprintf(err, errlen, "%s: not a cod checkpoint state (%s)", path,
                 state ? "missing step, samples, seed or spec" : je.text);
        json_decref(state);
        return -1;
    }
    st->step = (long)step;
    st->samples = samples;
    json_t *tokens = json_object_get(state, "tokens");
    st->tokens = json_is_integer(tokens) ? json_integer_value(tokens) : -1;
    st->seed = (unsigned long long)seed;
    json_t *final = json_object_get(state, "final");
    st->final = json_is_boolean(final) ? json_is_true(final) : -1;
    *spec_out = json_incref(spec);
    json_decref(state);
    return 0;
}

int checkpoint_read_spec(const char *ckpt_dir, struct train_state *st, struct job_spec *s,
                         char *err, size_t errlen)
{
    struct train_state own;
    json_t *spec;
    if (checkpoint_read_state(ckpt_dir, st ? st : &own, &spec, err, errlen))
        return -1;
    struct spec_error se = {"", "out of memory"};
    int rc = 0;
    if (spec_upgrade(spec) || spec_from_json(spec, s, &se)) {
        snprintf(err, errlen, "%s/state.json: spec: %s: %s", ckpt_dir, se.field, se.message);
        rc = -1;
    } else if (s->model.vocab <= 0 || s->model_from_init || s->norm_from_init) {
        snprintf(err, errlen, "%s/state.json: the spec does not record the vocabulary size",
                 ckpt_dir);
        rc = -1;
    }
    json_decref(spec);
    return rc;
}

int checkpoint_load(const char *ckpt_dir, struct model *m, real *adam_m, real *adam_v,
                    struct train_state *st, json_t **spec_out, char *err, size_t errlen)
{
    char path[4400];
    json_t *spec;
    if (checkpoint_read_state(ckpt_dir, st, &spec, err, errlen))
        return -1;
    if (spec_out)
        *spec_out = spec;
    else
        json_decref(spec);
    if (checkpoint_load_weights(ckpt_dir, m, err, errlen))
        goto fail;
    if (path_fmt(path, sizeof(path), err, errlen, "%s/optim.safetensors", ckpt_dir) ||
        (adam_m && (read_tensors(path, m, adam_m, ".exp_avg", err, errlen) ||
                   read_tensors(path, m, adam_v, ".exp_avg_sq", err, errlen))))
        goto fail;
    return 0;
fail:
    if (spec_out) {
        json_decref(*spec_out);
        *spec_out = NULL;
    }
    return -1;
}
