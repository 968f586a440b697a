/* cod-prep: text, JSON-lines and Parquet files -> llm.c token shards + meta.json (see prep/prep_run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/prep_run.h"
#include "text/tokenizer.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-prep --tokenizer gpt2|llama|bytes|sentencepiece|hf --out DIR [options] FILE|DIR...\n"
            "Tokenizes documents into DIR/train_NNNNNN.bin, DIR/val_NNNNNN.bin (llm.c shards),\n"
            "DIR/meta.json and DIR/sources.txt. A text file is one document; a .jsonl or .json\n"
            "file holds one JSON object per line, a document each; either may be .gz, .zst\n"
            "or .xz. A .parquet file holds a document a row (its snappy, gzip or zstd pages\n"
            "read by cod). A DIR gives every file under it, in name order. A document met\n"
            "again (whitespace aside) is kept once.\n"
            "  --tokenizer NAME      gpt2 (vocab 50257), llama (32000), bytes (257),\n"
            "                        sentencepiece with --tokenizer-model, or hf: a model's\n"
            "                        own tokenizer.json (--tokenizer-file)\n"
            "  --tokenizer-model F   a SentencePiece .model file (T5's spiece.model, LLaMA's\n"
            "                        tokenizer.model)\n"
            "  --tokenizer-file F    hf: the model's tokenizer.json (or a folder holding it)\n"
            "  --tokenizer-dir DIR   where r50k_base.tiktoken, llama-vocab.txt and\n"
            "                        llama-merges.bin are (default %s)\n"
            "  --out DIR             output directory (created; old shards there are replaced)\n"
            "  --text-key KEY        JSON lines: the text's key, a dotted path for a nested\n"
            "                        one; Parquet: the text's column, a dotted path for a\n"
            "                        struct's field (default %s)\n"
            "  --strict              fail at the first JSON line or Parquet row without\n"
            "                        text (else each is counted, the first few reported,\n"
            "                        and skipped)\n"
            "  --split paragraphs:N  cut documents at blank lines into documents of at most\n"
            "                        about N tokens\n"
            "  --val PATH            hold out this file or directory's files (repeatable);\n"
            "                        without it, --val-fraction picks documents\n"
            "  --val-fraction F      hold out this share of the documents, chosen by a hash\n"
            "                        of each one's text (default %g; 0: none)\n"
            "  --shard-tokens N      tokens per shard (default %lld)\n"
            "  --threads N           encoding threads (default: all cores)\n"
            "  --verify              decode every document again and check it matches\n"
            "  --quiet               no progress bar\n",
            TOK_DEFAULT_DIR, PREP_DEFAULT_TEXT_KEY, PREP_DEFAULT_VAL_FRACTION, (long long)PREP_DEFAULT_SHARD_TOKENS);
}

static int parse_num(const char *flag, const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (end == s || *end) {
        fprintf(stderr, "cod-prep: %s: '%s' is not a number\n", flag, s);
        return -1;
    }
    return 0;
}

/* "paragraphs:N" */
static int parse_split(const char *s, int64_t *n)
{
    static const char prefix[] = "paragraphs:";
    double v;
    char *end;
    if (strncmp(s, prefix, sizeof(prefix) - 1) == 0) {
        v = strtod(s + sizeof(prefix) - 1, &end);
        if (end != s + sizeof(prefix) - 1 && !*end && v >= 1 && v <= 1e12 && v == (double)(int64_t)v) {
            *n = (int64_t)v;
            return 0;
        }
    }
    fprintf(stderr, "cod-prep: --split: '%s' is not paragraphs:N (N a whole number of tokens, 1 or more)\n", s);
    return -1;
}

/* The first skipped lines, then how many more there were. */
static void print_skipped(const struct prep_result *r)
{
    for (int i = 0; i < r->n_shown; i++)
        fprintf(stderr, "cod-prep: skipped %s\n", r->shown[i]);
    if (r->skipped_total > r->n_shown)
        fprintf(stderr, "cod-prep: ... and %lld more lines skipped\n", (long long)(r->skipped_total - r->n_shown));
}

