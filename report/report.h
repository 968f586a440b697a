/* The sweep report: the paper's Table 1 and figures for one sweep, as one
 * self-contained HTML file (inline SVG and CSS, nothing loaded from
 * anywhere) and the data behind each table and figure as CSV files beside
 * it. Pure formatting: it reads only the JSON documents the API answers
 * (the sweep view with its replicate groups, the groups' averaged series,
 * each group's model) and computes nothing the API did not send except
 * what its depth summary says it derives (docs/report.md). Used by
 * cod-server's GET /v1/sweeps/{id}/report, which `cod report` and the
 * dashboard call. */
#ifndef COD_REPORT_H
#define COD_REPORT_H

#include <stddef.h>

#include <jansson.h>

/* doc: {"sweep": the sweep view (GET /v1/sweeps/{id}), "name": the sweep's
 * name, "groups": [{"model", "n_layers"} for each group of the view],
 * "series": {NAME: GET /v1/sweeps/{id}/series?name=NAME, ...}} with the
 * names of report_series. *files: [{"name", "type", "content"}], the HTML
 * first. -1 with err filled when doc lacks what the report needs or
 * memory ran out. */
int report_render(const json_t *doc, json_t **files, char *err, size_t errlen);

/* The series a report draws, each as the API's series route answers it,
 * and the thinning of each (the series route's every): learning curves
 * are thinned to about 400 points of steps. angular/nK are asked for
 * K = 1 … the deepest model's layers. */
extern const char *const report_series[];
long report_every(const char *name, long steps);

#endif
