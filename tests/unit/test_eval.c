/* The evaluation's text side (eval/): each layout's prompts byte for byte
 * as lm-evaluation-harness v0.4.12 renders them (tests/eval/LAYOUT.expected.json,
 * written by tests/eval/harness_prompts.py from the harness's own task
 * definitions), zero-shot and few-shot; Python's random and string
 * semantics the prompts depend on; the harness's encoding of a context and
 * a continuation; acc, acc_norm and their standard errors on cases worked
 * out by hand; bad lines reported as FILE:LINE. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "eval/layout.h"
#include "eval/pyrandom.h"
#include "eval/pystr.h"
#include "eval/task.h"
#include "tests/check.h"
#include "text/tokenizer.h"

static struct tokenizer *bytes;

static const char *const layouts[] = {"mmlu",       "arc",        "hellaswag",   "piqa",
                                      "boolq",      "winogrande", "social_iqa",  "openbookqa",
                                      "commonsense", "generic"};

static int load(const char *file, const char *layout, int shots, const char *fewshot, int bos,
                int max_len, struct eval_task *t, FILE *report)
{
    struct eval_encoding e = {bytes, bos, 256, max_len};
    struct eval_task_opts o = {.file = file, .layout = layout, .shots = shots,
                               .fewshot_from = fewshot, .seed = 1234};
    char err[1024];
    if (eval_task_load(t, &o, &e, report, err, sizeof err)) {
        CHECK(0, "%s: %s", file, err);
        return -1;
    }
    return 0;
}

/* cod's items against the harness's prompts of one setting */
static void same_prompts(const char *layout, const struct eval_task *t, json_t *want,
                         const char *setting)
{
    CHECK((size_t)t->n == json_array_size(want), "%s %s: %d items, expected %zu", layout, setting,
          t->n, json_array_size(want));
    for (int i = 0; i < t->n && (size_t)i < json_array_size(want); i++) {
        const struct eval_item *it = &t->items[i];
        json_t *w = json_array_get(want, (size_t)i), *ctx = json_object_get(w, "contexts"),
               *cont = json_object_get(w, "continuations");
        CHECK(it->where == json_integer_value(json_object_get(w, "line")), "%s %s: line %ld",
              layout, setting, it->where);
        CHECK(it->gold == json_integer_value(json_object_get(w, "gold")), "%s %s item %d: gold %d",
              layout, setting, i, it->gold);
        CHECK((size_t)it->n == json_array_size(cont), "%s %s item %d: %d choices", layout,
              setting, i, it->n);
        for (int k = 0; k < it->n && (size_t)k < json_array_size(cont); k++) {
            const char *c = json_string_value(json_array_get(ctx, (size_t)k)),
                       *x = json_string_value(json_array_get(cont, (size_t)k));
            CHECK(c && !strcmp(it->context[k], c), "%s %s item %d choice %d context:\n%s\n--- "
                                                   "the harness's:\n%s",
                  layout, setting, i, k, it->context[k], c ? c : "?");
            CHECK(x && !strcmp(it->cont[k], x), "%s %s item %d choice %d: continuation [%s], "
                                                "the harness's [%s]",
                  layout, setting, i, k, it->cont[k], x ? x : "?");
        }
    }
}

static void prompts_as_the_harness_renders(void)
{
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        char path[256], file[256], fewshot[256];
        snprintf(path, sizeof path, "tests/eval/%s.expected.json", layouts[l]);
        snprintf(file, sizeof file, "tests/eval/%s.jsonl", layouts[l]);
        json_error_t je;
        json_t *want = json_load_file(path, 0, &je);
        CHECK(want, "%s: %s", path, je.text);
        if (!want)
            continue;
        CHECK(!strcmp(json_string_value(json_object_get(want, "harness")), "v0.4.12"),
              "%s: rendered from another version", path);
        struct eval_task t;
        /* the layout from the fields (ARC's named, as its two tasks share them) */
        if (!load(file, NULL, 0, NULL, 1, 100000, &t, stderr)) {
            CHECK(t.layout == l, "%s: detected as %s", file, eval_layout_name(t.layout));
            same_prompts(layouts[l], &t, json_object_get(want, "zero"), "zero-shot");
            eval_task_free(&t);
        }
        const char *from = json_string_value(json_object_get(want, "fewshot_from"));
        snprintf(fewshot, sizeof fewshot, "tests/eval/%s", from ? from : "");
        int shots = (int)json_integer_value(json_object_get(want, "shots"));
        if (!load(file, layouts[l], shots, from ? fewshot : NULL, 1, 100000, &t, stderr)) {
            same_prompts(layouts[l], &t, json_object_get(want, "few"), "few-shot");
            eval_task_free(&t);
        }
        json_decref(want);
    }
}

