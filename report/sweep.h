/* Inside the report (report/ only; the API is report.h): the report's view
 * of a sweep (sweep.c), read from the API's documents into the grid's axes,
 * with the groups' series and the files the report writes through. The
 * three parts that draw it use it: report.c (the page), tables.c (Table 1,
 * the comparisons, the depth summary and the CSV files) and figures.c (the
 * line charts and the angular-distance heat maps); it uses none of them. */
#ifndef COD_REPORT_SWEEP_H
#define COD_REPORT_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

enum { MAX_KEYS = 16, LABEL = 160 };

/* The report's view of the sweep: one axis of the grid is the variant (the
 * lines of every figure, the rows of Table 1): norm when the grid has it,
 * else its last key; the other keys but the seed make the settings (a
 * panel each, the columns of Table 1). */
struct ctx {
    const json_t *view, *groups, *info, *series;
    const char *vkey;
    const char *skeys[MAX_KEYS];
    int n_skeys;
    json_t *variants;   /* the variant key's values, in grid order */
    json_t *settings;   /* each setting's params, in the order groups first show it */
    int nv, ns;
    int *cell;          /* [setting × nv + variant]: the group there, or -1 */
    json_t *files;
    char *err;
    size_t errlen;
};

/* A buffer that fprintf writes into (open_memstream). */
struct out {
    FILE *f;
    char *buf;
    size_t len;
};

/* One group's averaged series: the API's columns (GET /v1/sweeps/{id}/series). */
struct col {
    const json_t *step, *layer, *mean, *sd, *n;
    size_t len;
};

/* The sweep's view from doc (report_render's): 0, or -1 with c->err
 * filled; rp_sweep_free frees what it made. */
int rp_sweep_read(struct ctx *c, const json_t *doc);
void rp_sweep_free(struct ctx *c);
/* a file of the report written through a memory stream (rp_out_file adds
 * it to the files, -1 when writing failed) */
int rp_out_open(struct out *o);
int rp_out_file(struct ctx *c, struct out *o, const char *name, const char *type);
/* a number of a JSON array, NaN where there is none */
double rp_jnum(const json_t *a, size_t i);
/* the grid's axes: a variant's and a setting's labels, the group at
 * (setting, variant) or -1, a group's depth and its label */
void rp_variant_label(const struct ctx *c, int v, char *buf, size_t n);
int rp_n_layers_of(const struct ctx *c, int g);
void rp_setting_label(const struct ctx *c, int s, char *buf, size_t n);
void rp_group_label(const struct ctx *c, int g, char *buf, size_t n);
int rp_group_of(const struct ctx *c, int s, int v);
/* a group's series as the API answers it, read by layer at its last step,
 * over steps, or at one point */
int rp_col_of(const struct ctx *c, const char *name, int group, struct col *o);
double rp_last_step(const struct col *o);
int rp_by_layer(const struct col *o, int from, double *x, double *y, double *e);
int rp_over_steps(const struct col *o, int layer, double *x, double *y, double *e);
double rp_value_at(const struct col *o, double step, int layer);
/* <tag>text</tag> escaped, and the link to a CSV file beside the page */
void rp_element(FILE *f, const char *tag, const char *text);
void rp_data_link(FILE *f, const char *csv);

#endif
