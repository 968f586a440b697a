/* Inside the reader: an open file, its footer and its schema as a tree,
 * shared by the column cursors (column.h) and the rows (rows.c). */
#ifndef COD_PARQUET_FILE_H
#define COD_PARQUET_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/meta.h"
#include "parquet/parquet.h"

struct pq_node {
    const struct pq_element *el;
    int parent;   /* -1: the root */
    int *kids;    /* node indices, in the schema's order */
    int n_kids;
    int def, rep; /* the levels at which this node is there, and repeats */
    int column;   /* a leaf's column index; -1: a group */
    char *path;   /* "a.b.c" from the root (not named), for messages */
};

struct pq_file {
    char *path;
    int fd;
    int64_t size;
    int64_t data_end; /* where the footer starts */
    struct pq_meta meta;
    struct pq_node *nodes;
    int n_nodes;
    int *kid_pool;
    int *leaf;        /* column index -> node */
    int n_leaves;
};

/* The top-level (or, with parent, nested) node of that name: its index or -1. */
int pq_child(const struct pq_file *f, int parent, const char *name, size_t len);
/* "a, b, c": the names of a node's children, for an error. */
void pq_child_names(const struct pq_file *f, int node, char *out, size_t n);
/* Reads len bytes at off. 0, or -1 with err. */
int pq_pread(const struct pq_file *f, void *buf, size_t len, int64_t off, char *err, size_t errlen);
/* What a leaf column holds, in words, for a refusal ("INT96", "a DATE"), or
 * NULL when cod reads it. */
const char *pq_leaf_refused(const struct pq_file *f, int node);

#endif
