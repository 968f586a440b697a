/* HTTP client for cod-server's JSON API, shared by cod-worker and the cod CLI.
 * One libcurl easy handle per client, kept alive between requests; a client
 * belongs to one thread at a time (the worker gives its heartbeat thread its
 * own). Transport failures (refused, timed out) are told apart from HTTP
 * answers so callers can retry the first and report the second. */
#ifndef COD_HTTP_CLIENT_H
#define COD_HTTP_CLIENT_H

#include <jansson.h>
#include <stddef.h>

struct http_client;

struct http_response {
    long status;  /* HTTP status; 0 before an answer came */
    char *body;   /* the raw body, NUL-terminated (never NULL after a call) */
    size_t len;
    json_t *json; /* the body parsed, or NULL when it is empty or not JSON */
};

/* Once per process, before any thread makes a client. 0 or -1. */
int http_global_init(char *err, size_t errlen);

/* base_url like "http://127.0.0.1:8470" (a trailing slash is dropped);
 * token may be NULL. NULL on failure with err filled. */
struct http_client *http_client_new(const char *base_url, const char *token, char *err,
                                    size_t errlen);
void http_client_free(struct http_client *c);

/* Adds a header line ("Name: value") to every later request. 0, or -1
 * (out of memory) with err. */
int http_client_add_header(struct http_client *c, const char *line, char *err, size_t errlen);

/* Sets the header name to value on every later request, replacing the
 * line of that name it had; a NULL value drops it. 0, or -1 (out of
 * memory) with err. */
int http_client_set_header(struct http_client *c, const char *name, const char *value, char *err,
                           size_t errlen);

/* While *flag is nonzero, requests in flight on c give up at once (-1, err
 * "interrupted"): a stopping worker does not sit out a long-poll. */
void http_client_set_abort(struct http_client *c, volatile const int *flag);

/* METHOD base_url+path with an optional JSON body, waiting at most timeout_s
 * in all. Returns 0 when the server answered (any status: see res->status),
 * -1 when it could not be reached or did not answer in time (err says which).
 * res is always left freeable with http_response_clear. */
int http_request(struct http_client *c, const char *method, const char *path, const json_t *body,
                 double timeout_s, struct http_response *res, char *err, size_t errlen);
void http_response_clear(struct http_response *res);

/* The server's error as it wrote it: "message (code, field)" from an
 * {"error": {...}} body, else the raw body, else "HTTP <status>". */
void http_error_text(const struct http_response *res, char *out, size_t n);

/* Percent-encodes s for a query string into out. 0, or -1 if out is too small. */
int http_query_escape(const char *s, char *out, size_t n);

#endif
