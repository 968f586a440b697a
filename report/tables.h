/* Inside the report: its tables (tables.c), each written into the page and
 * into a CSV file of its own, and the CSV files of the figures' series and
 * of every cell. Each uses the sweep's view (sweep.h) and the text formats
 * (text.h), nothing else of the report. */
#ifndef COD_REPORT_TABLES_H
#define COD_REPORT_TABLES_H

#include <stdio.h>

#include "report/sweep.h"

/* Each writes its section of the page into f and its CSV file; 0, or -1
 * with c->err filled. */
int rp_table1(struct ctx *c, FILE *f);
int rp_comparisons(struct ctx *c, FILE *f);
int rp_depth_summary(struct ctx *c, FILE *f);
/* The CSV files of metrics' series (every row the API sent), of the
 * angular distances up to max_layers, and of every cell. */
int rp_series_csv(struct ctx *c, const char *file, const char *const *metrics);
int rp_angular_csv(struct ctx *c, int max_layers);
int rp_cells_csv(struct ctx *c);

#endif
