/* Inside the report: its figures (figures.c), drawn by plot.c from the
 * sweep's view (sweep.h): a panel per setting with a line per variant, and
 * the angular-distance heat maps. Their data's CSV files are the tables'
 * (tables.h). */
#ifndef COD_REPORT_FIGURES_H
#define COD_REPORT_FIGURES_H

#include <stdio.h>

#include "report/sweep.h"

/* What a figure draws of its metric. */
enum how { AT_LAST_STEP, OVER_STEPS, LAST_LAYER_OVER_STEPS };

struct figure {
    const char *id, *metric, *title, *xlabel, *ylabel;
    enum how how;
    int from_layer, log_y, error_bars;
};

/* One panel per setting and a line per variant of fig's metric; a heat map
 * of the angular distances per group of at most max_layers. 0, or -1 with
 * c->err filled. */
int rp_figure_panels(struct ctx *c, FILE *f, const struct figure *fig);
int rp_heatmaps(struct ctx *c, FILE *f, int max_layers);

#endif
