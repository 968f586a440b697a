/* The typed getters of the job spec's JSON. Each one checks the JSON type
 * and that the value fits its C field, and a refusal names the field by its
 * dotted path ("train.lr"); what a value means (its range, how it relates to
 * others) is checked by the caller. Shared by the spec's parser and its data
 * checks. */
#ifndef COD_SPEC_FIELDS_H
#define COD_SPEC_FIELDS_H

#include <stddef.h>

#include <jansson.h>

#include "spec/spec.h"

/* Fills *err with field and message; returns -1, so that callers can
 * `return spec_fail(...)`. */
int spec_fail(struct spec_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "prefix.key", or "key" when prefix is empty. */
void field_join(char *out, size_t outlen, const char *prefix, const char *key);
/* Refuses the first key of obj that allowed (NULL-terminated) does not hold. */
int field_check_keys(json_t *obj, const char *prefix, const char *const *allowed,
                     struct spec_error *err);

/* The getters leave *out (the default) alone when the key is absent and
 * return 1 when it was given, 0 when absent, -1 on error. An integer must
 * also be at least min. */
int field_int(json_t *obj, const char *prefix, const char *key, int min, int *out,
              struct spec_error *err);
int field_long(json_t *obj, const char *prefix, const char *key, long min, long *out,
               struct spec_error *err);
int field_real(json_t *obj, const char *prefix, const char *key, double *out,
               struct spec_error *err);
int field_bool(json_t *obj, const char *prefix, const char *key, int *out,
               struct spec_error *err);
/* A non-empty string without NUL that fits a buffer of cap bytes. */
int field_string(json_t *obj, const char *prefix, const char *key, char *out, size_t cap,
                 struct spec_error *err);
/* A string that is one of the NULL-terminated choices: *out is its index. */
int field_choice(json_t *obj, const char *prefix, const char *key, const char *const *choices,
                 int *out, struct spec_error *err);
/* A section must be an object of known keys when present; *sec is NULL
 * when it is absent. */
int field_section(json_t *root, const char *key, const char *const *allowed, json_t **sec,
                  struct spec_error *err);

#endif
