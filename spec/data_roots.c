/* A pattern's walk under the data roots: see data_roots.h. */
#include "spec/data_roots.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/fields.h"

enum { MAX_PARTS = 128 };

struct walk {
    const struct data_roots *roots;
    char real[16][PATH_MAX];  /* the roots as they resolve now */
    int n_real;
    const char *pattern, *field;
    struct spec_error *err;
    char **paths;             /* the level's matches */
    int n, cap;
};

static int has_glob(const char *s)
{
    return strpbrk(s, "*?[\\") != NULL;
}

/* Is path at or under dir (both absolute, without a final '/')? */
static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return 1;
    return !strncmp(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

/* An absolute form of dir, lexically: the working directory before a
 * relative one, "." and empty parts dropped, ".." taking the part before. */
static int absolute(const char *dir, char *out, size_t n)
{
    char cwd[PATH_MAX], joined[2 * PATH_MAX];
    if (dir[0] != '/') {
        if (!getcwd(cwd, sizeof cwd))
            return -1;
        snprintf(joined, sizeof joined, "%s/%s", cwd, dir);
    } else {
        snprintf(joined, sizeof joined, "%s", dir);
    }
    size_t len = 0;
    out[0] = 0;
    for (char *save = NULL, *p = strtok_r(joined, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (!strcmp(p, "."))
            continue;
        if (!strcmp(p, "..")) {
            while (len && out[len - 1] != '/')
                len--;
            if (len)
                len--;
            out[len] = 0;
            continue;
        }
        if (len + 1 + strlen(p) + 1 > n)
            return -1;
        len += (size_t)snprintf(out + len, n - len, "/%s", p);
    }
    if (!len)
        snprintf(out, n, "/");
    return 0;
}

static int refuse_outside(struct walk *w)
{
    char list[300] = "";
    size_t len = 0;
    for (int i = 0; i < w->roots->n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                w->roots->dirs[i]);
    return spec_fail(w->err, w->field,
                     "%s is outside this server's data roots (%s): name data under one of them, "
                     "or add one with --data-root",
                     w->pattern, list);
}

/* A symlink met on the way must lead under a root. */
static int inside(struct walk *w, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 1;
    char real[PATH_MAX];
    if (!realpath(path, real))
        return 0;
    for (int i = 0; i < w->n_real; i++)
        if (under(real, w->real[i]))
            return 1;
    return 0;
}

static int refuse_link(struct walk *w, const char *path)
{
    return spec_fail(w->err, w->field,
                     "%s: %s leads out of the data roots through a symlink", w->pattern, path);
}

static int keep(struct walk *w, char **next, int *n, const char *path)
{
    if (*n == w->roots->max_files)
        return spec_fail(w->err, w->field, "%s matches more than %d files or folders "
                         "(this server's --max-data-files)", w->pattern, w->roots->max_files);
    next[*n] = strdup(path);
    if (!next[*n])
        return spec_fail(w->err, w->field, "out of memory expanding %s", w->pattern);
    (*n)++;
    return 0;
}

static void drop(char **paths, int n)
{
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* One level: every path of the level joined with part (a literal name, or
 * a pattern matched against each folder's entries, as glob() does: a
 * leading '.' only by a leading '.'). last: what matches must be files
 * rather than folders to walk on. */
static int level(struct walk *w, const char *part, int last)
{
    char **next = calloc((size_t)w->roots->max_files, sizeof *next), path[PATH_MAX];
    int n = 0, rc = 0;
    if (!next)
        return spec_fail(w->err, w->field, "out of memory expanding %s", w->pattern);
    for (int i = 0; rc == 0 && i < w->n; i++) {
        if (!has_glob(part)) {
            struct stat st;
            if (snprintf(path, sizeof path, "%s/%s", w->paths[i], part) >= (int)sizeof path ||
                lstat(path, &st) != 0)
                continue;
            if (!inside(w, path))
                rc = refuse_link(w, path);
            else if (last || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
                rc = keep(w, next, &n, path);
            continue;
        }
        DIR *d = opendir(w->paths[i]);
        struct dirent *e;
        while (rc == 0 && d && (e = readdir(d))) {
            struct stat st;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                fnmatch(part, e->d_name, FNM_PERIOD) != 0 ||
                snprintf(path, sizeof path, "%s/%s", w->paths[i], e->d_name) >= (int)sizeof path)
                continue;
            if (!inside(w, path))
                rc = refuse_link(w, path);
            else if (last || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
                rc = keep(w, next, &n, path);
        }
        if (d)
            closedir(d);
    }
    drop(w->paths, w->n);
    w->paths = next;
    w->n = n;
    return rc;
}

/* meta.json beside a matched file is read too (spec/data.h). */
static int check_meta(struct walk *w)
{
    char dir[PATH_MAX] = "", path[PATH_MAX + 16];
    for (int i = 0; i < w->n; i++) {
        const char *slash = strrchr(w->paths[i], '/');
        size_t len = (size_t)(slash - w->paths[i]);
        if (len < sizeof dir && !(strlen(dir) == len && !strncmp(dir, w->paths[i], len))) {
            memcpy(dir, w->paths[i], len);
            dir[len] = 0;
            snprintf(path, sizeof path, "%s/meta.json", dir);
            if (!inside(w, path))
                return refuse_link(w, path);
        }
    }
    return 0;
}

int data_roots_check(const struct data_roots *roots, const char *pattern, const char *field,
                     struct spec_error *err)
{
    /* an instruction run's data.val may name nothing: there is then no file to check */
    if (!pattern[0])
        return 0;
    struct walk w = {.roots = roots, .pattern = pattern, .field = field, .err = err};
    char abs[PATH_MAX], text[PATH_MAX], root[PATH_MAX], best[PATH_MAX] = "";
    for (int i = 0; i < roots->n && w.n_real < 16; i++)
        if (realpath(roots->dirs[i], w.real[w.n_real]))
            w.n_real++;
    /* the pattern's parts: ".." is refused, not followed, since a folder
     * it climbs out of may be a symlink's */
    if (pattern[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) ||
            snprintf(text, sizeof text, "%s/%s", cwd, pattern) >= (int)sizeof text)
            return spec_fail(err, field, "%s: the path is too long", pattern);
    } else if (snprintf(text, sizeof text, "%s", pattern) >= (int)sizeof text) {
        return spec_fail(err, field, "%s: the path is too long", pattern);
    }
    char *parts[MAX_PARTS];
    int n_parts = 0, literal = 0;
    for (char *save = NULL, *p = strtok_r(text, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (!strcmp(p, "."))
            continue;
        if (!strcmp(p, ".."))
            return spec_fail(err, field,
                             "%s climbs with \"..\": data must lie under this server's data "
                             "roots, named as they are",
                             pattern);
        if (n_parts == MAX_PARTS)
            return spec_fail(err, field, "%s has more than %d parts", pattern, MAX_PARTS);
        parts[n_parts++] = p;
    }
    while (literal < n_parts && !has_glob(parts[literal]))
        literal++;
    size_t len = 0;
    abs[0] = 0;
    for (int i = 0; i < literal; i++)
        len += (size_t)snprintf(abs + len, sizeof abs - len, "/%s", parts[i]);
    if (!len)
        snprintf(abs, sizeof abs, "/");
    /* the root its literal part lies under: as given, or as it resolves */
    for (int i = 0; i < roots->n; i++) {
        if (absolute(roots->dirs[i], root, sizeof root) == 0 && under(abs, root) &&
            strlen(root) > strlen(best))
            snprintf(best, sizeof best, "%s", root);
    }
    for (int i = 0; i < w.n_real; i++)
        if (under(abs, w.real[i]) && strlen(w.real[i]) > strlen(best))
            snprintf(best, sizeof best, "%s", w.real[i]);
    if (!best[0] || n_parts == 0)
        return refuse_outside(&w);
    /* from the root down, a part at a time */
    int depth = 0;
    for (const char *p = best; *p; p++)
        depth += *p == '/' && p[1];
    w.paths = malloc(sizeof *w.paths);
    if (!w.paths || !(w.paths[0] = strdup(best))) {
        free(w.paths);
        return spec_fail(err, field, "out of memory expanding %s", pattern);
    }
    w.n = 1;
    int rc = 0;
    for (int i = depth; rc == 0 && i < n_parts && w.n; i++)
        rc = level(&w, parts[i], i == n_parts - 1);
    if (rc == 0 && w.n == 0)
        rc = spec_fail(err, field, "no file matches %s", pattern);
    if (rc == 0)
        rc = check_meta(&w);
    drop(w.paths, w.n);
    return rc;
}