/* Values Python 3 gives (random.Random(1234).getrandbits(32) three times;
 * .sample(range(10), 5), .sample(range(1000), 7), .sample(range(30), 3) in
 * a row; Random(2**40 + 5).getrandbits(32) twice). */
static void python_random(void)
{
    struct py_random r;
    py_random_seed(&r, 1234);
    uint32_t bits[3] = {4150886329u, 3342196574u, 1892932127u};
    for (int i = 0; i < 3; i++)
        CHECK(py_random_bits(&r, 32) == bits[i], "getrandbits %d", i);
    py_random_seed(&r, 1234);
    int a[5], b[7], c[3];
    int wa[5] = {7, 1, 0, 9, 4}, wb[7] = {35, 687, 709, 85, 100, 784, 363}, wc[3] = {7, 0, 25};
    CHECK(!py_random_sample(&r, 10, 5, a) && !py_random_sample(&r, 1000, 7, b) &&
              !py_random_sample(&r, 30, 3, c),
          "sample");
    CHECK(!memcmp(a, wa, sizeof a) && !memcmp(b, wb, sizeof b) && !memcmp(c, wc, sizeof c),
          "sample(range(10), 5) %d %d %d %d %d; (1000, 7) %d %d …; (30, 3) %d %d %d", a[0], a[1],
          a[2], a[3], a[4], b[0], b[1], c[0], c[1], c[2]);
    CHECK(py_random_sample(&r, 3, 4, a) == -1, "more than the population is refused");
    py_random_seed(&r, (1ull << 40) + 5);
    CHECK(py_random_bits(&r, 32) == 2166296868u && py_random_bits(&r, 32) == 2220160828u,
          "a seed of two words");
}

static void python_strings(void)
{
    struct {
        const char *in, *capitalized;
    } caps[] = {{"the LADY", "The lady"}, {"ǆemo ß", "ǅemo ß"}, {"ΟΔΟΣ ΟΔΟΣ", "Οδος οδος"},
                {"ßa", "Ssa"},           {"", ""},            {"1st Place", "1st place"}};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        char *c = py_capitalize(caps[i].in);
        CHECK(c && !strcmp(c, caps[i].capitalized), "capitalize(%s) = %s, Python's %s",
              caps[i].in, c ? c : "NULL", caps[i].capitalized);
        free(c);
    }
    /* Python: "\u3000 a b\x1c\u2029".strip() is "a b"; "\u200b" is no space;
     * the expected preprocess() values are those Python gives */
    char *s = py_strip("\xe3\x80\x80 a b\x1c\xe2\x80\xa9");
    CHECK(s && !strcmp(s, "a b"), "strip of Unicode spaces: [%s]", s ? s : "NULL");
    free(s);
    s = py_strip("\xe2\x80\x8b x");
    CHECK(s && !strcmp(s, "\xe2\x80\x8b x"), "a zero-width space is not stripped");
    free(s);
    CHECK(py_len("\xc3\xbf\xf0\x9f\x99\x82" "a", 7) == 3, "len() counts code points");
    struct {
        const char *in, *out;
    } hs[] = {{"  a [title] b  ", "a. b"},
              {"x [step] y", "x y"},
              {"a  [x] b", "a  b"}, /* three spaces, made two by one replace pass */
              {"[no close\n] here [y]", "[no close\n] here "}, /* stripped before */
              {"[a][b]c", "c"}};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        char *p = hellaswag_preprocess(hs[i].in);
        CHECK(p && !strcmp(p, hs[i].out), "preprocess([%s]) = [%s], expected [%s]", hs[i].in,
              p ? p : "NULL", hs[i].out);
        free(p);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "%s", path);
}

/* The context's trailing whitespace goes to the continuation; the
 * continuation is the whole's tokens after the context's; the doc token
 * first with --bos; an empty context is the doc token alone; a
 * continuation longer than the model is no item. */
