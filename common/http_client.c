/* HTTP client over libcurl: see http_client.h. */
#include "common/http_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct http_client {
    CURL *curl;
    char *base;
    struct curl_slist *headers;
    volatile const int *abort_flag;
};

int http_global_init(char *err, size_t errlen)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init: %s", curl_easy_strerror(rc));
        return -1;
    }
    return 0;
}

struct http_client *http_client_new(const char *base_url, const char *token, char *err,
                                    size_t errlen)
{
    struct http_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    c->base = strndup(base_url, n);
    c->curl = curl_easy_init();
    if (!c->base || !c->curl) {
        snprintf(err, errlen, "cannot create an HTTP client (out of memory)");
        http_client_free(c);
        return NULL;
    }
    c->headers = curl_slist_append(NULL, "Content-Type: application/json");
    int ok = c->headers != NULL;
    if (ok && token && *token) {
        char *line = NULL;
        struct curl_slist *h = NULL;
        if (asprintf(&line, "Authorization: Bearer %s", token) >= 0)
            h = curl_slist_append(c->headers, line);
        free(line);
        ok = h != NULL;
    }
    if (!ok) {
        snprintf(err, errlen, "cannot build request headers (out of memory)");
        http_client_free(c);
        return NULL;
    }
    return c;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    free(c->base);
    free(c);
}

int http_client_add_header(struct http_client *c, const char *line, char *err, size_t errlen)
{
    struct curl_slist *h = curl_slist_append(c->headers, line);
    if (!h) {
        snprintf(err, errlen, "out of memory adding a request header");
        return -1;
    }
    c->headers = h;
    return 0;
}

int http_client_set_header(struct http_client *c, const char *name, const char *value, char *err,
                           size_t errlen)
{
    size_t n = strlen(name);
    struct curl_slist *kept = NULL;
    char *line = NULL;
    int ok = !value || asprintf(&line, "%s: %s", name, value) >= 0;
    for (struct curl_slist *h = c->headers; ok && h; h = h->next) {
        if (!strncasecmp(h->data, name, n) && h->data[n] == ':')
            continue;
        struct curl_slist *more = curl_slist_append(kept, h->data);
        ok = more != NULL;
        if (ok)
            kept = more;
    }
    if (ok && line) {
        struct curl_slist *more = curl_slist_append(kept, line);
        ok = more != NULL;
        if (ok)
            kept = more;
    }
    free(line);
    if (!ok) {
        curl_slist_free_all(kept);
        snprintf(err, errlen, "out of memory setting the %s header", name);
        return -1;
    }
    curl_slist_free_all(c->headers);
    c->headers = kept;
    return 0;
}

void http_client_set_abort(struct http_client *c, volatile const int *flag)
{
    c->abort_flag = flag;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const struct http_client *c = user;
    return c->abort_flag && *c->abort_flag;
}

void http_response_clear(struct http_response *res)
{
    free(res->body);
    json_decref(res->json);
    memset(res, 0, sizeof *res);
}

struct sink {
    char *buf;
    size_t len, cap;
    int oom;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
    struct sink *s = user;
    size_t n = size * nmemb;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            s->oom = 1;
            return 0; /* makes curl fail the transfer */
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return n;
}

int http_request(struct http_client *c, const char *method, const char *path, const json_t *body,
                 double timeout_s, struct http_response *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    size_t ulen = strlen(c->base) + strlen(path) + 1;
    char *url = malloc(ulen);
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct sink s = {0};
    int ret = -1;
    if (!url || (body && !payload)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    snprintf(url, ulen, "%s%s", c->base, path);
    CURL *h = c->curl;
    curl_easy_reset(h);
    long ms = timeout_s > 0 ? (long)(timeout_s * 1000.0) : 0;
    /* Every option below either cannot fail for a valid handle or fails
     * the transfer itself, which curl_easy_perform reports. */
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 && ms < 10000 ? ms : 10000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "cod/1");
    if (c->abort_flag) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    if (payload) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
    } else if (!strcmp(method, "POST")) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    CURLcode rc = curl_easy_perform(h);
    if (s.oom) {
        snprintf(err, errlen, "out of memory reading the answer to %s %s", method, path);
        goto out;
    }
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(err, errlen, "%s %s: interrupted", method, url);
        goto out;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, url, curl_easy_strerror(rc));
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
    if (!s.buf) {
        s.buf = strdup("");
        if (!s.buf) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    res->body = s.buf;
    res->len = s.len;
    s.buf = NULL;
    if (res->len)
        res->json = json_loadb(res->body, res->len, 0, NULL);
    ret = 0;
out:
    if (!res->body)
        res->body = strdup("");
    free(s.buf);
    free(payload);
    free(url);
    return ret;
}

void http_error_text(const struct http_response *res, char *out, size_t n)
{
    json_t *e = res->json ? json_object_get(res->json, "error") : NULL;
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (msg) {
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *field = json_string_value(json_object_get(e, "field"));
        if (field)
            snprintf(out, n, "%s (%s, field %s)", msg, code ? code : "error", field);
        else
            snprintf(out, n, "%s (%s)", msg, code ? code : "error");
    } else if (res->body && *res->body) {
        snprintf(out, n, "HTTP %ld: %.*s", res->status, 300, res->body);
    } else {
        snprintf(out, n, "HTTP %ld", res->status);
    }
}

int http_query_escape(const char *s, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t j = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= '0' && ch <= '9') || strchr("-_.~", ch);
        if (j + (plain ? 1 : 3) >= n)
            return -1;
        if (plain) {
            out[j++] = (char)ch;
        } else {
            out[j++] = '%';
            out[j++] = hex[ch >> 4];
            out[j++] = hex[ch & 15];
        }
    }
    if (j >= n)
        return -1;
    out[j] = '\0';
    return 0;
}
