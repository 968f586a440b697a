/* Bearer tokens: clients hold one, workers another; and the secrets that
 * bind a worker's calls to its own id and a run's calls to the rank that
 * leased it (docs/api.md, "Threat model"). */
#ifndef COD_AUTH_H
#define COD_AUTH_H

#include "api/http.h"
#include "api/routes.h"

/* 1 when the request may use a route guarded by kind. */
int auth_ok(struct req *r, enum auth_kind kind);

/* A call for worker id's own (its lease, its offline) carries the secret its
 * registration gave, in Cod-Worker-Secret: 0, or -1 with the answer in
 * *ret (403, 404 for no such worker). A worker registered before secrets
 * existed needs none. */
int auth_worker_secret(struct req *r, int64_t worker, enum MHD_Result *ret);
/* A call for a run carries its rank's secret, from its lease, in
 * Cod-Lease-Secret: 0, or -1 with the answer in *ret (403; 404 for no such
 * run; 422 for a rank the run lacks). A rank leased before secrets existed
 * needs none. */
int auth_lease_secret(struct req *r, int64_t run, int rank, enum MHD_Result *ret);

#endif
