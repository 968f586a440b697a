#!/usr/bin/env python3
"""The prompts lm-evaluation-harness renders for the fixtures here, written
to LAYOUT.expected.json, which tests/unit/test_eval.c compares cod's with
byte for byte. Not run by the tests: it needs the harness's task
definitions at the tag cod follows (a git clone of
EleutherAI/lm-evaluation-harness) and Python's jinja2 and PyYAML:

    tests/eval/harness_prompts.py --harness PATH/TO/lm-evaluation-harness.git

It renders each task as lm_eval/api/task.py (v0.4.12) does, from the
task's own YAML (doc_to_text, doc_to_choice, doc_to_target, description,
process_docs) and utils.py, with jinja2 set up as lm_eval/utils.py sets it
up; the few-shot examples are drawn by random.Random(1234) as the
harness's ContextSampler draws them (FirstNSampler for MMLU). LLM-Adapters'
commonsense files and the generic layout are cod's own: their prompts are
written here from docs/eval.md."""
import argparse
import ast
import json
import random
import subprocess
import sys
import types

import jinja2
import yaml

TAG = "v0.4.12"
HERE = __file__.rsplit("/", 1)[0]
TASKS = {
    "mmlu": ("lm_eval/tasks/mmlu/default/_default_template_yaml", 2, "mmlu_dev.jsonl"),
    "arc": ("lm_eval/tasks/arc/arc_easy.yaml", 2, "arc_train.jsonl"),
    "hellaswag": ("lm_eval/tasks/hellaswag/hellaswag.yaml", 2, None),
    "piqa": ("lm_eval/tasks/piqa/piqa.yaml", 1, None),
    "boolq": ("lm_eval/tasks/super_glue/boolq/default.yaml", 2, None),
    "winogrande": ("lm_eval/tasks/winogrande/default.yaml", 2, None),
    "social_iqa": ("lm_eval/tasks/siqa/siqa.yaml", 2, None),
    "openbookqa": ("lm_eval/tasks/openbookqa/openbookqa.yaml", 2, None),
    "commonsense": (None, 1, None),
    "generic": (None, 2, None),
}


def show(repo, path):
    return subprocess.run(["git", "--git-dir", repo, "show", f"{TAG}:{path}"], check=True,
                          capture_output=True, text=True).stdout


class Function:
    def __init__(self, name):
        self.name = name


def load_yaml(repo, path):
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_constructor("!function", lambda l, n: Function(l.construct_scalar(n)))
    cfg = yaml.load(show(repo, path), Loader=Loader)
    if "include" in cfg:
        base = yaml.load(show(repo, path.rsplit("/", 1)[0] + "/" + cfg.pop("include")),
                         Loader=Loader)
        base.update(cfg)
        cfg = base
    return cfg


def utils_of(repo, path, name):
    """A task's python file (its `!function module.fn`), datasets stubbed."""
    stub = sys.modules.setdefault("datasets", types.ModuleType("datasets"))
    stub.Dataset = Docs
    module = types.ModuleType(name)
    exec(show(repo, path.rsplit("/", 1)[0] + "/" + name + ".py"), module.__dict__)
    return module


class Docs(list):
    """Enough of datasets.Dataset for process_docs: map merges each result."""
    def map(self, fn):
        return Docs({**d, **fn(d)} for d in self)


ENV = jinja2.Environment(loader=jinja2.BaseLoader, undefined=jinja2.StrictUndefined,
                         keep_trailing_newline=True)


def render(t, doc):
    return ENV.from_string(t).render(**doc)


def resolve(repo, path, value):
    if isinstance(value, Function):
        module, fn = value.name.rsplit(".", 1)
        return getattr(utils_of(repo, path, module), fn)
    return value


def harness_task(repo, path):
    cfg = load_yaml(repo, path)
    text, choice, target = (resolve(repo, path, cfg[k])
                            for k in ("doc_to_text", "doc_to_choice", "doc_to_target"))
    process = resolve(repo, path, cfg.get("process_docs"))

    def doc_to_text(doc):
        if callable(text):
            return text(doc)
        if text in doc:
            return doc[text]
        s = render(text, doc)
        return ast.literal_eval(s) if s.isdigit() else s

    def doc_to_choice(doc):
        if callable(choice):
            return choice(doc)
        if isinstance(choice, list):
            return choice
        return doc[choice] if choice in doc else ast.literal_eval(render(choice, doc))

    def doc_to_target(doc):
        if callable(target):
            return target(doc)
        if target in doc:
            return doc[target]
        s = render(target, doc)
        return ast.literal_eval(s) if s.isdigit() else s

    return cfg, doc_to_text, doc_to_choice, doc_to_target, process


