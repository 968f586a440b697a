#include "eval/cloze.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "eval/pyrandom.h"
#include "text/decompress.h"

struct doc {
    char *text;   /* whitespace runs made one space */
    size_t len;
    char *name;
};

struct sentence {
    int doc;
    size_t start, end;  /* in its document's text */
};

struct corpus {
    struct doc *docs;
    int n, cap;
};

/* a file's text, whitespace runs made one space, ends trimmed */
static int read_doc(const char *path, struct corpus *c, char *err, size_t errlen)
{
    struct dz *z = dz_open(path, err, errlen);
    if (!z)
        return -1;
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap), buf[1 << 15];
    int space = 1, rc = 0;
    ssize_t got = 0;
    while (t && (got = dz_read(z, buf, sizeof buf, err, errlen)) > 0) {
        for (ssize_t i = 0; t && i < got; i++) {
            int ws = isspace((unsigned char)buf[i]);
            if (ws && space)
                continue;
            if (n + 2 > cap) {
                char *p = realloc(t, cap *= 2);
                if (!p)
                    free(t);
                t = p;
            }
            if (t)
                t[n++] = ws ? ' ' : buf[i];
            space = ws;
        }
    }
    if (got < 0)
        rc = -1;
    dz_close(z);
    if (!rc && !t) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    while (!rc && n && t[n - 1] == ' ')
        n--;
    if (!rc && c->n == c->cap) {
        int nc = c->cap ? 2 * c->cap : 64;
        struct doc *d = realloc(c->docs, (size_t)nc * sizeof *d);
        if (!d) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else {
            c->docs = d;
            c->cap = nc;
        }
    }
    if (rc) {
        free(t);
        return -1;
    }
    t[n] = 0;
    const char *base = strrchr(path, '/');
    c->docs[c->n++] = (struct doc){t, n, strdup(base ? base + 1 : path)};
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a file, or the files under a folder in name order (hidden ones left out) */
static int walk(const char *path, struct corpus *c, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: no such file or folder", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return read_doc(path, c, err, errlen);
    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, errlen, "%s: cannot read the folder", path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = -1;
                break;
            }
            names = p;
        }
        if (asprintf(&names[n], "%s/%s", path, e->d_name) < 0)
            rc = -1;
        else
            n++;
    }
    closedir(d);
    if (rc)
        snprintf(err, errlen, "out of memory");
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = walk(names[i], c, err, errlen);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* A '.' after an initial ("E. M. Martin") or a title is no sentence's end. */
static int abbreviation(const char *t, size_t dot)
{
    static const char *const abbr[] = {"Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Mt", "No",
                                       "vs", "etc", "Gen", "Gov", "Sen", "Rep", "Col", "Lt",
                                       "Capt", "Prof", "Rev", "Inc", "Co", "Corp", "Ltd", NULL};
    size_t w = dot;
    while (w > 0 && isalpha((unsigned char)t[w - 1]))
        w--;
    size_t len = dot - w;
    if (len == 1 && isupper((unsigned char)t[w]))
        return 1;
    for (int i = 0; abbr[i]; i++)
        if (strlen(abbr[i]) == len && !strncmp(t + w, abbr[i], len))
            return 1;
    return 0;
}

/* Sentences end at . ! or ? (and closing quotes) before a space and a
 * capital letter or an opening quote. */
static int split(const struct corpus *c, struct sentence **out, long *n_out)
{
    long n = 0, cap = 1024;
    struct sentence *s = malloc((size_t)cap * sizeof *s);
    for (int d = 0; s && d < c->n; d++) {
        const char *t = c->docs[d].text;
        size_t len = c->docs[d].len, start = 0;
        for (size_t i = 0; i < len; i++) {
            if (t[i] != '.' && t[i] != '!' && t[i] != '?')
                continue;
            size_t end = i + 1;
            while (end < len && strchr("\"')]", t[end]))
                end++;
            if (end + 1 >= len || t[end] != ' ')
                continue;
            unsigned char next = (unsigned char)t[end + 1];
            if (!(isupper(next) || next == '"' || next == '\'' || next == '`'))
                continue;
            if (t[i] == '.' && abbreviation(t, i))
                continue;
            if (n == cap) {
                struct sentence *p = realloc(s, (size_t)(cap *= 2) * sizeof *s);
                if (!p) {
                    free(s);
                    return -1;
                }
                s = p;
            }
            s[n++] = (struct sentence){d, start, end};
            start = end + 1;
        }
    }
    *out = s;
    *n_out = n;
    return s ? 0 : -1;
}

static int has_letters(const char *t, size_t a, size_t b)
{
    int letters = 0;
    for (size_t i = a; i < b; i++)
        letters += isalpha((unsigned char)t[i]) != 0;
    return letters >= 3;
}

