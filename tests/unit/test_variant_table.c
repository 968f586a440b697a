/* The variant's tables (spec/variant.c) are its one owner: every preset
 * row parses, every setting round-trips through a spec, and what the API
 * describes (api/openapi.json's norm schema) and what the docs list
 * (docs/variants.md's presets table) are the tables', so neither can drift
 * from the code. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "spec/variant.h"
#include "tests/check.h"

static void every_preset_row_parses(void)
{
    CHECK(variant_preset_count() >= 11, "%zu presets", variant_preset_count());
    for (size_t i = 0; i < variant_preset_count(); i++) {
        struct norm_variant v;
        const char *name = variant_preset_name(i);
        CHECK(variant_preset(name, &v) == 0, "preset %s does not parse", name);
        CHECK(strcmp(v.name, name) == 0, "preset %s named %s", name, v.name);
        CHECK(variant_preset_label(name) != NULL, "preset %s has no label", name);
        /* no two presets are the same point of the space */
        for (size_t j = 0; j < i; j++) {
            struct norm_variant w;
            variant_preset(variant_preset_name(j), &w);
            CHECK(!variant_same(&v, &w), "%s and %s are the same variant", name, variant_preset_name(j));
        }
    }
    struct norm_variant v;
    CHECK(variant_preset("nonesuch", &v) == -1, "an unknown preset is refused");
}

/* each preset's settings are what docs/variants.md's table says of them */
static void presets_hold_their_settings(void)
{
    struct norm_variant v;
    variant_preset("deepnorm", &v);
    CHECK(v.placement == PLACE_POST && v.residual == RES_SCALED && v.init == INIT_DEEPNORM,
          "deepnorm's settings");
    CHECK(v.residual_alpha == 2.8284271247461903 && v.residual_alpha * v.residual_alpha > 7.999999999,
          "deepnorm's alpha is sqrt 8: %.17g", v.residual_alpha);
    variant_preset("layerscale", &v);
    CHECK(v.residual == RES_LAYERSCALE && v.branch_init == 0.1, "layerscale's lambda 0.1");
    variant_preset("lns_scaled_init", &v);
    CHECK(v.ln_scale == LN_SCALE_INV_SQRT_DEPTH && v.init == INIT_SCALED && v.placement == PLACE_PRE,
          "lns_scaled_init");
    variant_preset("pre", &v);
    CHECK(v.init_std == 0.02 && v.mix_post_layers == -1 && v.gains == GAINS_LEARNED, "pre's defaults");
}

/* a spec's JSON text parsed: 0, or -1 with *err */
static int parse_text(const char *text, struct job_spec *s, struct spec_error *err)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    int rc = j ? spec_from_json(j, s, err) : -1;
    json_decref(j);
    return rc;
}

/* every setting of every preset, written as JSON and parsed back, is the same spec */
static void settings_round_trip(void)
{
    for (size_t i = 0; i < variant_preset_count(); i++) {
        const char *name = variant_preset_name(i);
        char text[512];
        snprintf(text, sizeof text, "{\"norm\": {\"base\": \"%s\", \"gains\": \"frozen\"}}", name);
        struct spec_error err = {0};
        struct job_spec s;
        CHECK(parse_text(text, &s, &err) == 0, "%s: %s", name, err.message);
        CHECK(strcmp(s.norm.name, name) == 0, "frozen gains name no variant: %s is %s", name, s.norm.name);
        json_t *out = spec_to_json(&s);
        json_t *norm = json_object_get(out, "norm");
        CHECK(json_object_size(norm) == variant_setting_count() + 1, "%s: %zu keys", name, json_object_size(norm));
        struct job_spec back;
        CHECK(spec_from_json(out, &back, &err) == 0, "%s back: %s", name, err.message);
        CHECK(variant_same(&back.norm, &s.norm) && back.norm.gains == GAINS_FROZEN &&
                  strcmp(back.norm.name, name) == 0,
              "%s round-trips", name);
        json_decref(out);
    }
}

