/* worker/tail: whole lines only, from the acknowledged offset on, in
 * batches; a line still being written is left for the next read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "worker/tail.h"

static char path[64];

static void put(const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    fputs(text, f);
    fclose(f);
}

/* A path that does not fit is refused, naming it, never cut to another file's name. */
static void too_long_path(void)
{
    struct tail t;
    char longpath[5000], err[256] = "";
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    CHECK(tail_init(&t, longpath, err, sizeof err) == -1, "a 4999-byte path accepted");
    CHECK(strstr(err, "path too long") && strstr(err, "/aaaa"), "err: %s", err);
}

static void missing_file_reads_empty(void)
{
    struct tail t;
    CHECK(tail_init(&t, "/nonexistent/cod/metrics.jsonl", NULL, 0) == 0, "tail_init");
    char *buf, err[256];
    int n;
    long b;
    CHECK(tail_read(&t, 10, &buf, &n, &b, err, sizeof err) == 0, "%s", err);
    CHECK(n == 0 && b == 0 && buf == NULL, "n %d b %ld", n, b);
}

static void whole_lines_in_batches(void)
{
    struct tail t;
    CHECK(tail_init(&t, path, NULL, 0) == 0, "tail_init %s", path);
    put("a\nbb\nccc\nunfinished", "w");
    char *buf, err[256];
    int n;
    long b;
    CHECK(tail_read(&t, 2, &buf, &n, &b, err, sizeof err) == 0, "%s", err);
    CHECK(n == 2 && b == 5 && buf && !strcmp(buf, "a\nbb\n"), "n %d b %ld", n, b);
    free(buf);
    /* not acknowledged: the same lines again */
    CHECK(tail_read(&t, 2, &buf, &n, &b, err, sizeof err) == 0 && n == 2 && !strcmp(buf, "a\nbb\n"),
          "reread");
    free(buf);
    tail_advance(&t, n, b);
    CHECK(tail_read(&t, 10, &buf, &n, &b, err, sizeof err) == 0, "%s", err);
    CHECK(n == 1 && buf && !strcmp(buf, "ccc\n"), "the torn line is left: n %d", n);
    tail_advance(&t, n, b);
    free(buf);
    put(" now done\nnext\n", "a");
    CHECK(tail_read(&t, 10, &buf, &n, &b, err, sizeof err) == 0, "%s", err);
    CHECK(n == 2 && buf && !strcmp(buf, "unfinished now done\nnext\n"), "n %d '%s'", n, buf);
    tail_advance(&t, n, b);
    free(buf);
    CHECK(t.lines == 5, "lines %ld", t.lines);
    CHECK(tail_read(&t, 10, &buf, &n, &b, err, sizeof err) == 0 && n == 0 && !buf, "at the end");
}

static void long_lines(void)
{
    struct tail t;
    CHECK(tail_init(&t, path, NULL, 0) == 0, "tail_init %s", path);
    size_t len = 300000;
    char *line = malloc(len + 2);
    memset(line, 'x', len);
    line[len] = '\n';
    line[len + 1] = '\0';
    put(line, "w");
    put(line, "a");
    char *buf, err[256];
    int n;
    long b;
    CHECK(tail_read(&t, 10, &buf, &n, &b, err, sizeof err) == 0, "%s", err);
    CHECK(n == 2 && b == (long)(2 * (len + 1)) && buf && buf[len] == '\n', "n %d b %ld", n, b);
    free(buf);
    free(line);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/cod-tail-%d.jsonl", (int)getpid());
    RUN(too_long_path);
    RUN(missing_file_reads_empty);
    RUN(whole_lines_in_batches);
    RUN(long_lines);
    unlink(path);
    CHECK_EXIT();
}
