/* The spec's typed JSON getters: see fields.h. */
#include "spec/fields.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int spec_fail(struct spec_error *err, const char *field, const char *fmt, ...)
{
    snprintf(err->field, sizeof(err->field), "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

void field_join(char *out, size_t outlen, const char *prefix, const char *key)
{
    if (prefix[0])
        snprintf(out, outlen, "%s.%s", prefix, key);
    else
        snprintf(out, outlen, "%s", key);
}

/* A misspelt key would otherwise silently fall back to a default and run the
 * wrong experiment, so every level rejects keys it does not know. */
int field_check_keys(json_t *obj, const char *prefix, const char *const *allowed,
                      struct spec_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int known = 0;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp(allowed[i], key) == 0;
        if (!known) {
            char field[128], list[400] = "";
            field_join(field, sizeof(field), prefix, key);
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                         allowed[i]);
            return spec_fail(err, field, "unknown field (known here: %s)", list);
        }
    }
    return 0;
}

/* The getters leave *out (the default) alone when the key is absent and
 * return 1 when it was given, 0 when absent, -1 on error. They check the
 * JSON type and that the value fits the C field; semantic ranges are
 * checked by the caller, which knows what the field means. */
static int field_integer(json_t *obj, const char *prefix, const char *key, long long lo,
                       long long hi, long long *out, struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    field_join(field, sizeof(field), prefix, key);
    if (!json_is_integer(v)) {
        if (json_is_real(v))
            return spec_fail(err, field, "must be an integer, not %g", json_real_value(v));
        return spec_fail(err, field, "must be an integer");
    }
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return spec_fail(err, field, "%lld is out of range (%lld to %lld)", x, lo, hi);
    *out = x;
    return 1;
}

/* An integer field held in a C type of range [type_min, type_max]: the
 * value must fit the type, and be at least min. */
static int field_at_least(json_t *obj, const char *prefix, const char *key, long long min,
                        long long type_min, long long type_max, long long *x,
                        struct spec_error *err)
{
    int rc = field_integer(obj, prefix, key, type_min, type_max, x, err);
    if (rc <= 0)
        return rc;
    if (*x < min) {
        char field[128];
        field_join(field, sizeof(field), prefix, key);
        if (min == 1)
            return spec_fail(err, field, "must be positive (got %lld)", *x);
        return spec_fail(err, field, "must be at least %lld (got %lld)", min, *x);
    }
    return 1;
}

int field_int(json_t *obj, const char *prefix, const char *key, int min, int *out,
                   struct spec_error *err)
{
    long long x = *out;
    int rc = field_at_least(obj, prefix, key, min, INT_MIN, INT_MAX, &x, err);
    if (rc > 0)
        *out = (int)x;
    return rc;
}

int field_long(json_t *obj, const char *prefix, const char *key, long min, long *out,
                    struct spec_error *err)
{
    long long x = *out;
    int rc = field_at_least(obj, prefix, key, min, LONG_MIN, LONG_MAX, &x, err);
    if (rc > 0)
        *out = (long)x;
    return rc;
}

int field_real(json_t *obj, const char *prefix, const char *key, double *out,
                    struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    field_join(field, sizeof(field), prefix, key);
    if (!json_is_number(v))
        return spec_fail(err, field, "must be a number");
    double x = json_number_value(v);
    if (!isfinite(x))
        return spec_fail(err, field, "must be finite");
    *out = x;
    return 1;
}

int field_bool(json_t *obj, const char *prefix, const char *key, int *out,
                    struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v)) {
        char field[128];
        field_join(field, sizeof(field), prefix, key);
        return spec_fail(err, field, "must be true or false");
    }
    *out = json_is_true(v);
    return 1;
}

/* A non-empty string that fits a buffer of cap bytes. */
int field_string(json_t *obj, const char *prefix, const char *key, char *out, size_t cap,
                      struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    field_join(field, sizeof(field), prefix, key);
    if (!json_is_string(v))
        return spec_fail(err, field, "must be a string");
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n == 0)
        return spec_fail(err, field, "must not be empty");
    if (strlen(s) != n)
        return spec_fail(err, field, "must not contain NUL characters");
    if (n >= cap)
        return spec_fail(err, field, "is too long (%zu bytes, at most %zu)", n, cap - 1);
    memcpy(out, s, n + 1);
    return 1;
}

int field_choice(json_t *obj, const char *prefix, const char *key, const char *const *choices,
                 int *out, struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128], list[200] = "";
    field_join(field, sizeof(field), prefix, key);
    for (int i = 0; choices[i]; i++) {
        if (json_is_string(v) && strcmp(json_string_value(v), choices[i]) == 0) {
            *out = i;
            return 1;
        }
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 choices[i]);
    }
    if (!json_is_string(v))
        return spec_fail(err, field, "must be a string (one of: %s)", list);
    return spec_fail(err, field, "unknown value \"%s\" (choices: %s)", json_string_value(v), list);
}

/* A section must be an object when present; *sec is NULL when it is absent. */
int field_section(json_t *root, const char *key, const char *const *allowed, json_t **sec,
                       struct spec_error *err)
{
    *sec = json_object_get(root, key);
    if (!*sec)
        return 0;
    if (!json_is_object(*sec))
        return spec_fail(err, key, "must be an object");
    return field_check_keys(*sec, key, allowed, err);
}