def read(name):
    with open(f"{HERE}/{name}", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def own_task(layout):
    """cod's layouts that the harness does not define (docs/eval.md)."""
    ind = " " * 16

    def commonsense_text(doc):
        if doc.get("input"):
            return ("Below is an instruction that describes a task, paired with an input that "
                    "provides further context. Write a response that appropriately completes "
                    f"the request.\n\n{ind}### Instruction:\n{ind}{doc['instruction']}\n\n"
                    f"{ind}### Input:\n{ind}{doc['input']}\n\n{ind}### Response:\n{ind}")
        return ("Below is an instruction that describes a task. Write a response that "
                f"appropriately completes the request. \n\n{ind}### Instruction:\n{ind}"
                f"{doc['instruction']}\n\n{ind}### Response:\n{ind}")

    def commonsense_choice(doc):
        labels = doc["instruction"].rsplit("Answer format:", 1)[1].strip().split("/")
        return [f"the correct answer is {x.strip()}" for x in labels if x.strip()]

    def commonsense_target(doc):
        labels = [x.strip() for x in doc["instruction"].rsplit("Answer format:", 1)[1]
                  .strip().split("/") if x.strip()]
        return labels.index(doc["answer"].strip())

    if layout == "commonsense":
        return {"target_delimiter": ""}, commonsense_text, commonsense_choice, \
            commonsense_target, None
    return {}, lambda d: d["context"], lambda d: d["choices"], lambda d: d["gold"], None


def prompts(layout, docs, pool, shots, own, fns):
    cfg, doc_to_text, doc_to_choice, doc_to_target, _ = fns
    tgt = cfg.get("target_delimiter", " ")
    rnd = random.Random(1234)
    out = []
    for line, doc in docs:
        description = ""
        if layout == "mmlu":
            description = ("The following are multiple choice questions (with answers) about "
                           f"{' '.join(doc['subject'].split('_'))}.\n\n")
        examples = ""
        if shots:
            if layout == "mmlu":
                chosen = [d for d in pool if d["subject"] == doc["subject"]][:shots]
            elif own:
                chosen = [x for x in rnd.sample(pool, shots + 1) if x != doc][:shots]
            else:
                chosen = rnd.sample(pool, shots)
            for e in chosen:
                q, c, a = doc_to_text(e), doc_to_choice(e), doc_to_target(e)
                if isinstance(q, int):
                    q = c[q]
                    c = None
                answer = c[a] if c and isinstance(a, int) else a
                examples += q + tgt + answer + "\n\n"
        q, c, a = doc_to_text(doc), doc_to_choice(doc), doc_to_target(doc)
        if isinstance(q, int):
            out.append({"line": line, "gold": q,
                        "contexts": [description + examples + x for x in c],
                        "continuations": [tgt + a for _ in c]})
        else:
            out.append({"line": line, "gold": a, "contexts": [description + examples + q] * len(c),
                        "continuations": [tgt + x for x in c]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", required=True, help="the harness's git directory")
    repo = ap.parse_args().harness
    for layout, (path, shots, fewshot) in TASKS.items():
        fns = harness_task(repo, path) if path else own_task(layout)
        process = fns[4]
        rows = read(f"{layout}.jsonl")
        if layout == "boolq":  # the google/boolq copy's answer, as super_glue's label
            rows = [{**r, "label": int(r["answer"])} if "label" not in r else r for r in rows]
        docs = Docs(rows)
        if process:
            docs = process(docs)
        pool = Docs(read(fewshot)) if fewshot else docs
        if process and fewshot:
            pool = process(pool)
        numbered = list(zip(range(1, len(docs) + 1), docs))
        expected = {"harness": TAG, "shots": shots, "fewshot_from": fewshot,
                    "zero": prompts(layout, numbered, pool, 0, False, fns),
                    "few": prompts(layout, numbered, list(pool), shots, fewshot is None, fns)}
        with open(f"{HERE}/{layout}.expected.json", "w", encoding="utf-8") as f:
            json.dump(expected, f, ensure_ascii=False, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