static void encoding_as_the_harness(void)
{
    char path[] = "/tmp/cod-eval-enc-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    CHECK(fd >= 0, "temporary file");
    if (fd < 0)
        return;
    close(fd);
    write_file(path, "{\"context\":\"Two plus two equals \",\"choices\":[\"four\",\"five!\"],\"gold\":0}\n"
                     "{\"context\":\"\",\"choices\":[\"ab\",\"c\"],\"gold\":1}\n"
                     "{\"context\":\"0123456789\",\"choices\":[\"abcdefghij\",\"x\"],\"gold\":0}\n");
    struct eval_task t;
    char *said = NULL;
    size_t len = 0;
    FILE *report = open_memstream(&said, &len);
    if (load(path, NULL, 0, NULL, 1, 10, &t, report)) {
        fclose(report);
        free(said);
        unlink(path);
        return;
    }
    fclose(report);
    CHECK(t.n == 2, "%d items: the third's continuation is longer than the model's 10", t.n);
    CHECK(said && strstr(said, ":3: choice 0's continuation is 11 tokens (the model takes 1 to 10)"),
          "the third reported: %s", said ? said : "");
    const struct eval_item *a = &t.items[0], *b = &t.items[1];
    /* "Two plus two equals" with the doc token, then " four" */
    CHECK(a->n_ctx[0] == 20 && a->ctx_tok[0][0] == 256 && a->ctx_tok[0][19] == 's',
          "the context without its space: %d tokens", a->n_ctx[0]);
    CHECK(a->ctx_tok[1] == a->ctx_tok[0], "one context for both choices");
    CHECK(a->n_cont[0] == 6 && a->cont_tok[0][0] == ' ' && a->cont_tok[0][1] == ' ' &&
              a->cont_tok[0][2] == 'f',
          "the space moved: the delimiter and the context's, then the choice (%d tokens)",
          a->n_cont[0]);
    CHECK(a->chars[0] == 4 && a->chars[1] == 5, "acc_norm divides by the choice's characters");
    CHECK(b->n_ctx[0] == 1 && b->ctx_tok[0][0] == 256 && b->n_cont[0] == 3 &&
              b->cont_tok[0][0] == ' ',
          "an empty context is the doc token; the continuation has no doc token");
    eval_task_free(&t);
    if (!load(path, NULL, 0, NULL, 0, 100, &t, NULL)) {
        CHECK(t.n == 3 && t.items[0].n_ctx[0] == 19 && t.items[0].ctx_tok[0][0] == 'T',
              "--bos no: no doc token before the context");
        CHECK(t.items[1].n_ctx[0] == 1 && t.items[1].ctx_tok[0][0] == 256,
              "an empty context is still the doc token");
        eval_task_free(&t);
    }
    free(said);
    unlink(path);
}

/* The generic layout's contexts form (the cloze's): the contexts are the
 * choices and one continuation follows each, as WinoGrande's; a few-shot
 * example is its gold context, the delimiter and the continuation. */
static void generic_contexts_form(void)
{
    char path[] = "/tmp/cod-eval-ctx-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    if (fd < 0)
        return;
    close(fd);
    write_file(path, "{\"contexts\":[\"It rained.\",\"The sun shone.\"],\"continuation\":\"We stayed in.\",\"gold\":0}\n"
                     "{\"contexts\":[\"A.\",\"B.\",\"C.\"],\"continuation\":\"D.\",\"gold\":2}\n");
    struct eval_task t;
    if (!load(path, NULL, 0, NULL, 0, 1000, &t, stderr)) {
        const struct eval_item *a = &t.items[0];
        CHECK(t.layout == LAYOUT_GENERIC && t.n == 2, "detected as generic, %d items", t.n);
        CHECK(a->n == 2 && !strcmp(a->context[1], "The sun shone.") &&
                  !strcmp(a->cont[0], " We stayed in.") && !strcmp(a->cont[1], " We stayed in.") &&
                  a->chars[1] == 14,
              "the contexts are the choices, one continuation for all");
        eval_task_free(&t);
    }
    if (!load(path, "generic", 1, NULL, 0, 1000, &t, stderr)) {
        CHECK(!strcmp(t.items[0].context[0], "C. D.\n\nIt rained."),
              "the example before item 1: [%s]", t.items[0].context[0]);
        eval_task_free(&t);
    }
    unlink(path);
}