static void print_summary(const struct prep_result *r, const char *out)
{
    for (int s = 0; s < 2; s++)
        fprintf(stderr, "cod-prep: %-5s %6lld documents %12lld bytes %11lld tokens in %d shard%s\n",
                s ? "val" : "train", (long long)r->split[s].documents, (long long)r->split[s].bytes,
                (long long)r->split[s].tokens, r->split[s].shards, r->split[s].shards == 1 ? "" : "s");
    fprintf(stderr, "cod-prep: %lld file%s, %lld documents: %lld kept, %lld duplicates dropped", (long long)r->files,
            r->files == 1 ? "" : "s", (long long)r->read, (long long)(r->read - r->duplicates),
            (long long)r->duplicates);
    if (r->skipped_total) {
        fprintf(stderr, "; %lld lines without text skipped (", (long long)r->skipped_total);
        const char *sep = "";
        for (int k = JL_OK + 1; k < JL_KINDS; k++)
            if (r->skipped[k]) {
                fprintf(stderr, "%s%lld %s", sep, (long long)r->skipped[k], jl_fault_name(k));
                sep = ", ";
            }
        fputc(')', stderr);
    }
    if (r->cut)
        fprintf(stderr, "; %lld cut by --split", (long long)r->cut);
    fputc('\n', stderr);
    int64_t bytes = r->split[0].bytes + r->split[1].bytes, toks = r->split[0].tokens + r->split[1].tokens;
    fprintf(stderr, "cod-prep: %.2f bytes/token, %.1f MB/s, %.1f s -> %s\n",
            toks ? (double)bytes / (double)toks : 0.0, (double)bytes / 1e6 / r->seconds, r->seconds, out);
}

int main(int argc, char **argv)
{
    struct prep_opts o;
    prep_opts_default(&o);
    const char **inputs = calloc((size_t)argc, sizeof(char *));
    const char **vals = calloc((size_t)argc, sizeof(char *));
    if (!inputs || !vals) {
        fprintf(stderr, "cod-prep: out of memory\n");
        return 1;
    }
    int ni = 0, nv = 0, tok_given = 0, rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        double v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(inputs);
            free(vals);
            return 0;
        } else if (!strcmp(a, "--verify"))
            o.verify = 1;
        else if (!strcmp(a, "--strict"))
            o.strict = 1;
        else if (!strcmp(a, "--quiet"))
            o.progress = 0;
        else if (!strncmp(a, "--", 2) && !has_value) {
            fprintf(stderr, "cod-prep: %s needs a value (see --help)\n", a);
            rc = 2;
        } else if (!strcmp(a, "--tokenizer"))
            o.tokenizer = argv[++i], tok_given = 1;
        else if (!strcmp(a, "--tokenizer-dir") || !strcmp(a, "--tokenizer-file"))
            o.tokenizer_dir = argv[++i];
        else if (!strcmp(a, "--tokenizer-model"))
            o.tokenizer_model = argv[++i];
        else if (!strcmp(a, "--text-key"))
            o.text_key = argv[++i];
        else if (!strcmp(a, "--split")) {
            if (parse_split(argv[++i], &o.split_tokens) != 0)
                rc = 2;
        }
        else if (!strcmp(a, "--out"))
            o.out_dir = argv[++i];
        else if (!strcmp(a, "--val"))
            vals[nv++] = argv[++i];
        else if (!strcmp(a, "--val-fraction")) {
            if (parse_num(a, argv[++i], &v) != 0)
                rc = 2;
            o.val_fraction = v;
        } else if (!strcmp(a, "--shard-tokens")) {
            if (parse_num(a, argv[++i], &v) != 0 || v != (double)(long long)v)
                rc = 2;
            o.shard_tokens = (long long)v;
        } else if (!strcmp(a, "--threads")) {
            if (parse_num(a, argv[++i], &v) != 0 || v < 1 || v > 1024)
                rc = 2;
            o.threads = (int)v;
        } else if (!strncmp(a, "--", 2)) {
            fprintf(stderr, "cod-prep: unknown option %s (see --help)\n", a);
            rc = 2;
        } else
            inputs[ni++] = a;
    }
    if (rc == 0 && (!tok_given || !o.out_dir || ni == 0)) {
        usage(stderr);
        rc = 2;
    }
    if (rc == 0) {
        o.inputs = inputs;
        o.n_inputs = ni;
        o.val_inputs = vals;
        o.n_val_inputs = nv;
        struct prep_result r;
        char err[2048];
        int failed = prep_run(&o, &r, err, sizeof(err)) != 0;
        print_skipped(&r);
        if (failed) {
            fprintf(stderr, "cod-prep: %s\n", err);
            rc = 1;
        } else
            print_summary(&r, o.out_dir);
    }
    free(inputs);
    free(vals);
    return rc;
}
