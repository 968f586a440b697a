/* cod-analyze: the paper's analyses on any checkpoint, cod's own or a
 * Hugging Face model folder (Llama 2 and 3, Mistral, Qwen2:
 * trainer/hf_config.h), without a server: layer pruning ΔP(ℓ)
 * (trainer/prune.h), the angular distance matrix (trainer/angular.h), the
 * per-layer statistics of the residual stream (trainer/stats.h), the
 * logits, and export of a cod checkpoint to a Hugging Face LLaMA folder
 * (trainer/export_hf.h). The model runs forward only (no gradients, no
 * optimizer state), in bf16 on CUDA. Prints text tables and heat maps;
 * --out writes prune.json / angular.json / stats.json, or the export
 * folder. Sending the results to the server as metrics belongs to
 * cod-worker, which runs the same analyses at the end of a job through
 * trainer/train.c. Here: the command line; the analyses are
 * analyze/heldout.h and analyze/eval.h. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/eval.h"
#include "analyze/heldout.h"
#include "analyze/source.h"
#include "spec/spec.h"
#include "trainer/checkpoint.h"
#include "trainer/export_hf.h"
#include "worker/device.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-analyze prune|angular|stats|logits|export DIR [--val SHARDS]\n"
            "                   [--tokens N] [--out DIR] [--device cpu|cuda:N]\n"
            "                   [--seq-len T] [--batch B] [--threads N]\n"
            "       cod-analyze eval DIR --task FILE[:LAYOUT] [--fewshot-from FILE] ...\n"
            "                   [--shots K] [--limit N] [--seed S] [--bos auto|yes|no]\n"
            "                   [--strict] [--tokenizer FILE] [--tokenizer-dir DIR] [options above]\n"
            "       cod-analyze prune DIR --task FILE... (the same task options)\n"
            "       cod-analyze cloze TEXT... --out FILE.jsonl [--items N] [--choices K]\n"
            "                   [--seed S]\n"
            "DIR is a cod checkpoint (state.json, model.safetensors) or a Hugging Face model\n"
            "folder (config.json of LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM;\n"
            "model.safetensors or the shards of model.safetensors.index.json).\n"
            "  prune     held-out loss and perplexity with each block removed in turn, as\n"
            "            prune/delta_loss and prune/delta_ppl per layer (paper's ΔP(l))\n"
            "  angular   angular distance d(l, n) between the input of block l and that of\n"
            "            block l+n, averaged over every token, and its row-scaled form\n"
            "  stats     per layer: out_var and out_rms of the residual stream, and the\n"
            "            angular distance each block moves it (paper's Figure 1)\n"
            "  logits    the model's logits on the first held-out sequences, fp32, as a NumPy\n"
            "            file [sequences, seq_len, vocab] in --out (for checking an export)\n"
            "  export    a cod checkpoint as a Hugging Face LLaMA folder (config.json,\n"
            "            model.safetensors) in --out; refused for variants stock LLaMA\n"
            "            cannot express\n"
            "  eval      multiple-choice tasks scored as lm-evaluation-harness v0.4.12 scores\n"
            "            them (docs/eval.md): acc, acc_norm and their standard errors; --out\n"
            "            writes eval.json and samples_TASK.jsonl; prune --task adds each\n"
            "            task's accuracy with each block removed (prune_tasks.json)\n"
            "  cloze     a task (generic layout) from held-out text: a passage's true next\n"
            "            sentence among sentences of other documents\n"
            "  --task FILE[:LAYOUT]  JSON lines (.gz, .zst, .xz) of a task, its layout taken\n"
            "                from its fields unless named (mmlu, arc_easy, arc_challenge,\n"
            "                hellaswag, piqa, boolq, winogrande, social_iqa, openbookqa,\n"
            "                commonsense, generic); repeatable\n"
            "  --fewshot-from FILE  the few-shot split of the --task before it (default:\n"
            "                the task's own file, an item never its own example; MMLU: its dev)\n"
            "  --shots K     examples before each item (default 0); --seed S their draw\n"
            "                (default 1234, the harness's); --limit N the first N items\n"
            "  --bos P       the doc token before every context: auto (a checkpoint's data's\n"
            "                doc token where documents start with it; a Hugging Face\n"
            "                tokenizer's own), yes or no\n"
            "  --strict      a bad line fails rather than being reported and skipped\n"
            "  --tokenizer F, --tokenizer-dir D  a checkpoint's data's tokenizer files, where\n"
            "                meta.json's are not beside the shards or in var/cache/tokenizers\n"
            "  --val SHARDS  held-out token shards (glob), tokenized with the model's own\n"
            "                tokenizer; default: a checkpoint spec's data.val (a Hugging Face\n"
            "                folder needs it); or FILE.rows, a row set (a fine-tuning run's\n"
            "                RUN/sft/val.rows: its targets only the responses' tokens)\n"
            "  --tokens N    held-out tokens (default 262144 for prune, 65536 for angular and\n"
            "                stats, one sequence's for logits)\n"
            "  --out DIR     write prune.json / angular.json / stats.json there (export: the\n"
            "                folder; logits: the .npy file)\n"
            "  --device D    cpu (fp32) or cuda:N (bf16); default cpu\n"
            "  --seq-len T   tokens a sequence (default: a checkpoint's train.seq_len; a\n"
            "                Hugging Face model's max_position_embeddings, at most 2048)\n"
            "  --batch B     sequences a forward pass (default: a checkpoint's\n"
            "                train.micro_batch; else 8192 tokens' worth)\n"
            "exit status: 0 done, 1 failed, 2 bad usage or bad checkpoint\n");
}

/* The options of the tasks (--task and what goes with it): 1 when a is
 * one (its value taken), 0 when not, -1 on a bad value. */
