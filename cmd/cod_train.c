/* cod-train: trains one job spec locally, without a server, with the same
 * trainer the worker runs. SIGINT/SIGTERM stop it at the next update with a
 * checkpoint; --resume continues from the newest one bit for bit. */
#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/fileio.h"
#include "eval/job.h"
#include "kernels/ops.h"
#include "sft/prepare.h"
#include "spec/spec.h"
#include "trainer/checkpoint.h"
#include "trainer/data_check.h"
#include "trainer/default_spec.h"
#include "trainer/train.h"
#include "worker/device.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int should_stop(void *ctx)
{
    (void)ctx;
    return stop_requested ? TRAIN_STOP_CHECKPOINT : TRAIN_GO_ON;
}

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    char ts[32];
    time_t t = time(NULL);
    strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&t));
    printf("[%s] %s\n", ts, line);
    fflush(stdout);
}

/* The spec's analysis.tasks on the trained model (eval/job.h). */
struct run_ctx {
    const struct job_spec *spec;
    const char *out;
    const struct eval_text_source *text; /* a start's tokenizer (sft/prepare.h) */
};

static int analyses(void *ctx, struct model *m, long step, const struct train_emit *e, char *err,
                    size_t errlen)
{
    const struct run_ctx *r = ctx;
    return eval_job_run(m, r->spec, r->text, r->out, step, e, err, errlen);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-train SPEC.json|default --out DIR [--resume] [--threads N]\n"
            "       cod-train SPEC.json|default --print-spec\n"
            "                 [--device cpu|cuda:N] [--progress-seconds S] [--work-dir DIR]\n"
            "  SPEC.json  a job spec (docs/spec.md); 'default' is the built-in small CPU\n"
            "             experiment on the default corpus\n"
            "  --out DIR  where metrics.jsonl and checkpoints/ go\n"
            "  --resume   continue from the newest checkpoint in DIR\n"
            "  --print-spec  print the complete spec, every default explicit, and exit\n"
            "  --work-dir DIR  where init.from {\"experiment\": ID} finds that experiment's\n"
            "             checkpoints (DIR/experiments/ID, as cod-worker --work-dir keeps them)\n"
            "exit status: 0 done, 1 failed, 2 bad usage or spec, 3 stopped by a signal\n");
}

int main(int argc, char **argv)
{
    const char *spec_path = NULL, *out = NULL, *device = NULL, *work_dir = NULL;
    int resume = 0, threads = 0, print_spec = 0;
    double progress = 2.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(a, "--resume"))
            resume = 1;
        else if (!strcmp(a, "--print-spec"))
            print_spec = 1;
        else if (!strcmp(a, "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(a, "--work-dir") && i + 1 < argc)
            work_dir = argv[++i];
        else if (!strcmp(a, "--progress-seconds") && i + 1 < argc)
            progress = atof(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] != '-' && !spec_path)
            spec_path = a;
        else {
            fprintf(stderr, "cod-train: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!spec_path || (!out && !print_spec)) {
        usage(stderr);
        return 2;
    }
    size_t len = 0;
    unsigned char *text = NULL;
    char err[1024], ck[4400];
    if (!strcmp(spec_path, "default")) {
        text = (unsigned char *)strdup(default_spec_json());
        len = text ? strlen((char *)text) : 0;
        snprintf(err, sizeof(err), "out of memory");
    } else {
        fio_read_file(spec_path, &text, &len, err, sizeof(err));
    }
    if (!text) {
        fprintf(stderr, "cod-train: %s\n", err);
        return 2;
    }
    struct job_spec spec;
    struct spec_error se;
    int bad = spec_parse((const char *)text, len, &spec, &se);
    if (!bad && print_spec) {
        free(text);
        json_t *j = spec_to_json(&spec);
        int rc = !j || json_dumpf(j, stdout, JSON_INDENT(2)) != 0;
        json_decref(j);
        printf("\n");
        return rc;
    }
    free(text);
    if (bad) {
        fprintf(stderr, "cod-train: %s: %s%s%s\n", spec_path, se.field, se.field[0] ? ": " : "",
                se.message);
        return 2;
    }
    const char *dev = device ? device : spec.device;
    const struct ops *ops;
    if (device_backend(dev, &ops, err, sizeof(err)) != 0) {
        fprintf(stderr, "cod-train: %s\n", err);
        return 2;
    }
    if (threads > 0)
        omp_set_num_threads(threads);
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cod-train: --out %s: %s\n", out, strerror(errno));
        return 2;
    }
    if (!resume && checkpoint_latest(out, ck, sizeof(ck), err, sizeof(err)) == 1) {
        fprintf(stderr,
                "cod-train: %s already holds checkpoints (%s): pass --resume to continue it, "
                "or choose another --out\n",
                out, ck);
        return 2;
    }
    /* the start completes the spec (its model, its tokenizer's rows) before its data is checked */
    struct train_opts opts = {.ops = ops, .resume = resume, .progress_seconds = progress};
    static struct sft_prepared prep;
    int unready = sft_prepare(&spec, work_dir, out, 0, &prep, &opts, err, sizeof(err));
    if (!unready && (unready = spec_check_data(&spec, &se)))
        snprintf(err, sizeof err, "%s%s%s", se.field, se.field[0] ? ": " : "", se.message);
    if (!unready)
        unready = eval_job_check(&spec, &prep.text, err, sizeof err);
    if (unready) {
        fprintf(stderr, "cod-train: %s: %s\n", spec_path, err);
        return 2;
    }
    if (prep.summary[0])
        log_line(NULL, prep.summary);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct run_ctx rc_ctx = {&spec, out, &prep.text};
    struct train_hooks hooks = {.ctx = &rc_ctx, .log = log_line, .should_stop = should_stop,
                                .analyses = analyses};
    int rc = train_run(&spec, out, &opts, &hooks, err, sizeof(err));
    if (rc == TRAIN_FAILED || rc == TRAIN_FAULT) {
        fprintf(stderr, "cod-train: failed: %s\n", err);
        return 1;
    }
    return rc == TRAIN_STOPPED ? 3 : 0;
}
