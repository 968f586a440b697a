/* The reporter: a thread per run that heartbeats the lease and sends the
 * run's metric points (RUN/metrics.jsonl) and log lines (its run log) to
 * cod-server in batches, straight from the files. A batch counts as
 * delivered only when the server answers 200 (stored); when it cannot be
 * reached or answers 5xx, training goes on and the lines wait on disk until
 * it takes them. The server keys points by (experiment, name, step, layer)
 * and lines by (run, seq), so a batch sent twice adds nothing. In a gang
 * every rank heartbeats and rank 0 alone sends: the others' files stay on
 * their own disks. */
#ifndef COD_REPORTER_H
#define COD_REPORTER_H

#include <stddef.h>
#include <stdint.h>

struct reporter_cfg {
    const char *server, *token;
    const char *lease_secret; /* the rank's, from its lease (NULL: an older server gave none) */
    int64_t run;
    int rank;                 /* in the run's gang: a rank other than 0 only heartbeats */
    const char *metrics_path; /* read only after reporter_note_step: the trainer rewrites it on resume */
    const char *log_path;
    /* Where the acknowledged length of metrics.jsonl is kept between runs,
     * and where this run starts sending (see job.c): a resumed experiment
     * does not send again what the server already holds. */
    const char *acked_path;
    long metrics_start;
    double heartbeat_s;       /* lease_seconds / 3 or less */
    double flush_s;           /* longest wait before new lines are sent */
    volatile const int *stop_now; /* when nonzero, give up sending (lines stay on disk) */
};

enum { REPORT_CANCEL = 1, REPORT_LOST = 2, REPORT_REFUSED = 4 };

struct reporter;

int reporter_start(const struct reporter_cfg *cfg, struct reporter **out, char *err, size_t errlen);
/* From the training thread after each metric point: the newest step (for
 * heartbeats); the first call also opens the metrics file for reading. */
void reporter_note_step(struct reporter *rp, long step);
/* REPORT_CANCEL (the server said cancel) | REPORT_LOST (the lease is gone) |
 * REPORT_REFUSED (the server refused a batch for good: see reporter_refusal) */
int reporter_flags(struct reporter *rp);
/* The server's words for the batch it refused. */
void reporter_refusal(struct reporter *rp, char *buf, size_t len);
/* Sends what is left in the files (metrics.jsonl too, even when no point
 * was noted) and ends the thread. Returns 0 when every line was stored, -1
 * otherwise (lease lost, cancelled, a batch refused, or stop_now). */
int reporter_drain(struct reporter *rp);
void reporter_free(struct reporter *rp);

#endif
