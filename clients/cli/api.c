/* Talking to cod-server: one call, its errors mapped onto the exit codes,
 * and the small output helpers every command shares. */
#include "clients/cli/cli.h"
#include "clients/cli/format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fail(const struct cli *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cod%s%s: ", c->cmd ? " " : "", c->cmd ? c->cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

static int connect_once(struct cli *c)
{
    if (c->http)
        return 0;
    char err[256];
    c->http = http_client_new(c->server, c->token, err, sizeof err);
    if (!c->http)
        return fail(c, EXIT_UNREACHABLE, "%s", err);
    if (c->idempotency_key) {
        char line[600];
        snprintf(line, sizeof line, "Idempotency-Key: %s", c->idempotency_key);
        if (http_client_add_header(c->http, line, err, sizeof err) != 0)
            return fail(c, EXIT_USAGE, "%s", err);
    }
    return 0;
}

int api_call(struct cli *c, const char *method, const char *path, const json_t *body,
             long quiet, json_t **out)
{
    *out = NULL;
    int rc = connect_once(c);
    if (rc != 0)
        return rc;
    struct http_response res = {0};
    char err[256];
    if (http_request(c->http, method, path, body, c->timeout_s, &res, err, sizeof err) != 0) {
        http_response_clear(&res);
        return fail(c, EXIT_UNREACHABLE, "cannot reach %s: %s", c->server, err);
    }
    if (res.status == quiet) {
        http_response_clear(&res);
        return 0;
    }
    if (res.status < 200 || res.status > 299) {
        char text[1024];
        http_error_text(&res, text, sizeof text);
        long status = res.status;
        http_response_clear(&res);
        return fail(c, status == 401 ? EXIT_AUTH : EXIT_REFUSED, "%s", text);
    }
    if (!res.json) {
        long status = res.status;
        http_response_clear(&res);
        return fail(c, EXIT_REFUSED, "%s %s: the answer (HTTP %ld) is not JSON", method, path,
                    status);
    }
    *out = json_incref(res.json);
    http_response_clear(&res);
    return 0;
}

int print_json(const struct cli *c, const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    if (!s)
        return fail(c, EXIT_REFUSED, "out of memory");
    int bad = puts(s) == EOF;
    free(s);
    return bad ? fail(c, EXIT_REFUSED, "cannot write the output") : 0;
}

int query_add(const struct cli *c, char *buf, size_t n, const char *key, const char *value)
{
    if (!value)
        return 0;
    char esc[1024];
    size_t len = strlen(buf);
    if (http_query_escape(value, esc, sizeof esc) != 0 ||
        snprintf(buf + len, n - len, "%c%s=%s", strchr(buf, '?') ? '&' : '?', key, esc) >=
            (int)(n - len))
        return fail(c, EXIT_USAGE, "the value of %s is too long", key);
    return 0;
}

const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? text_safe(s) : "-";
}

int id_arg(const struct cli *c, const char *word, const char *what, long *id)
{
    char *end;
    errno = 0;
    *id = strtol(word, &end, 10);
    if (errno || end == word || *end || *id <= 0)
        return fail(c, EXIT_USAGE, "\"%s\" is not %s %s id", word,
                    strchr("aeiou", what[0]) ? "an" : "a", what);
    return 0;
}
