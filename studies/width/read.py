#!/usr/bin/env python3
"""The width study's reading, from the folders studies/width/run.sh
writes (one a sweep: cod report's files, base.json, plan.txt and every
run's own series in runs/ID.csv), set beside the depth study's width-64
run of the same depths (BESIDE, default studies/depth/gpu: the same GPU
code, three seeds).

Per folder and depth, per arm (Pre-LN, LNS): the runs and how far each
trained (a run cut at the deadline says the update it reached of those
planned); the final eval perplexity, mean ± sd over the finished seeds
(a cut run's last evaluation beside, with its update); the ratio of the
last block's layer/out_var to the first block's at a quarter, half and
three quarters of the planned training and at the last statistics point
the run reached; the mean performance drop ΔP (perplexity, and loss)
over the deepest half of the blocks; the mean angular distance (span 1)
of the first and of the deepest half. Then:

- Pre-LN − LNS at equal seeds in nats of held-out loss, at the last
  evaluation every pair of the folder reached (final when all ended), its
  verdict by studies/verdict.py's rule (a difference shown, within noise
  by TOST against ±MARGIN, unresolved, n = 1);
- what the runs memorised: at the last evaluation within each pass over
  the unique training targets, the held-out loss minus the loss on the
  training sample (eval.train_tokens' train_eval/loss), per arm, and
  LNS's gap minus Pre-LN's at equal seeds (exploratory); where the call
  had no training sample, the training batches' loss (train/loss, the
  mean of the 10 updates up to the evaluation) stands in, and says so;
- LNS − Pre-LN at each evaluation, on held-out text and on training text
  (mean over the seeds: descriptive);
- for each folder after the first (another rate, another share of the
  pool), each arm's change from the first folder's at equal seeds, and
  the change of the gap: the rate pair, or what repetition does;
- the paper's three claims, each with its verdict here and the width-64
  study's.

Every paired gap and change of one reading is one family for Holm's
correction; the memorisation's comparisons are exploratory.

A FOLDER may be several joined by +, the folders of one sweep's schedule
that calls of other seeds wrote: their runs read as one sweep's, the
pruning and angles averaged with each folder's number of runs as its
weight. They must share the schedule (base.json's train section), and a
seed of an arm and depth may be in one of them only.

usage: read.py [--beside DIR] [--margin NATS] FOLDER[+FOLDER...]...
"""
import argparse
import csv
import importlib.util
import json
import math
import os
import re
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))


def study_module(name, path):
    """another study's script (a path from studies/) as a module"""
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, "..", path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gap = study_module("gap", "recipe/gap.py")
table = study_module("table", "depth/table.py")
verdict = gap.verdict
NAMES = {"pre": "Pre-LN", "lns": "LNS"}


def rows(folder, name):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    return float(v) if v not in (None, "") else None


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}g}"


