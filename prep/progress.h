/* cod-prep's progress bar on a terminal: how much of the stored input is
 * read (compressed bytes for a compressed file: what the size of the
 * inputs is measured in), the text tokenized per second, the documents
 * written and skipped, and the time left at the pace so far. One line,
 * redrawn at most ten times a second. */
#ifndef COD_PREP_PROGRESS_H
#define COD_PREP_PROGRESS_H

#include <stdint.h>

struct progress {
    int on;
    const char *label;
    int64_t total; /* stored bytes of every input */
    double start, last;
};

double progress_now(void);
void progress_start(struct progress *p, int on, const char *label, int64_t total);
/* final: draw whatever the time, and end the line. */
void progress_draw(struct progress *p, int64_t stored, int64_t text, int64_t docs, int64_t skipped, int final);

#endif