static void shuffle(long *v, long n, struct py_random *r)
{
    for (long i = n - 1; i > 0; i--) {
        long j = (long)py_random_below(r, (uint32_t)(i + 1));
        long t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static const struct sentence *by_length_s;

static int by_length(const void *a, const void *b)
{
    const struct sentence *x = &by_length_s[*(const long *)a], *y = &by_length_s[*(const long *)b];
    long lx = (long)(x->end - x->start), ly = (long)(y->end - y->start);
    return lx != ly ? (lx > ly) - (lx < ly) : (*(const long *)a > *(const long *)b) - (*(const long *)a < *(const long *)b);
}

/* The passage before sentence k: the whole sentences before it within
 * context_chars, at least one. */
static void passage(const struct sentence *s, long k, int context_chars, size_t *from, size_t *to)
{
    const struct sentence *g = &s[k];
    *from = s[k - 1].start;
    for (long p = k - 2; p >= 0 && s[p].doc == g->doc && (long)(g->start - s[p].start) <= context_chars;
         p--)
        *from = s[p].start;
    *to = g->start - 1;
}

/* The item of group[q]'s sentence: the group's passages in a random order,
 * the sentence's own the gold. */
static int write_item(const struct corpus *c, const struct sentence *s, const long *group, int k,
                      int q, const struct cloze_opts *o, struct py_random *r, FILE *out,
                      char *err, size_t errlen)
{
    long order[64];
    for (int i = 0; i < k; i++)
        order[i] = group[i];
    shuffle(order, k, r);
    const struct sentence *g = &s[group[q]];
    json_t *contexts = json_array();
    int gold = 0;
    for (int i = 0; contexts && i < k; i++) {
        size_t from, to;
        passage(s, order[i], o->context_chars, &from, &to);
        gold = order[i] == group[q] ? i : gold;
        json_array_append_new(contexts, json_stringn(c->docs[s[order[i]].doc].text + from,
                                                     to - from));
    }
    json_t *row = json_pack("{s:o, s:s%, s:i, s:s}", "contexts", contexts, "continuation",
                            c->docs[g->doc].text + g->start, g->end - g->start, "gold", gold,
                            "doc", c->docs[g->doc].name);
    char *line = row ? json_dumps(row, JSON_COMPACT) : NULL;
    json_decref(row);
    int rc = 0;
    if (!line || fprintf(out, "%s\n", line) < 0) {
        snprintf(err, errlen, line ? "cannot write the task" : "out of memory");
        rc = -1;
    }
    free(line);
    return rc;
}

int cloze_build(char *const *paths, int n_paths, const struct cloze_opts *o, FILE *out, int *made,
                char *err, size_t errlen)
{
    struct corpus c = {0};
    struct sentence *s = NULL;
    long n = 0, *pick = NULL;
    unsigned char *used = NULL;
    int rc = 0;
    *made = 0;
    if (o->choices < 2 || o->choices > 64) {
        snprintf(err, errlen, "%d choices: 2 to 64", o->choices);
        return -1;
    }
    for (int i = 0; !rc && i < n_paths; i++)
        rc = walk(paths[i], &c, err, errlen);
    if (!rc && split(&c, &s, &n)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    /* the eligible: a sentence of the right length after one of its document's */
    pick = rc ? NULL : malloc((size_t)n * sizeof(long) + 8);
    used = rc ? NULL : calloc((size_t)n + 1, 1);
    long m = 0;
    for (long i = 1; pick && i < n; i++) {
        long len = (long)(s[i].end - s[i].start);
        if (s[i].doc == s[i - 1].doc && len >= o->min_chars && len <= o->max_chars &&
            has_letters(c.docs[s[i].doc].text, s[i].start, s[i].end))
            pick[m++] = i;
    }
    if (!rc && (!pick || !used)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    struct py_random r;
    py_random_seed(&r, o->seed);
    if (!rc)
        shuffle(pick, m, &r);
    long items = m < o->items ? m : o->items;
    by_length_s = s;
    if (!rc)
        qsort(pick, (size_t)items, sizeof(long), by_length);
    /* groups of K sentences of near lengths from K documents, an item a
     * sentence whose choices are the group's K passages */
    long group[64];
    for (long i = 0; !rc && i < items; i++) {
        if (used[i])
            continue;
        int k = 0;
        for (long j = i; j < items && k < o->choices; j++) {
            int clash = used[j];
            for (int q = 0; q < k && !clash; q++)
                clash = s[group[q]].doc == s[pick[j]].doc;
            if (!clash) {
                group[k++] = pick[j];
                used[j] = 1;
            }
        }
        if (k < o->choices)
            break;
        for (int q = 0; !rc && q < k; q++)
            rc = write_item(&c, s, group, k, q, o, &r, out, err, errlen);
        *made += rc ? 0 : k;
    }
    if (!rc && *made == 0) {
        snprintf(err, errlen, "%ld sentences of %d to %d characters follow another: no %d of "
                              "them from %d documents",
                 m, o->min_chars, o->max_chars, o->choices, o->choices);
        rc = -1;
    }
    for (int d = 0; d < c.n; d++) {
        free(c.docs[d].text);
        free(c.docs[d].name);
    }
    free(c.docs);
    free(s);
    free(pick);
    free(used);
    return rc;
}
