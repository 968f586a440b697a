/* Tidy text tables: cells added row by row, columns sized to fit, numbers
 * right-aligned. */
#ifndef COD_CLI_TABLE_H
#define COD_CLI_TABLE_H

#include "clients/cli/cli.h"

struct table {
    int ncols;
    char **cells; /* row-major; row 0 is the header */
    int n, cap;
    int oom; /* a cell could not be stored: table_print fails */
};

void table_init(struct table *t, int ncols);
/* Appends the next cell (rows fill left to right, then wrap). */
void table_add(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the table on stdout with indent spaces before each line and frees
 * it. 0, or an exit code after saying it ran out of memory. */
int table_print(const struct cli *c, struct table *t, int indent);
void table_free(struct table *t);

#endif