class Run:
    """One run: its cell (cells.csv) and its own series (runs/ID.csv)."""

    def __init__(self, folder, cell, planned):
        self.cell, self.planned = cell, planned
        self.norm, self.seed = cell["norm"], cell["seed"]
        self.L = int(cell["model.n_layers"])
        self.ppl, self.loss, self.train_eval, self.train = {}, {}, {}, {}
        self.out_var, self.step = {}, 0
        series = {"eval/ppl": self.ppl, "eval/loss": self.loss, "train_eval/loss": self.train_eval,
                  "train/loss": self.train}
        for r in rows(os.path.join(folder, "runs"), f"{cell['experiment']}.csv"):
            step, v = int(r["step"]), num(r["value"])
            if r["name"] == "train/loss":
                self.step = max(self.step, step)
            if v is None:
                continue
            if r["name"] in series:
                series[r["name"]][step] = v
            elif r["name"] == "layer/out_var":
                self.out_var.setdefault(step, {})[int(r["layer"])] = v
        self.finished = gap.pair.finished(cell)

    def trained(self):
        if self.finished:
            return f"{self.planned} of {self.planned} updates"
        if self.cell["state"] in ("queued", "running"):
            return f"cut at the deadline: update {self.step} of {self.planned}"
        why = f" ({self.cell['reason']})" if self.cell.get("reason") else ""
        return f"{self.cell['state']}{' (diverged)' if self.cell['diverged'] == 'true' else ''}{why} " \
               f"at update {self.step} of {self.planned}"

    def ratio_at(self, step):
        v = self.out_var.get(step, {})
        return v[self.L] / v[1] if self.L in v and v.get(1) else None

    def ratio_near(self, fraction):
        """out_var ratio at the statistics point nearest a fraction of the
        planned updates; at 1, the last point the run reached; none for a
        fraction the run was cut before"""
        steps = sorted(s for s in self.out_var if self.ratio_at(s) is not None)
        if not steps:
            return None, None
        if fraction >= 1:
            return steps[-1], self.ratio_at(steps[-1])
        want = fraction * self.planned
        if want > self.step:
            return None, None
        s = min(steps, key=lambda s: (abs(s - want), s))
        return s, self.ratio_at(s)

    def last_eval(self):
        return (max(self.ppl), self.ppl[max(self.ppl)]) if self.ppl else (None, None)

    def seen(self, step):
        """the loss on training text at an evaluation: the training sample's,
        else the mean of the training batches of the 10 updates up to it"""
        if self.train_eval:
            return self.train_eval.get(step)
        batch = [self.train[s] for s in range(step - 9, step + 1) if s in self.train]
        return statistics.mean(batch) if step > 0 and batch else None


