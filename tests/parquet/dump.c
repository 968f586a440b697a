/* parquet_dump: a Parquet file through cod's reader (parquet/parquet.h),
 * as JSON lines, for the tests to compare with another reader's.
 *   parquet_dump FILE [COLUMN...]         rows (every top-level column
 *                                          without COLUMNs), one a line
 *   parquet_dump --text KEY FILE          the strings of one column, a JSON
 *                                          string or null a line
 *   parquet_dump --against TWIN FILE [COLUMN...]   the rows against the
 *                                          JSON lines of TWIN, value for value
 * An error is printed as the reader gives it, with exit 1. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/parquet.h"

static int text(const char *key, const char *path)
{
    char err[2048];
    struct pq_file *f = pq_open(path, err, sizeof(err));
    int col = f ? pq_text_column(f, key, err, sizeof(err)) : -1;
    int rc = col >= 0 ? 0 : -1;
    for (int g = 0; rc == 0 && g < pq_row_groups(f); g++) {
        struct pq_text *t = pq_text_open(f, g, col, err, sizeof(err));
        const char *s;
        size_t n;
        int k;
        while (t && (k = pq_text_next(t, &s, &n, err, sizeof(err))) == 1) {
            json_t *j = s ? json_stringn(s, n) : json_null();
            char *out = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            printf("%s\n", out ? out : "\"(not UTF-8)\"");
            free(out);
            json_decref(j);
        }
        if (!t || k < 0)
            rc = -1;
        pq_text_close(t);
    }
    if (rc != 0)
        fprintf(stderr, "parquet_dump: %s\n", err);
    pq_close(f);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--text"))
        return text(argv[2], argv[3]);
    const char *twin = NULL;
    int i = 1;
    if (argc > 3 && !strcmp(argv[1], "--against")) {
        twin = argv[2];
        i = 3;
    }
    if (argc <= i) {
        fprintf(stderr, "usage: parquet_dump [--against TWIN] FILE [COLUMN...] | --text KEY FILE\n");
        return 2;
    }
    char err[2048];
    struct pq_rows *r = pq_rows_open(argv[i], (const char *const *)argv + i + 1, (size_t)(argc - i - 1), err,
                                     sizeof(err));
    if (!r) {
        fprintf(stderr, "parquet_dump: %s\n", err);
        return 1;
    }
    FILE *tf = twin ? fopen(twin, "r") : NULL;
    if (twin && !tf) {
        perror(twin);
        return 1;
    }
    json_t *row;
    int k, bad = 0;
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    while ((k = pq_rows_next(r, &row, err, sizeof(err))) == 1) {
        if (tf) {
            json_error_t je;
            json_t *want = getline(&line, &cap, tf) > 0 ? json_loads(line, 0, &je) : NULL;
            if (!json_equal(row, want) && !bad++) {
                char *got = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
                fprintf(stderr, "parquet_dump: row %ld differs:\n  parquet %s\n  twin    %s", n, got,
                        want ? line : "(none)\n");
                free(got);
            }
            json_decref(want);
        } else {
            char *out = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
            printf("%s\n", out);
            free(out);
        }
        json_decref(row);
        n++;
    }
    if (k < 0)
        fprintf(stderr, "parquet_dump: %s\n", err);
    if (tf && k == 0 && getline(&line, &cap, tf) > 0 && !bad++)
        fprintf(stderr, "parquet_dump: the twin has more than the file's %ld rows\n", n);
    if (tf && !bad && k == 0)
        printf("the same %ld rows\n", n);
    free(line);
    if (tf)
        fclose(tf);
    pq_rows_close(r);
    return k < 0 || bad ? 1 : 0;
}