static int task_option(struct analyze_tasks *t, const char *a, char **argv, int argc, int *i)
{
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    long long n;
    if (!strcmp(a, "--task")) {
        if (t->n == ANALYZE_MAX_TASKS) {
            fprintf(stderr, "cod-analyze: at most %d --task\n", ANALYZE_MAX_TASKS);
            return -1;
        }
        t->task[t->n++] = v;
    } else if (!strcmp(a, "--fewshot-from")) {
        if (!t->n) {
            fprintf(stderr, "cod-analyze: --fewshot-from names the few-shot split of the --task "
                            "before it\n");
            return -1;
        }
        t->fewshot[t->n - 1] = v;
    } else if (!strcmp(a, "--shots")) {
        char *end;
        long k = strtol(v, &end, 10);
        if (*end || k < 0 || k > 1000) {
            fprintf(stderr, "cod-analyze: --shots %s: expected 0 to 1000\n", v);
            return -1;
        }
        t->shots = (int)k;
    } else if (!strcmp(a, "--limit")) {
        if (analyze_positive(a, v, &n))
            return -1;
        t->limit = (long)n;
    } else if (!strcmp(a, "--seed")) {
        char *end;
        t->seed = strtoull(v, &end, 10);
        if (*end || !*v || *v == '-') {
            fprintf(stderr, "cod-analyze: --seed %s: expected a non-negative integer\n", v);
            return -1;
        }
    } else if (!strcmp(a, "--bos")) {
        if (strcmp(v, "auto") && strcmp(v, "yes") && strcmp(v, "no")) {
            fprintf(stderr, "cod-analyze: --bos %s: expected auto, yes or no\n", v);
            return -1;
        }
        t->bos = v;
    } else if (!strcmp(a, "--tokenizer")) {
        t->tokenizer = v;
    } else if (!strcmp(a, "--tokenizer-dir")) {
        t->tokenizer_dir = v;
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

int main(int argc, char **argv)
{
    const char *cmd = NULL, *dir = NULL, *val = NULL, *out = NULL, *device = "cpu";
    long long tokens = 0, T = 0, B = 0;
    int threads = 0, strict = 0;
    struct analyze_tasks at = {.seed = 1234, .bos = "auto"};
    if (argc > 1 && !strcmp(argv[1], "cloze"))
        return analyze_cloze(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc, took = task_option(&at, a, argv, argc, &i);
        if (took < 0)
            return EXIT_USAGE;
        if (took)
            continue;
        if (!strcmp(a, "--strict"))
            strict = 1;
        else if (!strcmp(a, "--val") && more)
            val = argv[++i];
        else if (!strcmp(a, "--out") && more)
            out = argv[++i];
        else if (!strcmp(a, "--device") && more)
            device = argv[++i];
        else if (!strcmp(a, "--tokens") && more) {
            if (analyze_positive(a, argv[++i], &tokens))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--seq-len") && more) {
            if (analyze_positive(a, argv[++i], &T))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--batch") && more) {
            if (analyze_positive(a, argv[++i], &B))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--threads") && more)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return EXIT_OK;
        } else if (a[0] != '-' && !cmd)
            cmd = a;
        else if (a[0] != '-' && !dir)
            dir = a;
        else {
            fprintf(stderr, "cod-analyze: unexpected argument '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!cmd || !dir) {
        usage(stderr);
        return EXIT_USAGE;
    }
    static const char *const cmds[] = {"prune", "angular", "stats", "logits", "export", "eval"};
    int known = 0;
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        known |= !strcmp(cmd, cmds[k]);
    if (!known) {
        fprintf(stderr,
                "cod-analyze: unknown analysis '%s' (expected prune, angular, stats, logits, "
                "export, eval or cloze)\n",
                cmd);
        return EXIT_USAGE;
    }
    at.strict = strict;
    if (!strcmp(cmd, "eval") && !at.n) {
        fprintf(stderr, "cod-analyze: eval needs --task FILE (one or more)\n");
        return EXIT_USAGE;
    }
    if (at.n && strcmp(cmd, "eval") && strcmp(cmd, "prune")) {
        fprintf(stderr, "cod-analyze: --task goes with eval and prune, not %s\n", cmd);
        return EXIT_USAGE;
    }
    if ((!strcmp(cmd, "export") || !strcmp(cmd, "logits")) && !out) {
        fprintf(stderr, "cod-analyze: %s needs --out %s\n", cmd,
                !strcmp(cmd, "export") ? "DIR for the Hugging Face folder" : "FILE.npy");
        return EXIT_USAGE;
    }
    if (threads > 0)
        omp_set_num_threads(threads);
    char err[8192];
    if (!strcmp(cmd, "export")) {
        struct job_spec s;
        if (checkpoint_read_spec(dir, NULL, &s, err, sizeof(err))) {
            fprintf(stderr, "cod-analyze: %s\n", err);
            return EXIT_USAGE;
        }
        if (export_hf(dir, &s, out, err, sizeof(err))) {
            fprintf(stderr, "cod-analyze: %s\n", err);
            return EXIT_FAILED;
        }
        printf("exported %s (norm %s) to %s/{config.json,model.safetensors}\n", dir, s.norm.name,
               out);
        return EXIT_OK;
    }
    const struct ops *ops;
    if (device_backend(device, &ops, err, sizeof(err))) {
        fprintf(stderr, "cod-analyze: %s\n", err);
        return EXIT_USAGE;
    }
    if (!strcmp(cmd, "eval"))
        return analyze_eval(dir, ops, device, (int)T, (int)B, &at, out);
    if (!tokens)
        tokens = !strcmp(cmd, "prune") ? 262144 : !strcmp(cmd, "logits") ? 1 : 65536;
    return analyze_heldout(cmd, dir, ops, device, val, (int)T, (int)B, tokens, out, &at);
}
