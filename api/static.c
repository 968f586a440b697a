/* Embedded dashboard files. They are revalidated on every load (no-cache
 * with an ETag): a rebuilt cod-server is seen at once, an unchanged file
 * costs a 304. */
#include "api/static.h"

#include <string.h>

struct web_file {
    const char *name;
    const unsigned char *data;
    size_t len;
    const char *etag;   /* quoted, as sent */
};

#include "build/gen/web_assets.inc"

static const char *content_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(dot, types[i].ext))
            return types[i].type;
    return "text/plain; charset=utf-8";  /* LICENSE, README */
}

enum MHD_Result static_reply(struct req *r, const char *name)
{
    const struct web_file *f = NULL;
    for (size_t i = 0; !f && i < sizeof web_files / sizeof web_files[0]; i++)
        if (!strcmp(web_files[i].name, name))
            f = &web_files[i];
    if (!f)
        return reply_error(r, 404, "not_found", NULL, "no file %s in the dashboard", name);
    const char *inm =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    int fresh = inm && (strstr(inm, f->etag) || !strcmp(inm, "*"));
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        fresh ? 0 : f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(name)) != MHD_YES ||
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, f->etag) != MHD_YES ||
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache") != MHD_YES ||
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") != MHD_YES) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    r->status = fresh ? 304 : 200;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result h_static(struct req *r, int64_t id)
{
    (void)id;
    return static_reply(r, r->url + strlen("/static/"));
}
