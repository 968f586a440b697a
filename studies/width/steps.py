#!/usr/bin/env python3
"""The width study's effective base spec for one recipe: BASE with the
KEY=VALUE words set (dotted paths; a value read as JSON where it parses,
else as a string), and its schedule sized for N training targets an arm
(or, N written as Px, P passes over the unique training targets) from
what the data's rows hold (TOKENS_JSON, tokens.py's):

- train.steps: N over the targets of one update (batch_seqs × the mean
  targets of a row in documents packing, where pads are no targets;
  batch_seqs × seq_len in stream packing), rounded up; for passes, up to
  a multiple of 10, so that the evaluations (a tenth apart) fall on the
  ends of the passes of a call of 2 or 5;
- train.warmup: a tenth of the steps (the paper's 1,000 of 10,000);
- eval.every: a tenth of the steps (and one at the last step);
- stats.every: a twentieth (layer/out_var at 20 points of training).

A word that sets one of these keeps its value. Prints the spec; says on
stderr the steps, the targets and slots they make, and the passes over the
unique targets the data holds (documents packing sees a document's first
seq_len + 1 tokens only: tokens.py counts those).

usage: steps.py BASE.json TOKENS_JSON N|Px [KEY=VALUE...]
"""
import json
import math
import sys


def put(spec, path, value):
    keys = path.split(".")
    node = spec
    for k in keys[:-1]:
        if isinstance(node.get(k), str):
            # a preset's name, as its object (docs/spec.md: model's "preset", norm's "base")
            node[k] = {"model": {"preset": node[k]}, "norm": {"base": node[k]}}.get(k, {})
        node = node.setdefault(k, {})
    node[keys[-1]] = value


def get(spec, path, default=None):
    node = spec
    for k in path.split("."):
        if not isinstance(node, dict) or k not in node:
            return default
        node = node[k]
    return node


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: steps.py BASE.json TOKENS_JSON N|Px [KEY=VALUE...]")
    spec = json.load(open(sys.argv[1]))
    data = json.load(open(sys.argv[2]))
    want = sys.argv[3]
    try:
        n = float(want[:-1] if want.endswith("x") else want)
    except ValueError:
        sys.exit(f"steps: '{want}' is neither a number of targets nor passes (as 1x)")
    fixed = set()
    for word in sys.argv[4:]:
        if "=" not in word:
            sys.exit(f"steps: '{word}' is not KEY=VALUE")
        key, text = word.split("=", 1)
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        put(spec, key, value)
        fixed.add(key)
    T = get(spec, "train.seq_len", 256)
    B = get(spec, "train.batch_seqs", 512)
    if T != data["seq_len"]:
        sys.exit(f"steps: the spec's train.seq_len {T}, the token counts' {data['seq_len']}")
    documents = get(spec, "data.packing", "stream") == "documents"
    tr = data["train"]
    per_update = B * tr["mean_targets_per_row"] if documents else B * T
    unique = tr["targets"] if documents else tr["tokens"]
    if want.endswith("x"):
        n *= unique
    steps = get(spec, "train.steps") if "train.steps" in fixed else math.ceil(n / per_update)
    if want.endswith("x") and "train.steps" not in fixed:
        steps = 10 * math.ceil(steps / 10)
    sched = {"train.steps": steps, "train.warmup": max(1, round(steps / 10)),
             "eval.every": max(1, math.ceil(steps / 10)), "stats.every": max(1, math.ceil(steps / 20))}
    for key, value in sched.items():
        if key not in fixed:
            put(spec, key, value)
    targets = steps * per_update
    val = data["val"]["targets"] if documents else data["val"]["tokens"]
    print(json.dumps(spec, indent=1))
    print(f"{get(spec, 'name', 'width')}: {steps} updates of {B} × {T} "
          f"({get(spec, 'data.packing', 'stream')} packing): {targets / 1e6:.1f}M targets in "
          f"{steps * B * T / 1e6:.1f}M slots, {targets / unique:.2f} passes over the "
          f"{unique / 1e6:.2f}M unique training targets; held out {val / 1e6:.2f}M, "
          f"evaluated on {min(val, get(spec, 'eval.tokens', 0)) / 1e6:.2f}M", file=sys.stderr)
    if get(spec, "eval.tokens", 0) > val:
        print(f"steps: eval.tokens {get(spec, 'eval.tokens')} is more than the {val} held-out "
              "targets: every one is evaluated", file=sys.stderr)


if __name__ == "__main__":
    main()
