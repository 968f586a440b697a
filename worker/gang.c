/* A worker's part in a gang: see gang.h. */
#include "worker/gang.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/backoff.h"
#include "worker/runlog.h"

#ifdef COD_HAVE_CUDA
#include "kernels/cuda/comm_nccl.h"

enum { ID_B64 = 4 * ((COMM_NCCL_ID_BYTES + 2) / 3) + 1 };

/* One request of the rendezvous, retried while the server cannot be
 * reached: 0 with the answer in *res, 1 when the abort said stop, -1 with
 * err. */
static int ask(const struct gang_cfg *g, struct http_client *http, const char *method,
               const char *path, json_t *body, double timeout, struct http_response *res,
               char *err, size_t errlen)
{
    double delay = 0;
    int said = 0;
    for (;;) {
        if (g->abort && g->abort(g->abort_ctx))
            return 1;
        if (http_request(http, method, path, body, timeout, res, err, errlen) == 0 &&
            res->status < 500)
            return 0;
        if (res->status >= 500)
            http_error_text(res, err, errlen);
        http_response_clear(res);
        if (!said++)
            runlog_printf("rendezvous of run %lld: the server is not answering (%s); retrying",
                          g->run, err);
        usleep((useconds_t)(backoff_next(&delay) * 1e6));
    }
}

/* Rank 0 makes the id and posts it. */
static int post_id(const struct gang_cfg *g, struct http_client *http, unsigned char *id,
                   int *lost, char *err, size_t errlen)
{
    if (comm_nccl_unique_id(id, err, errlen) != 0)
        return -1;
    char b64[ID_B64], path[96];
    EVP_EncodeBlock((unsigned char *)b64, id, COMM_NCCL_ID_BYTES);
    snprintf(path, sizeof path, "/v1/runs/%lld/rendezvous", g->run);
    json_t *body = json_pack("{s:i,s:s}", "rank", 0, "id", b64);
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct http_response res;
    int rc = ask(g, http, "POST", path, body, 30, &res, err, errlen);
    json_decref(body);
    if (rc == 0 && res.status != 200) {
        *lost = res.status == 409 || res.status == 404 || res.status == 403;
        http_error_text(&res, err, errlen);
        rc = -1;
    }
    http_response_clear(&res);
    if (rc > 0)
        snprintf(err, errlen, "stopped before the rendezvous");
    return rc ? -1 : 0;
}

/* Another rank waits for the id rank 0 posted. */
static int read_id(const struct gang_cfg *g, struct http_client *http, unsigned char *id,
                   int *lost, char *err, size_t errlen)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/runs/%lld/rendezvous?wait=10&rank=%d", g->run, g->rank);
    for (;;) {
        struct http_response res;
        int rc = ask(g, http, "GET", path, NULL, 40, &res, err, errlen);
        if (rc > 0) {
            snprintf(err, errlen, "stopped before the rendezvous");
            return -1;
        }
        if (rc < 0)
            return -1;
        if (res.status == 204) {
            http_response_clear(&res);
            continue;
        }
        const char *b64 = json_string_value(json_object_get(res.json, "id"));
        unsigned char raw[ID_B64];
        int n = -1;
        if (res.status == 200 && b64 && strlen(b64) == ID_B64 - 1)
            n = EVP_DecodeBlock(raw, (const unsigned char *)b64, ID_B64 - 1);
        if (res.status != 200)
            http_error_text(&res, err, errlen);
        else if (n < COMM_NCCL_ID_BYTES)
            snprintf(err, errlen, "the rendezvous id of run %lld is not an NCCL id", g->run);
        else
            memcpy(id, raw, COMM_NCCL_ID_BYTES);
        *lost = res.status == 409 || res.status == 404 || res.status == 403;
        http_response_clear(&res);
        return n >= COMM_NCCL_ID_BYTES ? 0 : -1;
    }
}

struct comm *gang_join(const struct gang_cfg *g, struct http_client *http, int *lost, char *err,
                       size_t errlen)
{
    unsigned char id[COMM_NCCL_ID_BYTES];
    *lost = 0;
    if ((g->rank == 0 ? post_id(g, http, id, lost, err, errlen)
                      : read_id(g, http, id, lost, err, errlen)) != 0)
        return NULL;
    runlog_printf("rank %d of %d: rendezvous done, joining the NCCL communicator", g->rank,
                  g->world);
    return comm_nccl_create(id, g->rank, g->world, g->abort, g->abort_ctx, err, errlen);
}

void gang_leave(struct comm *c)
{
    if (c)
        comm_nccl_destroy(c);
}

#else

struct comm *gang_join(const struct gang_cfg *g, struct http_client *http, int *lost, char *err,
                       size_t errlen)
{
    (void)http;
    *lost = 0;
    snprintf(err, errlen, "rank %d of %d: this cod-worker was built without CUDA, so without NCCL",
             g->rank, g->world);
    return NULL;
}

void gang_leave(struct comm *c)
{
    (void)c;
}

#endif
