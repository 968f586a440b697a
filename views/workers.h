/* The worker list and the counts behind /metrics, as the API sends them:
 * the store's rows (store_workers, store_stats) as JSON. docs/api.md says
 * what each field means; api/prom.c renders the counts. Each returns the
 * store's codes (enum store_rc). */
#ifndef COD_VIEWS_WORKERS_H
#define COD_VIEWS_WORKERS_H

#include <jansson.h>

#include "schema/store.h"

/* {"workers": [...]} */
int views_workers(struct store *st, double lost_after, json_t **out);
/* {"states", "workers", "running", "lease_expiries", "commits", "jobs", "fsyncs"} */
int views_counts(struct store *st, double lost_after, json_t **out);

#endif
