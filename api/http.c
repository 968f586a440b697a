/* Reply helpers shared by every handler. */
#include "api/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Queues resp, or on a write thread keeps it for access_cb (server.c) to
 * queue: only libmicrohttpd's own thread may queue a response. */
static enum MHD_Result reply_send(struct req *r, int status, struct MHD_Response *resp)
{
    if (r->deferred) {
        if (r->answer) {
            MHD_destroy_response(resp);
            return MHD_NO;
        }
        r->answer = resp;
        r->answer_status = status;
        return MHD_YES;
    }
    r->status = status;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result reply_kept(struct req *r)
{
    struct MHD_Response *resp = r->answer;
    r->answer = NULL;
    r->status = r->answer_status;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result reply_text(struct req *r, int status, const char *type, const char *text,
                           size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == 405 && r->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    return reply_send(r, status, resp);
}

enum MHD_Result reply_json(struct req *r, int status, json_t *body)
{
    if (!body)
        return reply_error(r, 500, "internal", NULL, "out of memory");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!text)
        return MHD_NO;
    size_t len = strlen(text);
    text[len] = '\n';  /* the terminator becomes a trailing newline, friendly to curl */
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len + 1, text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return reply_send(r, status, resp);
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 where none starts. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0;  /* overlong, a surrogate, past U+10FFFF */
    return k;
}

/* An error quotes what the client sent (a path, a query value), which need
 * not be UTF-8, and a message cut to fit its buffer may end inside a
 * character; a JSON string must be UTF-8, so any other byte becomes '?'. */
static void utf8_clean(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p;) {
        size_t k = utf8_seq(p);
        if (!k)
            *p = '?', k = 1;
        p += k;
    }
}

enum MHD_Result reply_error(struct req *r, int status, const char *code, const char *field,
                            const char *fmt, ...)
{
    char msg[768], where[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_clean(msg);
    json_t *e = json_pack("{s:s,s:s}", "code", code, "message", msg);
    if (e && field) {
        snprintf(where, sizeof where, "%s", field);
        utf8_clean(where);
        json_object_set_new(e, "field", json_string(where));
    }
    json_t *body = e ? json_pack("{s:o}", "error", e) : NULL;
    if (!body) {
        static const char oom[] = "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}\n";
        return reply_text(r, 500, "application/json", oom, sizeof oom - 1);
    }
    if (status == 405) {
        /* reply_json has no Allow header; 405 goes through reply_text. */
        char *text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        if (!text)
            return MHD_NO;
        enum MHD_Result ret = reply_text(r, 405, "application/json", text, strlen(text));
        free(text);
        return ret;
    }
    return reply_json(r, status, body);
}

enum MHD_Result reply_empty(struct req *r, int status)
{
    return reply_text(r, status, NULL, "", 0);
}

enum MHD_Result reply_store(struct req *r, int rc, const char *what)
{
    if (rc == ST_NOTFOUND)
        return reply_error(r, 404, "not_found", NULL, "no such %s", what);
    char why[128];
    if (store_unavailable_since(r->app->store, r->start, why, sizeof why))
        return reply_error(r, 503, "unavailable", NULL,
                           "the database is unavailable (%s); the request was not acknowledged: "
                           "try it again",
                           why);
    return reply_error(r, 500, "internal", NULL, "the database failed; see the server log");
}

json_t *body_object(struct req *r, int empty_ok, enum MHD_Result *ret)
{
    if (r->len == 0 && empty_ok)
        return json_object();
    json_error_t err;
    json_t *root = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        *ret = reply_error(r, 400, "bad_json", NULL, "malformed JSON at line %d column %d: %s",
                           err.line, err.column, err.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        *ret = reply_error(r, 422, "invalid", NULL, "the body must be a JSON object");
        return NULL;
    }
    return root;
}

const char *query_str(struct req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *query_text(struct req *r, const char *key, const char *def, enum MHD_Result *ret)
{
    const char *v = query_str(r, key);
    if (!v)
        return def;
    for (const unsigned char *p = (const unsigned char *)v; *p;) {
        size_t k = utf8_seq(p);
        if (!k) {
            *ret = reply_error(r, 400, "bad_query", key, "%s must be UTF-8 text", key);
            return NULL;
        }
        p += k;
    }
    return v;
}

int query_long(struct req *r, const char *key, long def, long min, long max, long *out,
               enum MHD_Result *ret)
{
    const char *v = query_str(r, key);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < min || x > max) {
        *ret = reply_error(r, 400, "bad_query", key, "%s must be an integer in [%ld, %ld], got \"%s\"",
                           key, min, max, v);
        return -1;
    }
    *out = x;
    return 0;
}

const char *unknown_key(json_t *obj, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            ok |= !strcmp(*a, k);
        if (!ok)
            return k;
    }
    return NULL;
}

int client_gone(struct req *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return 0;
    char b;
    /* a closed end reads as end of file; a live idle one has nothing yet */
    ssize_t n = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}