def mean_sd(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, 0
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else None, len(values)


def pm(values, digits=2):
    m, sd, n = mean_sd(values)
    if m is None:
        return "—"
    return f"{m:.{digits}f} ± {sd:.{digits}f} (n={n})" if sd is not None else f"{m:.{digits}f} (n={n})"


def weighted(pairs):
    """the mean of (value, runs) pairs, each value a mean over its runs"""
    pairs = [(v, n) for v, n in pairs if v is not None]
    total = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / total if total else None


def runs_of(r):
    return int(r["n"]) if r.get("n") else 1


def group_value(tables, L, norm, column):
    """a column of depth_summary.csv at (L, norm), over each folder's table"""
    return weighted((num(r.get(column)), runs_of(r)) for table in tables for r in table
                    if int(r["model.n_layers"]) == L and r["norm"] == norm)


def angular_halves(tables, L, norm):
    by_layer = {}
    for table in tables:
        for r in table:
            if int(r["model.n_layers"]) == L and r["norm"] == norm and r["span"] == "1":
                by_layer.setdefault(int(r["layer"]), []).append((num(r["mean"]), runs_of(r)))
    span1 = {layer: weighted(pairs) for layer, pairs in by_layer.items()}
    first = [span1[l] for l in range(1, L // 2 + 1) if span1.get(l) is not None]
    deep = [span1[l] for l in range(L // 2 + 1, L + 1) if span1.get(l) is not None]
    if not first or not deep:
        return None
    return statistics.mean(first), statistics.mean(deep)


def by_seed(runs):
    return {r.seed: r for r in runs}


def common_eval(runs):
    """the last evaluation every run reached, and whether all of them ended"""
    steps = set.intersection(*(set(r.loss) for r in runs)) if runs else set()
    steps.discard(0)
    return (max(steps) if steps else None), all(r.finished for r in runs)


class Pair:
    """Pre-LN and LNS at equal seeds, compared at the last evaluation every
    pair reached: d[seed] = (ppl difference, loss difference) Pre-LN − LNS."""

    def __init__(self, pre, lns, label):
        a, b = by_seed(pre), by_seed(lns)
        self.seeds = sorted(set(a) & set(b), key=gap.pair.order)
        self.runs = [a[s] for s in self.seeds] + [b[s] for s in self.seeds]
        self.pre, self.lns = a, b
        self.step, self.final = common_eval(self.runs)
        self.d = {s: (a[s].ppl[self.step] - b[s].ppl[self.step], a[s].loss[self.step] - b[s].loss[self.step])
                  for s in self.seeds if self.step is not None}
        self.c = verdict.Comparison(label, [v[1] for v in self.d.values()], "Pre-LN", "LNS")

    def where(self):
        if self.step is None:
            return "no evaluation both arms reached"
        return "final" if self.final else f"at update {self.step}, the last evaluation every pair reached"

    def text(self, margin):
        if not self.d:
            return "no pair of runs to compare"
        ppl = statistics.mean(v[0] for v in self.d.values())
        by = ", ".join(f"{s}: {v[1]:+.4f}" for s, v in self.d.items())
        return (f"{ppl:+.3f} ppl; {verdict.describe(self.c, margin, 4)} "
                f"({self.where()}; by seed {by})")


def passes_per_update(folder, base, plan):
    """the passes over the unique training targets an update makes: from
    the rows' counts (tokens.json, which run.sh copies beside the report),
    else from steps.py's line in plan.txt (to its two decimals)"""
    path = os.path.join(folder.split("+")[0], "tokens.json")
    if os.path.exists(path):
        tr, B = json.load(open(path))["train"], base["train"]["batch_seqs"]
        if base["data"].get("packing", "stream") == "documents":
            return B * tr["mean_targets_per_row"] / tr["targets"]
        return B * base["train"]["seq_len"] / tr["tokens"]
    m = re.search(r"(\d+) updates of .*?([0-9.]+) passes over the", plan)
    return float(m.group(2)) / int(m.group(1)) if m else None


def memorised(pre, lns, per_update, margin):
    """the held-out minus the training-text loss at the last evaluation of
    each pass, per arm, and LNS's minus Pre-LN's at equal seeds"""
    runs = list(pre.values()) + list(lns.values())
    if not runs or not per_update:
        return []
    steps = sorted(set.intersection(*(set(r.loss) for r in runs)) - {0})
    last = {}
    for s in steps:
        # an evaluation within a hundredth of a pass past its end ends it
        last[max(1, math.ceil(s * per_update - 0.01))] = s
    out = []
    for p in sorted(last):
        s = last[p]
        g = {n: {seed: r.loss[s] - r.seen(s) for seed, r in arm.items() if r.seen(s) is not None}
             for n, arm in (("pre", pre), ("lns", lns))}
        both = [seed for seed in g["pre"] if seed in g["lns"]]
        c = verdict.Comparison(f"pass {p}", [g["lns"][x] - g["pre"][x] for x in both], "LNS's gap",
                               "Pre-LN's gap", exploratory=True)
        out.append((p, s, s * per_update, g, c))
    verdict.judge([c for *_, c in out], margin)
    return out


def curve(pre, lns):
    """LNS − Pre-LN at each evaluation, held-out and on training text, mean over the seeds"""
    seeds = sorted(set(pre) & set(lns), key=gap.pair.order)
    if not seeds:
        return ""
    steps = sorted(set.intersection(*(set(pre[s].loss) & set(lns[s].loss) for s in seeds)) - {0})
    parts = []
    for st in steps:
        held = statistics.mean(lns[s].loss[st] - pre[s].loss[st] for s in seeds)
        seen = [lns[s].seen(st) - pre[s].seen(st) for s in seeds
                if lns[s].seen(st) is not None and pre[s].seen(st) is not None]
        parts.append(f"{st}: {held:+.3f} / {statistics.mean(seen):+.3f}" if seen else f"{st}: {held:+.3f} / —")
    return "; ".join(parts)


def beside(folder, L):
    """The width-64 study's numbers at depth L, its Pre-LN − LNS judged as
    its own reading judges it (Holm over its depths: studies/depth/table.py)."""
    summary = rows(folder, "depth_summary.csv")
    if not summary:
        return None
    by = {(int(r["layers"]), r["norm"]): r for r in summary}
    pre, lns = by.get((L, "pre")), by.get((L, "lns"))
    if not pre or not lns:
        return None
    cells = rows(folder, "cells.csv")
    family = {d: table.comparison(cells, by[(d, "pre")]["group"], by[(d, "lns")]["group"])
              for d, n in by if n == "pre" and (d, "lns") in by}
    verdict.judge(list(family.values()))
    return {"diff": table.paired(family[L]),
            "ratio": (num(pre["out_var_ratio_last_first"]), num(lns["out_var_ratio_last_first"])),
            "dp": (num(pre["deep_half_delta_ppl"]), num(lns["deep_half_delta_ppl"]))}


def pooled(joined):
    """the runs, schedule and tables of FOLDER[+FOLDER...], or an error's text"""
    parts = joined.split("+")
    bases = [json.load(open(os.path.join(p, "base.json"))) for p in parts]
    for p, b in zip(parts[1:], bases[1:]):
        if b["train"] != bases[0]["train"]:
            return f"{p} trained on another schedule than {parts[0]} (base.json's train section differs)"
    planned = bases[0]["train"]["steps"]
    plans, runs, where = [], [], {}
    for p in parts:
        path = os.path.join(p, "plan.txt")
        text = open(path).read().strip() if os.path.exists(path) else ""
        if text and text not in plans:
            plans.append(text)
        for c in rows(p, "cells.csv"):
            if c["norm"] not in NAMES:
                continue
            key = (int(c["model.n_layers"]), c["norm"], c["seed"])
            if key in where:
                return f"seed {key[2]} of {NAMES[key[1]]} at {key[0]} layers is in both {where[key]} and {p}"
            where[key] = p
            runs.append(Run(p, c, planned))
    return {"name": joined.replace("+", " + "), "folder": joined, "base": bases[0], "planned": planned,
            "plan": "\n".join(plans), "runs": runs,
            "summary": [rows(p, "depth_summary.csv") for p in parts],
            "angular": [rows(p, "angular.csv") for p in parts]}


def arms(runs, L):
    return {n: [r for r in runs if r.L == L and r.norm == n] for n in NAMES}


def schedule_difference(a, b):
    """what differs between two folders' base specs, as KEY=A→B words"""
    words = []
    for section in sorted(set(a) | set(b)):
        x, y = a.get(section), b.get(section)
        if isinstance(x, dict) and isinstance(y, dict):
            words += [f"{section}.{k}: {x.get(k)} → {y.get(k)}" for k in sorted(set(x) | set(y))
                      if x.get(k) != y.get(k) and k not in ("warmup", "every")]
        elif x != y and section != "name":
            words.append(f"{section}: {x} → {y}")
    return ", ".join(words) or "nothing in the spec (other data)"


def change(first, other, L, margin):
    """each arm's change at equal seeds from the first folder's, and the
    gap's: [(label, Comparison, by seed)]"""
    out = []
    fa, oa = arms(first["runs"], L), arms(other["runs"], L)
    for n in NAMES:
        a, b = by_seed(fa[n]), by_seed(oa[n])
        seeds = [s for s in sorted(set(a) & set(b), key=gap.pair.order) if a[s].finished and b[s].finished]
        d = [(s, b[s].loss[max(b[s].loss)] - a[s].loss[max(a[s].loss)]) for s in seeds]
        out.append((f"{NAMES[n]}, its final loss here − there", verdict.Comparison(
            f"{NAMES[n]}", [v for _, v in d], "here", "there"), d))
    pf, po = Pair(fa["pre"], fa["lns"], ""), Pair(oa["pre"], oa["lns"], "")
    seeds = [s for s in po.d if s in pf.d and pf.final and po.final]
    d = [(s, po.d[s][1] - pf.d[s][1]) for s in seeds]
    out.append(("Pre-LN − LNS, its change here − there", verdict.Comparison(
        "gap", [v for _, v in d], "here", "there"), d))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--beside", default=os.path.join(here, "..", "depth", "gpu"))
    ap.add_argument("--margin", type=float, default=verdict.MARGIN)
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    margin, width64 = a.margin, os.path.relpath(os.path.normpath(a.beside))
    readings = []
    for joined in a.folders:
        got = pooled(joined)
        if isinstance(got, str):
            sys.exit(f"read.py: {got}")
        readings.append(got)
    # the family: every folder's gaps and every change from the first folder
    pairs = {(i, L): Pair(*arms(g["runs"], L).values(), f"{g['name']}, L = {L}")
             for i, g in enumerate(readings) for L in sorted({r.L for r in g["runs"]})}
    changes = {(i, L): change(readings[0], g, L, margin) for i, g in enumerate(readings) if i
               for L in sorted({r.L for r in g["runs"]} & {r.L for r in readings[0]["runs"]})}
    verdict.judge([p.c for p in pairs.values()] + [c for cs in changes.values() for _, c, _ in cs], margin)
    family = sum(1 for p in pairs.values() if p.c.p is not None) + \
        sum(1 for cs in changes.values() for _, c, _ in cs if c.p is not None)
    for i, g in enumerate(readings):
        report(i, g, pairs, margin, width64, a.beside)
    for (i, L), cs in changes.items():
        print(f"### {readings[i]['name']} against {readings[0]['name']}, L = {L}\n")
        print(f"What differs: {schedule_difference(readings[0]['base'], readings[i]['base'])}.\n")
        for label, c, d in cs:
            by = ", ".join(f"{s}: {v:+.4f}" for s, v in d)
            print(f"- {label}: {verdict.describe(c, margin, 4)}" + (f" (by seed {by})" if d else "") + "\n")
    held = f"Holm over the {family} comparisons of this reading that have an interval (those marked " \
        "exploratory aside)" if family else "no comparison of this reading has an interval"
    print(f"Verdicts: studies/verdict.py, in nats of held-out loss, equivalence by TOST against "
          f"±{margin:g} nats; {held}.")


def report(i, g, pairs, margin, width64, beside_dir):
    base, planned, runs = g["base"], g["planned"], g["runs"]
    model = base["model"]
    print(f"## {g['name']}\n")
    print(f"{g['plan']}\n" if g["plan"] else "", end="")
    # a preset's width is the trainer's to know; the spec names it only when it overrides it
    width = f" (dim {model['dim']})" if "dim" in model else ""
    sample = base.get("eval", {}).get("train_tokens")
    print(f"\nmodel {model.get('preset', 'custom')}{width}, "
          f"precision {base['train'].get('precision', 'mixed')}, packing "
          f"{base['data'].get('packing', 'stream')}, embed std {model.get('embed_std', 0.02)}, "
          f"lr {base['train']['lr']}, warmup {base['train']['warmup']}, {planned} updates of "
          f"{base['train']['batch_seqs']} × {base['train']['seq_len']}; held-out evaluation on "
          f"{base['eval']['tokens']:,} targets"
          + (f", the training sample on {sample:,}" if sample else ", no training sample") + "\n")
    print("| L | arm | runs | trained | eval ppl | out_var block L / block 1 at ¼, ½, ¾, end "
          "| mean ΔP of the deepest half, ppl (loss) | angular distance, first half / deepest half |")
    print("|---" * 8 + "|")
    per_update = passes_per_update(g["folder"], base, g["plan"])
    claims = []
    for L in sorted({r.L for r in runs}):
        by = arms(runs, L)
        for n, rs in by.items():
            if not rs:
                continue
            ratios = [fmt(mean_sd([r.ratio_near(f)[1] for r in rs])[0]) for f in (0.25, 0.5, 0.75, 1.0)]
            final = pm([float(r.cell["eval_ppl"]) for r in rs if r.finished])
            cut = [(r.seed,) + r.last_eval() for r in rs if not r.finished and r.last_eval()[0] is not None]
            if cut:
                final += "; " + ", ".join(f"seed {seed} {v:.2f} at update {s}" for seed, s, v in cut)
            dp = group_value(g["summary"], L, n, "deep_half_delta_ppl")
            dl = group_value(g["summary"], L, n, "deep_half_delta_loss")
            ang = angular_halves(g["angular"], L, n)
            print(f"| {L} | {NAMES[n]} | {len(rs)} | {'; '.join(sorted({r.trained() for r in rs}))} "
                  f"| {final} | {', '.join(ratios)} | {fmt(dp)} ({fmt(dl)}) "
                  f"| {'—' if ang is None else f'{ang[0]:.3f} / {ang[1]:.3f}'} |")
        pair = pairs[(i, L)]
        print(f"\nL = {L}, Pre-LN − LNS at equal seeds: {pair.text(margin)}\n")
        what = "the training sample" if any(r.train_eval for r in pair.runs) else \
            "the training batches (train/loss, mean of the 10 updates up to the evaluation: no training sample)"
        rows_m = memorised(pair.pre, pair.lns, per_update, margin)
        if rows_m:
            print(f"Held-out loss − loss on {what}, nats, at the last evaluation of each pass:\n")
            print("| pass | update (passes) | Pre-LN | LNS | LNS − Pre-LN at equal seeds |")
            print("|---" * 5 + "|")
            for p, s, at, gaps_, c in rows_m:
                print(f"| {p} | {s} ({at:.3g}) | {pm(gaps_['pre'].values(), 3)} | {pm(gaps_['lns'].values(), 3)} "
                      f"| {verdict.describe(c, margin, 4)} |")
            print()
        line = curve(pair.pre, pair.lns)
        if line:
            print(f"LNS − Pre-LN at each evaluation, mean over the seeds, nats, held-out / training text: {line}\n")
        ratio = [mean_sd([r.ratio_near(1.0)[1] for r in rs])[0] for rs in by.values()]
        dps = [group_value(g["summary"], L, n, "deep_half_delta_ppl") for n in NAMES]
        claims.append((L, ratio, pair, dps))
    print(f"### The paper's three claims in {g['name']}, beside width 64 ({width64})\n")
    for L, ratio, pair, dps in claims:
        b = beside(beside_dir, L)
        w64 = (lambda what: f"; width 64: {what(b)}") if b else (lambda what: "; width 64: not run at this depth")
        if None in ratio:
            c1 = "not measured"
        else:
            # both halves of the claim: Pre-LN's variance grows, and LNS's less
            c1 = ("holds" if ratio[0] > max(ratio[1], 1.0) else "does not hold") + \
                f": Pre-LN {ratio[0]:.3g}, LNS {ratio[1]:.3g}"
        print(f"{L} layers:\n")
        print(f"1. Pre-LN's out_var piles up with depth, LNS's less (block L / block 1): {c1}"
              + w64(lambda b: f"Pre-LN {fmt(b['ratio'][0])}, LNS {fmt(b['ratio'][1])}"))
        print(f"2. LNS reaches the lower held-out loss: {claim2(pair, margin)}"
              + w64(lambda b: f"Pre-LN − LNS {b['diff']}"))
        if None in dps:
            c3 = "not measured (no pruning: a run cut before its end, none finished, or analysis off)"
        else:
            c3 = ("holds" if dps[0] < dps[1] else "the opposite: LNS's deep blocks are the quieter") + \
                f": removing one of the deepest half costs Pre-LN {dps[0]:.3g}, LNS {dps[1]:.3g} ppl"
        print(f"3. Pre-LN's deep blocks matter less than LNS's: {c3}"
              + w64(lambda b: f"Pre-LN {fmt(b['dp'][0])}, LNS {fmt(b['dp'][1])}") + "\n")


def claim2(pair, margin):
    c = pair.c
    if c.n == 0:
        return "not measured"
    lower = "LNS" if c.mean > 0 else "Pre-LN"
    if c.p is None:
        told = f"n = 1: {lower} lower at the one seed, by {abs(c.mean):.4f} nats; no interval, no verdict"
    elif c.verdict == "LNS lower":
        told = "holds"
    elif c.verdict == "Pre-LN lower":
        told = "does not hold: Pre-LN lower"
    elif c.verdict.startswith("within noise"):
        told = f"neither: the two are equivalent within ±{margin:g} nats"
    elif "by less than" in c.verdict:
        told = f"{'holds' if lower == 'LNS' else 'does not hold'}, by less than ±{margin:g} nats"
    else:
        told = "unresolved: neither a difference nor an equivalence shown"
    return f"{told} ({pair.where()}; {c.n} pair{'s' if c.n != 1 else ''})"


if __name__ == "__main__":
    main()
