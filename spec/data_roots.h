/* Where a server lets submitted data lie (docs/api.md, "Threat model"). A
 * spec's data.train and data.val are patterns that cod-server expands and
 * whose files it opens, so a token holder could otherwise walk the whole
 * filesystem (a pattern through /proc/N/root matches without end) and read
 * it through the refusals (a file's name and size in "too short for a
 * token shard header"). A pattern is checked here before any file of it is
 * opened: it must lie under one of the roots (--data-root), without "..";
 * it is expanded a level at a time, every symlink met on the way (a
 * directory, a file, meta.json beside the shards) must lead to a place
 * under a root, and it may match at most max_files files. A refusal names
 * the field and the rule, never a file outside the roots. */
#ifndef COD_SPEC_DATA_ROOTS_H
#define COD_SPEC_DATA_ROOTS_H

#include "spec/spec.h"

struct data_roots {
    const char *const *dirs;  /* as given; relative ones from the working directory */
    int n;
    int max_files;            /* matches of a pattern, at most */
};

/* 0 when pattern (field's) may be read, or -1 with *err naming field. */
int data_roots_check(const struct data_roots *roots, const char *pattern, const char *field,
                     struct spec_error *err);

#endif
