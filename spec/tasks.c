/* analysis.tasks: see spec.h and docs/spec.md. */
#include <stdio.h>
#include <string.h>

#include "spec/fields.h"
#include "spec/spec.h"

/* eval/layout.c's names, which the evaluation reads */
static const char *const layouts[] = {"mmlu",       "arc",        "arc_easy",   "arc_challenge",
                                      "hellaswag",  "piqa",       "boolq",      "winogrande",
                                      "social_iqa", "openbookqa", "commonsense", "generic",
                                      NULL};

int spec_task_layout_known(const char *layout)
{
    for (int i = 0; layouts[i]; i++)
        if (!strcmp(layout, layouts[i]))
            return 1;
    return 0;
}

void spec_task_name(const char *file, char *name, size_t cap)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    snprintf(name, cap, "%.*s", (int)strcspn(base, "."), base);
}

/* The name goes into metric names (task/NAME/acc, at most 128 characters). */
static int check_name(const char *file, const char *field, char *name, size_t cap,
                      struct spec_error *err)
{
    spec_task_name(file, name, cap);
    if (!name[0] || strlen(name) > 64)
        return spec_fail(err, field, "the task's name (the file's name up to its first '.') must "
                                     "be 1 to 64 characters, not \"%s\"", name);
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            return spec_fail(err, field, "the task's name \"%s\" (the file's name up to its first "
                                         "'.') may hold only letters, digits, '_' and '-'",
                             name);
    return 0;
}

static int parse_one(json_t *v, const char *at, struct spec_task *t, struct spec_error *err)
{
    memset(t, 0, sizeof *t);
    if (json_is_string(v)) {
        json_t *o = json_pack("{s:O}", "file", v);
        int rc = o ? parse_one(o, at, t, err) : spec_fail(err, at, "out of memory");
        json_decref(o);
        return rc;
    }
    static const char *const keys[] = {"file", "layout", "shots", "fewshot_from", "limit", NULL};
    char layout_at[160];
    snprintf(layout_at, sizeof layout_at, "%s.layout", at);
    if (!json_is_object(v))
        return spec_fail(err, at, "must be a file name or an object {\"file\", \"layout\", "
                                  "\"shots\", \"fewshot_from\", \"limit\"}");
    if (field_check_keys(v, at, keys, err))
        return -1;
    int has = field_string(v, at, "file", t->file, sizeof t->file, err);
    if (has < 0)
        return -1;
    if (!has)
        return spec_fail(err, at, "names no \"file\"");
    if (field_string(v, at, "layout", t->layout, sizeof t->layout, err) < 0 ||
        field_int(v, at, "shots", 0, &t->shots, err) < 0 ||
        field_string(v, at, "fewshot_from", t->fewshot_from, sizeof t->fewshot_from, err) < 0 ||
        field_long(v, at, "limit", 0, &t->limit, err) < 0)
        return -1;
    if (!strcmp(t->layout, "auto"))
        t->layout[0] = 0;
    else if (t->layout[0] && !spec_task_layout_known(t->layout))
        return spec_fail(err, layout_at, "unknown layout \"%s\" (mmlu, arc_easy, arc_challenge, "
                                         "hellaswag, piqa, boolq, winogrande, social_iqa, "
                                         "openbookqa, commonsense, generic; \"auto\": the "
                                         "file's fields say)",
                         t->layout);
    return 0;
}

int spec_tasks_parse(json_t *tasks, struct job_spec *s, struct spec_error *err)
{
    s->n_tasks = 0;
    if (!tasks)
        return 0;
    if (!json_is_array(tasks))
        return spec_fail(err, "analysis.tasks", "must be a list of task files");
    if (json_array_size(tasks) > SPEC_MAX_TASKS)
        return spec_fail(err, "analysis.tasks", "holds %zu tasks, at most %d",
                         json_array_size(tasks), SPEC_MAX_TASKS);
    char names[SPEC_MAX_TASKS][80];
    for (size_t i = 0; i < json_array_size(tasks); i++) {
        char at[64];
        snprintf(at, sizeof at, "analysis.tasks[%zu]", i);
        struct spec_task *t = &s->tasks[i];
        if (parse_one(json_array_get(tasks, i), at, t, err) ||
            check_name(t->file, at, names[i], sizeof names[i], err))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return spec_fail(err, at, "the task's name \"%s\" is analysis.tasks[%zu]'s too "
                                          "(its metrics would mix): rename one file",
                                 names[i], j);
        s->n_tasks++;
    }
    return 0;
}

json_t *spec_tasks_json(const struct job_spec *s)
{
    json_t *a = json_array();
    for (int i = 0; a && i < s->n_tasks; i++) {
        const struct spec_task *t = &s->tasks[i];
        json_t *o = json_pack("{s:s, s:s, s:i, s:I}", "file", t->file, "layout",
                              t->layout[0] ? t->layout : "auto", "shots", t->shots, "limit",
                              (json_int_t)t->limit);
        if (o && t->fewshot_from[0])
            json_object_set_new(o, "fewshot_from", json_string(t->fewshot_from));
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
