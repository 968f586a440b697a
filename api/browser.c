/* Host, Origin and a POST's Content-Type: see browser.h. */
#include "api/browser.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The host part of a Host value ("name:port", "[v6]:port") into out,
 * without a final dot; 0, or -1 when it is malformed or too long. */
static int host_part(const char *v, char *out, size_t n)
{
    const char *end;
    if (*v == '[') {
        v++;
        end = strchr(v, ']');
        if (!end || (end[1] && end[1] != ':'))
            return -1;
    } else {
        end = strchr(v, ':');
        if (!end)
            end = v + strlen(v);
    }
    size_t len = (size_t)(end - v);
    if (len && v[len - 1] == '.')
        len--;
    if (!len || len >= n)
        return -1;
    memcpy(out, v, len);
    out[len] = 0;
    return 0;
}

static int is_ip(const char *h)
{
    unsigned char a[16];
    return inet_pton(AF_INET, h, a) == 1 || inet_pton(AF_INET6, h, a) == 1;
}

/* Is h one of the comma-separated names (case aside)? */
static int named(const char *h, const char *names)
{
    size_t hl = strlen(h);
    for (const char *p = names; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == hl && !strncasecmp(p, h, hl))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The media type of a Content-Type value, parameters aside, is application/json. */
static int is_json(const char *v)
{
    static const char want[] = "application/json";
    while (*v == ' ' || *v == '\t')
        v++;
    if (strncasecmp(v, want, sizeof want - 1))
        return 0;
    v += sizeof want - 1;
    while (*v == ' ' || *v == '\t')
        v++;
    return !*v || *v == ';';
}

static const char *header(struct req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

int browser_refused(struct req *r, enum MHD_Result *ret)
{
    const char *host = header(r, MHD_HTTP_HEADER_HOST), *origin = header(r, "Origin");
    char name[256];
    r->route = "refused";
    if (host && (host_part(host, name, sizeof name) != 0 ||
                 !(is_ip(name) || !strcasecmp(name, "localhost") ||
                   named(name, r->app->allowed_hosts)))) {
        *ret = reply_error(r, 421, "misdirected", NULL,
                           "Host \"%.200s\" does not name this server: use its address or "
                           "localhost, or name it in --allowed-hosts",
                           host);
        return 1;
    }
    if (origin) {
        /* scheme://authority, the authority the Host the browser sent */
        const char *auth = strstr(origin, "://");
        if (!host || !auth || strcasecmp(auth + 3, host)) {
            *ret = reply_error(r, 403, "cross_origin", NULL,
                               "Origin \"%.200s\" is not this server's own: a page of another "
                               "site may not call it",
                               origin);
            return 1;
        }
    }
    if (!strcmp(r->method, "POST")) {
        const char *type = header(r, MHD_HTTP_HEADER_CONTENT_TYPE),
                   *len = header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
        int body = header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING) || (len && strcmp(len, "0"));
        if (type ? !is_json(type) : body) {
            *ret = reply_error(r, 415, "unsupported_media_type", NULL,
                               "a POST's body must be Content-Type: application/json, not "
                               "\"%.100s\"",
                               type ? type : "(none)");
            return 1;
        }
    }
    r->route = NULL;
    return 0;
}
