/* libFuzzer harness: the Parquet reader (parquet/), which reads files that
 * come from anywhere. The input is a whole file. It is read both ways in:
 * as rows of every top-level column (as a task loader would), and as the
 * strings of each top-level column that is one (as cod-prep does), a few
 * thousand rows at most each way. Whatever the bytes, an open or a read
 * either succeeds or fails with a message naming the file; a row is a JSON
 * object of the file's columns; a string is no longer than the file. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "parquet/parquet.h"
#include "tests/fuzz/fuzz_util.h"

enum { MAX_ROWS = 4000 };

static void named(const char *err, const char *path)
{
    if (!strstr(err, path))
        fuzz_die("an error that does not name the file: %s", err);
}

static void rows(const char *path)
{
    char err[2048] = "";
    struct pq_rows *r = pq_rows_open(path, NULL, 0, err, sizeof(err));
    if (!r) {
        named(err, path);
        return;
    }
    json_t *row;
    int k = 0;
    for (int n = 0; n < MAX_ROWS && (k = pq_rows_next(r, &row, err, sizeof(err))) == 1; n++) {
        if (!json_is_object(row))
            fuzz_die("a row that is not a JSON object");
        char *s = json_dumps(row, JSON_COMPACT);
        if (!s)
            fuzz_die("a row jansson cannot write");
        free(s);
        json_decref(row);
    }
    if (k < 0)
        named(err, path);
    pq_rows_close(r);
}

static void texts(const char *path, size_t size)
{
    char err[2048] = "";
    struct pq_file *f = pq_open(path, err, sizeof(err));
    if (!f) {
        named(err, path);
        return;
    }
    /* each top-level column that is a string; the rest refused with a reason */
    struct pq_rows *names = pq_rows_open(path, NULL, 0, err, sizeof(err));
    json_t *row = NULL;
    if (names && pq_rows_next(names, &row, err, sizeof(err)) == 1) {
        const char *key;
        json_t *v;
        json_object_foreach(row, key, v) {
            int col = pq_text_column(f, key, err, sizeof(err));
            if (col < 0) {
                named(err, path);
                continue;
            }
            long seen = 0;
            for (int g = 0; g < pq_row_groups(f) && seen < MAX_ROWS; g++) {
                struct pq_text *t = pq_text_open(f, g, col, err, sizeof(err));
                const char *s;
                size_t n;
                int k = 0;
                while (t && seen < MAX_ROWS && (k = pq_text_next(t, &s, &n, err, sizeof(err))) == 1) {
                    if (s && n > size)
                        fuzz_die("a string of %zu bytes from a file of %zu", n, size);
                    if (s)
                        utf8_valid(s, n);
                    seen++;
                }
                if (!t || k < 0)
                    named(err, path);
                pq_text_close(t);
            }
        }
    }
    json_decref(row);
    pq_rows_close(names);
    pq_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file("in.parquet", data, size);
    rows(path);
    texts(path, size);
    return 0;
}
