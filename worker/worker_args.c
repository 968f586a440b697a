/* cod-worker's command line: see worker_args.h. */
#include "worker/worker_args.h"

#include <stdlib.h>
#include <string.h>

void worker_usage(FILE *f)
{
    fprintf(f,
            "usage: cod-worker [--server URL] [--device cpu|cuda:N] [--work-dir DIR] [--token W]\n"
            "                  [--threads N] [--name NAME] [--max-jobs N] [--wait S]\n"
            "                  [--heartbeat-seconds S] [--flush-seconds S] [--host H]\n"
            "                  [--nccl gangs|always]\n"
            "  --server URL     cod-server (default $COD_SERVER or http://127.0.0.1:8470)\n"
            "  --device         cpu (default) or cuda:N\n"
            "  --work-dir DIR   checkpoints and reports, DIR/experiments/<id>/ (default var/worker);\n"
            "                   workers that share it resume each other's experiments\n"
            "  --token W        the worker token (default $COD_WORKER_TOKEN, else $COD_TOKEN)\n"
            "  --max-jobs N     exit after N jobs (default: run until stopped)\n"
            "  --wait S         long-poll for work S seconds per request (default 30)\n"
            "  --host H         the machine, as the server packs gangs (default: the host name)\n"
            "  --nccl gangs     NCCL for runs of several GPUs only (default); always: a one-GPU\n"
            "                   run goes through NCCL too (a gang of one, to check the path)\n"
            "exit status: 0 stopped by a signal or after --max-jobs, 1 fatal error, 2 bad usage\n");
}

int worker_args_parse(int argc, char **argv, struct worker_args *a)
{
    *a = (struct worker_args){.server = getenv("COD_SERVER"), .token = getenv("COD_WORKER_TOKEN"),
                              .device = "cpu", .work_dir = "var/worker", .wait = 30,
                              .heartbeat_s = 20, .flush_s = 1};
    if (!a->token)
        a->token = getenv("COD_TOKEN");
    if (!a->server)
        a->server = "http://127.0.0.1:8470";
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "-h") || !strcmp(k, "--help")) {
            worker_usage(stdout);
            return 1;
        }
        if (!v || k[0] != '-' || k[1] != '-') {
            fprintf(stderr, "cod-worker: unexpected argument '%s'\n", k);
            worker_usage(stderr);
            return 2;
        }
        i++;
        char *end = NULL;
        double num = strtod(v, &end);
        int numeric = end != v && *end == '\0';
        if (!strcmp(k, "--server"))
            a->server = v;
        else if (!strcmp(k, "--device"))
            a->device = v;
        else if (!strcmp(k, "--work-dir"))
            a->work_dir = v;
        else if (!strcmp(k, "--token"))
            a->token = v;
        else if (!strcmp(k, "--name"))
            a->name = v;
        else if (!strcmp(k, "--host") && *v)
            a->host = v;
        else if (!strcmp(k, "--nccl") && (!strcmp(v, "gangs") || !strcmp(v, "always")))
            a->nccl_always = !strcmp(v, "always");
        else if (!strcmp(k, "--threads") && numeric && num >= 1 && num <= 4096)
            a->threads = (int)num;
        else if (!strcmp(k, "--max-jobs") && numeric && num >= 1)
            a->max_jobs = (long)num;
        else if (!strcmp(k, "--wait") && numeric && num >= 0 && num <= 3600)
            a->wait = num;
        else if (!strcmp(k, "--heartbeat-seconds") && numeric && num > 0)
            a->heartbeat_s = num;
        else if (!strcmp(k, "--flush-seconds") && numeric && num > 0)
            a->flush_s = num;
        else {
            fprintf(stderr, "cod-worker: bad option %s %s\n", k, v);
            worker_usage(stderr);
            return 2;
        }
    }
    return 0;
}
