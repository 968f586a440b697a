#include "trainer/metrics_log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/path.h"

static int keep_prefix(const char *path, long keep_through_step, char *err, size_t errlen)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1);
    char tmp[4200];
    if (path_fmt(tmp, sizeof(tmp), err, errlen, "%s.tmp", path) != 0) {
        fclose(in);
        return -1;
    }
    FILE *out = fopen(tmp, "w");
    if (!out) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        fclose(in);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, in) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        json_t *st = j ? json_object_get(j, "step") : NULL;
        /* a torn last line (killed mid-write) is dropped with the rest */
        if (json_is_integer(st) && json_integer_value(st) <= keep_through_step &&
            fputs(line, out) == EOF)
            rc = -1;
        json_decref(j);
    }
    free(line);
    fclose(in);
    if (fclose(out) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc)
        snprintf(err, errlen, "%s: rewriting for resume failed: %s", path, strerror(errno));
    return rc;
}

int metrics_log_open(struct metrics_log *ml, const char *dir, long keep_through_step, char *err,
                     size_t errlen)
{
    char *path = ml->path;
    ml->err = 0;
    if (path_fmt(path, sizeof(ml->path), err, errlen, "%s/metrics.jsonl", dir))
        return -1;
    if (keep_through_step >= 0 && keep_prefix(path, keep_through_step, err, errlen))
        return -1;
    ml->f = fopen(path, keep_through_step >= 0 ? "a" : "w");
    if (!ml->f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int metrics_log_write(struct metrics_log *ml, long step, const char *name, int layer, double value)
{
    if (ml->err)
        return -1;
    char v[64];
    if (isfinite(value))
        snprintf(v, sizeof(v), "%.9g", value);
    else
        snprintf(v, sizeof(v), "null");
    errno = 0;
    if (layer >= 0)
        fprintf(ml->f, "{\"step\": %ld, \"name\": \"%s\", \"layer\": %d, \"value\": %s}\n", step,
                name, layer, v);
    else
        fprintf(ml->f, "{\"step\": %ld, \"name\": \"%s\", \"value\": %s}\n", step, name, v);
    /* stdio keeps the error: a failed fprintf shows here too */
    if (fflush(ml->f) != 0 || ferror(ml->f)) {
        ml->err = errno ? errno : EIO;
        return -1;
    }
    return 0;
}

void metrics_log_close(struct metrics_log *ml)
{
    if (ml->f)
        fclose(ml->f);
    ml->f = NULL;
}
