/* What cod-prep reads: the files and directories it is given, expanded
 * into one list of files in a fixed order, each with its format and its
 * split. A directory is walked in name order, its subdirectories too
 * (hidden entries left out), so that the output does not depend on the
 * order the filesystem lists them. A file's format is its name's:
 * NAME.jsonl and NAME.json are JSON lines (one object per line),
 * NAME.parquet is Parquet (prep/parquet_input.h), anything else is text,
 * one document per file; JSON lines and text may end in .gz, .zst or .xz
 * (text/decompress.h), Parquet compresses its own pages. */
#ifndef COD_PREP_INPUTS_H
#define COD_PREP_INPUTS_H

#include <stddef.h>
#include <stdint.h>

enum input_format { INPUT_TEXT, INPUT_JSONL, INPUT_PARQUET };

struct input_file {
    char *path;
    int split;             /* the split its documents go to, or -1: chosen per document */
    enum input_format format;
    int64_t size;          /* as stored, for the progress bar */
};

struct input_list {
    struct input_file *v;
    size_t n, cap;
    int64_t bytes;         /* the sum of the sizes */
};

/* Adds PATH (a file, or a directory's files) with that split. 0, or -1
 * with err naming the path (missing, unreadable, a directory without
 * files). */
int inputs_add(struct input_list *l, const char *path, int split, char *err, size_t errlen);
void inputs_free(struct input_list *l);

#endif
