/* An experiment's view and the experiment list, as the API sends them:
 * the store's rows (store_get_experiment, store_list_experiments) with the
 * progress worked out, the spec and the chain's links as JSON. docs/api.md
 * says what each field means. Each returns the store's codes (enum store_rc). */
#ifndef COD_VIEWS_EXPERIMENT_H
#define COD_VIEWS_EXPERIMENT_H

#include <stdint.h>

#include <jansson.h>

#include "schema/store.h"

int views_experiment(struct store *st, int64_t id, json_t **out);
/* {"experiments": [...], "next_cursor": the id to pass as before, or null}. */
int views_experiments(struct store *st, const struct exp_filter *f, json_t **out);

#endif