/* Bad lines: FILE:LINE and why, the rest scored; --strict stops at the first. */
static void bad_lines_reported(void)
{
    char path[] = "/tmp/cod-eval-bad-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    if (fd < 0)
        return;
    close(fd);
    write_file(path, "{\"question\":\"q\",\"choices\":{\"text\":[\"a\",\"b\"],\"label\":[\"A\",\"B\"]},\"answerKey\":\"B\"}\n"
                     "{\"choices\":{\"text\":[\"a\"],\"label\":[\"A\"]},\"answerKey\":\"A\"}\n"
                     "{\"question\":\"q\",\"choices\":{\"text\":[\"a\"],\"label\":[\"A\"]},\"answerKey\":\"C\"}\n"
                     "{\"question\":\"q\",\"choices\":{\"text\":[],\"label\":[]},\"answerKey\":\"A\"}\n"
                     "not json\n"
                     "\n"
                     "{\"question\":\"q\",\"choices\":{\"text\":[\"a\",\"\"],\"label\":[\"A\",\"B\"]},\"answerKey\":\"A\"}\n"
                     "{\"question\":\"r\",\"choices\":{\"text\":[\"c\",\"d\"],\"label\":[\"A\",\"B\"]},\"answerKey\":\"A\"}\n");
    char *said = NULL;
    size_t len = 0;
    FILE *report = open_memstream(&said, &len);
    struct eval_task t;
    int ok = !load(path, "arc_easy", 0, NULL, 1, 1000, &t, report);
    fclose(report);
    if (ok) {
        CHECK(t.n == 2 && t.bad == 5 && t.items[1].where == 8, "%d items, %ld bad", t.n, t.bad);
        eval_task_free(&t);
    }
    const char *want[] = {":2: no field \"question\"", ":3: answerKey \"C\" is none of",
                          ":4: \"choices.text\" is an empty list", ":5: not JSON",
                          ":7: a choice is empty"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char line[600];
        snprintf(line, sizeof line, "%s%s", path, want[i]);
        CHECK(said && strstr(said, line), "reported: %s (all: %s)", line, said ? said : "");
    }
    free(said);
    struct eval_encoding e = {bytes, 1, 256, 1000};
    struct eval_task_opts o = {.file = path, .layout = "arc", .strict = 1};
    char err[1024];
    CHECK(eval_task_load(&t, &o, &e, NULL, err, sizeof err) == -1 && strstr(err, ":2: no field"),
          "--strict fails at the first: %s", err);
    unlink(path);
}

/* Worked by hand, 4 items of 2 choices, gold 0, 0, 0, 1:
 *   item 0: ll (−1, −2), lengths (1, 1): both pick 0, right;
 *   item 1: ll (−1, −5), lengths (1, 10): acc picks 0, right; acc_norm
 *           (−1, −0.5) picks 1, wrong;
 *   item 2: ll (−5, −1), lengths (10, 1): acc picks 1, wrong; acc_norm
 *           (−0.5, −1) picks 0, right;
 *   item 3: ll (−3, −3), lengths (5, 5): a tie, which goes to choice 0:
 *           wrong for gold 1.
 * acc = acc_norm = 2/4, stderr √(Σ(x − ½)²/3)/√4 = √(1/3)/2. With item 3's
 * gold 0 (the tie now right): 3/4 each, stderr √((3·¼² + ¾²)/3)/2 = 1/4. */
static void metrics_by_hand(void)
{
    static int chars[4][2] = {{1, 1}, {1, 10}, {10, 1}, {5, 5}};
    static double ll[8] = {-1, -2, -1, -5, -5, -1, -3, -3};
    int gold[4] = {0, 0, 0, 1};
    long at[4] = {0, 2, 4, 6};
    struct eval_item items[4];
    memset(items, 0, sizeof items);
    for (int i = 0; i < 4; i++) {
        items[i].n = 2;
        items[i].gold = gold[i];
        items[i].chars = chars[i];
    }
    struct eval_task t = {.items = items, .n = 4, .choices = 8, .configs = 1, .ll = ll,
                          .choice_at = at};
    struct eval_metrics m;
    eval_metrics(&t, 0, &m);
    CHECK(m.n == 4 && m.acc == 0.5 && m.acc_norm == 0.5, "acc %g acc_norm %g", m.acc, m.acc_norm);
    CHECK(fabs(m.acc_stderr - sqrt(1.0 / 3) / 2) < 1e-15 &&
              fabs(m.acc_norm_stderr - sqrt(1.0 / 3) / 2) < 1e-15,
          "stderr %.17g %.17g", m.acc_stderr, m.acc_norm_stderr);
    items[3].gold = 0;
    eval_metrics(&t, 0, &m);
    CHECK(m.acc == 0.75 && m.acc_norm == 0.75, "acc %g acc_norm %g", m.acc, m.acc_norm);
    CHECK(fabs(m.acc_stderr - 0.25) < 1e-15 && fabs(m.acc_norm_stderr - 0.25) < 1e-15,
          "stderr %.17g %.17g, by hand 1/4", m.acc_stderr, m.acc_norm_stderr);
    t.n = 1;
    eval_metrics(&t, 0, &m);
    CHECK(m.acc == 1 && isnan(m.acc_stderr), "one item: no standard error");
}

int main(void)
{
    char err[512];
    bytes = tokenizer_open("bytes", NULL, 0, err, sizeof err);
    if (!bytes) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    RUN(prompts_as_the_harness_renders);
    RUN(python_random);
    RUN(python_strings);
    RUN(encoding_as_the_harness);
    RUN(generic_contexts_form);
    RUN(bad_lines_reported);
    RUN(metrics_by_hand);
    tokenizer_close(bytes);
    CHECK_EXIT();
}
