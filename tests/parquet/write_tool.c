/* parquet_write: JSON lines on stdin to a Parquet file, through the tests'
 * writer (writer.h), for the shell tests and the benchmark.
 *   parquet_write [--codec none|snappy|gzip|zstd] [--codec-id N] [--v2] [--dict]
 *                 [--page-bytes N] [--group-rows N] [--lie N] OUT NAME:TYPE...
 * TYPE is string, int64 or double; a missing key or a null is a null. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/parquet/writer.h"

static int die(const char *m)
{
    fprintf(stderr, "parquet_write: %s\n", m);
    return 1;
}

int main(int argc, char **argv)
{
    struct pqw_opts o = {.codec_id = -1};
    int i = 1;
    for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--v2") || !strcmp(a, "--dict")) {
            *(a[2] == 'v' ? &o.v2 : &o.dict) = 1;
            continue;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--codec"))
            o.codec = !strcmp(v, "snappy") ? 1 : !strcmp(v, "gzip") ? 2 : !strcmp(v, "zstd") ? 6 : 0;
        else if (!strcmp(a, "--codec-id"))
            o.codec_id = atoi(v);
        else if (!strcmp(a, "--page-bytes"))
            o.page_bytes = (size_t)atoll(v);
        else if (!strcmp(a, "--group-rows"))
            o.group_rows = atoll(v);
        else if (!strcmp(a, "--lie"))
            o.lie = atoll(v);
        else
            return die("unknown option");
    }
    if (argc - i < 2)
        return die("usage: parquet_write [options] OUT NAME:TYPE...");
    int n = argc - i - 1;
    const char **names = calloc((size_t)n, sizeof(char *));
    enum pqw_type *types = calloc((size_t)n, sizeof(*types));
    const void **vals = calloc((size_t)n, sizeof(void *));
    size_t *lens = calloc((size_t)n, sizeof(size_t));
    int64_t *ints = calloc((size_t)n, sizeof(int64_t));
    double *dbls = calloc((size_t)n, sizeof(double));
    if (!names || !types || !vals || !lens || !ints || !dbls)
        return die("out of memory");
    for (int k = 0; k < n; k++) {
        char *spec = argv[i + 1 + k], *colon = strchr(spec, ':');
        if (!colon)
            return die("a column is NAME:TYPE");
        *colon = 0;
        names[k] = spec;
        types[k] = !strcmp(colon + 1, "int64") ? PQW_INT64 : !strcmp(colon + 1, "double") ? PQW_DOUBLE : PQW_STRING;
    }
    struct pqw *w = pqw_open(argv[i], names, types, n, &o);
    if (!w)
        return die("cannot create the file");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        json_error_t je;
        json_t *row = json_loadb(line, (size_t)len, JSON_ALLOW_NUL, &je);
        if (!row)
            return die(je.text);
        for (int k = 0; k < n; k++) {
            json_t *v = json_object_get(row, names[k]);
            vals[k] = NULL;
            if (types[k] == PQW_STRING && json_is_string(v)) {
                vals[k] = json_string_value(v);
                lens[k] = json_string_length(v);
            } else if (types[k] == PQW_INT64 && json_is_integer(v)) {
                ints[k] = json_integer_value(v);
                vals[k] = &ints[k];
            } else if (types[k] == PQW_DOUBLE && json_is_number(v)) {
                dbls[k] = json_number_value(v);
                vals[k] = &dbls[k];
            }
        }
        int rc = pqw_row(w, vals, lens);
        json_decref(row);
        if (rc != 0)
            return die("cannot write a row");
    }
    free(line);
    if (pqw_close(w) != 0)
        return die("cannot finish the file");
    free(names), free(types), free(vals), free(lens), free(ints), free(dbls);
    return 0;
}