/* an object that restates a preset is filed under it; one that does not is custom */
static void objects_are_named(void)
{
    const char *cases[][2] = {
        {"{\"norm\": {\"ln_scale\": \"inv_sqrt_depth\"}}", "lns"},
        {"{\"norm\": {\"base\": \"lns\", \"init\": \"scaled\"}}", "lns_scaled_init"},
        {"{\"norm\": {\"base\": \"lns\", \"lns_position\": \"after_sublayer\"}}", "custom"},
        {"{\"norm\": {\"placement\": \"mix\", \"mix_post_layers\": 3}}", "custom"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct job_spec s;
        struct spec_error err = {0};
        CHECK(parse_text(cases[i][0], &s, &err) == 0, "%s: %s", cases[i][0], err.message);
        CHECK(strcmp(s.norm.name, cases[i][1]) == 0, "%s is %s, not %s", cases[i][0], s.norm.name, cases[i][1]);
    }
    const char *bad[][2] = {
        {"{\"norm\": {\"init_std\": 0}}", "norm.init_std"},
        {"{\"norm\": {\"residual_alpha\": -1}}", "norm.residual_alpha"},
        {"{\"norm\": {\"mix_post_layers\": -2}}", "norm.mix_post_layers"},
        {"{\"norm\": {\"placement\": \"middle\"}}", "norm.placement"},
        {"{\"norm\": {\"gains\": 1}}", "norm.gains"},
        {"{\"norm\": {\"colour\": \"red\"}}", "norm.colour"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct job_spec s;
        struct spec_error err = {0};
        CHECK(parse_text(bad[i][0], &s, &err) == -1 && strstr(err.field, bad[i][1]),
              "%s refused at %s (got '%s': %s)", bad[i][0], bad[i][1], err.field, err.message);
    }
}

/* the strings of a JSON array, as one comma-separated line */
static void array_line(const json_t *a, char *out, size_t cap)
{
    out[0] = 0;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? ", " : "", json_string_value(e));
}

static void openapi_is_the_table(void)
{
    json_error_t jerr;
    json_t *api = json_load_file("api/openapi.json", 0, &jerr);
    CHECK(api != NULL, "api/openapi.json: %s", jerr.text);
    if (!api)
        return;
    json_t *oneof = json_object_get(
        json_object_get(json_object_get(json_object_get(json_object_get(api, "components"), "schemas"), "JobSpec"),
                        "properties"),
        "norm");
    oneof = json_object_get(oneof, "oneOf");
    json_t *presets = json_object_get(json_array_get(oneof, 0), "enum");
    json_t *props = json_object_get(json_array_get(oneof, 1), "properties");
    char line[1024];
    array_line(presets, line, sizeof line);
    CHECK(strcmp(line, variant_preset_names()) == 0, "OpenAPI's presets [%s], the table's [%s]", line,
          variant_preset_names());
    CHECK(json_object_get(props, "base") != NULL, "OpenAPI names norm.base");
    CHECK(json_object_size(props) == variant_setting_count() + 1, "OpenAPI has %zu norm settings, the table %zu",
          json_object_size(props) - 1, variant_setting_count());
    for (size_t i = 0; i < variant_setting_count(); i++) {
        const struct variant_setting *s = variant_setting_at(i);
        json_t *p = json_object_get(props, s->name);
        CHECK(p != NULL, "OpenAPI lacks norm.%s", s->name);
        if (!p)
            continue;
        if (s->kind == SETTING_ENUM) {
            array_line(json_object_get(p, "enum"), line, sizeof line);
            CHECK(strcmp(line, variant_enum_choices(s->name)) == 0, "norm.%s: OpenAPI [%s], the table [%s]",
                  s->name, line, variant_enum_choices(s->name));
        } else {
            const char *type = json_string_value(json_object_get(p, "type"));
            CHECK(type && strcmp(type, s->kind == SETTING_INT ? "integer" : "number") == 0, "norm.%s is %s", s->name,
                  type ? type : "untyped");
        }
    }
    json_decref(api);
}

/* docs/variants.md's presets table: its rows' first cells, in order */
static void docs_list_the_presets(void)
{
    FILE *f = fopen("docs/variants.md", "r");
    CHECK(f != NULL, "docs/variants.md");
    if (!f)
        return;
    char line[1024], got[1024] = "";
    int in_presets = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in_presets = strncmp(line, "## Presets", 10) == 0;
        if (!in_presets || strncmp(line, "| `", 3) != 0)
            continue;
        char *end = strchr(line + 3, '`');
        if (!end)
            continue;
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%.*s", got[0] ? ", " : "", (int)(end - line - 3),
                 line + 3);
    }
    fclose(f);
    CHECK(strcmp(got, variant_preset_names()) == 0, "docs/variants.md lists [%s], the table [%s]", got,
          variant_preset_names());
}

int main(void)
{
    RUN(every_preset_row_parses);
    RUN(presets_hold_their_settings);
    RUN(settings_round_trip);
    RUN(objects_are_named);
    RUN(openapi_is_the_table);
    RUN(docs_list_the_presets);
    CHECK_EXIT();
}
