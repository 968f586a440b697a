/* Option parsing shared by every command (see args.h). */
#include "clients/cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strlist_push(struct strlist *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        const char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

void strlist_free(struct strlist *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Stores one option's value; -1 with a message when it does not fit. */
static int store(struct cli *c, const struct opt *o, const char *v)
{
    char *end;
    errno = 0;
    switch (o->kind) {
    case OPT_FLAG:
        *(int *)o->dst = 1;
        return 0;
    case OPT_STR:
        *(const char **)o->dst = v;
        return 0;
    case OPT_LONG: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < 0) {
            fail(c, EXIT_USAGE, "%s wants a whole number >= 0, not \"%s\"", o->name, v);
            return -1;
        }
        *(long *)o->dst = x;
        return 0;
    }
    case OPT_NUM: {
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x) || x <= 0) {
            fail(c, EXIT_USAGE, "%s wants a number > 0, not \"%s\"", o->name, v);
            return -1;
        }
        *(double *)o->dst = x;
        return 0;
    }
    case OPT_PAIRS:
    case OPT_LIST:
        if ((o->kind == OPT_PAIRS && strlist_push(o->dst, o->name) != 0) ||
            strlist_push(o->dst, v) != 0) {
            fail(c, EXIT_USAGE, "out of memory");
            return -1;
        }
        return 0;
    }
    return -1;
}

int cli_args(struct cli *c, int argc, char **argv, const struct opt *opts, int *npos,
             const char *usage, int min_pos, int max_pos)
{
    int n = 0, only_pos = 0;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (only_pos || a[0] != '-' || !a[1]) {
            argv[n++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const struct opt *o = opts;
        while (o->name && (strlen(o->name) != len || strncmp(o->name, a, len)))
            o++;
        if (!o->name)
            return fail(c, EXIT_USAGE, "unknown option %.*s (see cod %s --help)", (int)len, a,
                        c->cmd);
        const char *v = eq ? eq + 1 : NULL;
        if (o->kind == OPT_FLAG && v)
            return fail(c, EXIT_USAGE, "%s takes no value", o->name);
        if (o->kind != OPT_FLAG && !v) {
            if (i + 1 >= argc)
                return fail(c, EXIT_USAGE, "%s wants a value", o->name);
            v = argv[++i];
        }
        if (store(c, o, v) != 0)
            return EXIT_USAGE;
    }
    *npos = n;
    if (n < min_pos || (max_pos >= 0 && n > max_pos)) {
        fputs(usage, stderr);
        return fail(c, EXIT_USAGE, n < min_pos ? "too few arguments" : "too many arguments");
    }
    return ARGS_GO;
}
