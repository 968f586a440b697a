/* The input files in order: see inputs.h. */
#include "prep/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/path.h"
#include "text/decompress.h"

static int stem_ends(const char *path, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(path + n - k, suffix, k) == 0;
}

static enum input_format format_of(const char *path)
{
    size_t n;
    dz_format_of(path, &n);
    if (stem_ends(path, n, ".parquet"))
        return INPUT_PARQUET;
    return stem_ends(path, n, ".jsonl") || stem_ends(path, n, ".json") ? INPUT_JSONL : INPUT_TEXT;
}

static int add_file(struct input_list *l, const char *path, int split, int64_t size, char *err, size_t errlen)
{
    size_t stem;
    if (format_of(path) == INPUT_PARQUET && dz_format_of(path, &stem) != DZ_PLAIN) {
        snprintf(err, errlen, "%s: a Parquet file compresses its own pages; give it as NAME.parquet, not compressed",
                 path);
        return -1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct input_file *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    char *p = strdup(path);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->v[l->n++] = (struct input_file){.path = p, .split = split, .format = format_of(path), .size = size};
    l->bytes += size;
    return 0;
}

static int dot_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

/* The files under a directory, depth first in name order; *added counts them. */
static int walk(struct input_list *l, const char *dir, int split, int depth, size_t *added, char *err,
                size_t errlen)
{
    if (depth > 64) {
        snprintf(err, errlen, "%s: directories nested over 64 deep (a link loop?)", dir);
        return -1;
    }
    struct dirent **names;
    int n = scandir(dir, &names, dot_filter, alphasort);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char p[4096];
        struct stat st;
        if (rc == 0)
            rc = path_fmt(p, sizeof(p), err, errlen, "%s/%s", dir, names[i]->d_name);
        if (rc == 0 && stat(p, &st) != 0) {
            snprintf(err, errlen, "%s: %s", p, strerror(errno));
            rc = -1;
        }
        if (rc == 0 && S_ISDIR(st.st_mode))
            rc = walk(l, p, split, depth + 1, added, err, errlen);
        else if (rc == 0) {
            rc = add_file(l, p, split, st.st_size, err, errlen);
            (*added)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int inputs_add(struct input_list *l, const char *path, int split, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_file(l, path, split, st.st_size, err, errlen);
    size_t added = 0;
    if (walk(l, path, split, 0, &added, err, errlen) != 0)
        return -1;
    if (!added) {
        snprintf(err, errlen, "%s: directory holds no files", path);
        return -1;
    }
    return 0;
}

void inputs_free(struct input_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof(*l));
}
