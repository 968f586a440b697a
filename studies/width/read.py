#!/usr/bin/env python3
"""The width study's reading, from the folders studies/width/run.sh
writes (one a recipe: cod report's files, base.json, plan.txt and every
run's own series in runs/ID.csv), set beside the depth study's width-64
run of the same depths (BESIDE, default studies/depth/gpu: the same GPU
code, three seeds).

Per recipe and depth, per arm (Pre-LN, LNS): the runs and how far each
trained (a run cut at the deadline says the update it reached of those
planned); the final eval perplexity, mean ± sd over the finished seeds
(a cut run's last evaluation beside, with its update); the ratio of the
last block's layer/out_var to the first block's at a quarter, half and
three quarters of the planned training and at the last statistics point
the run reached (— for a point past a cut); the mean performance drop ΔP (perplexity, and loss) over the
deepest half of the blocks; the mean angular distance (span 1) of the
first and of the deepest half. Then Pre-LN − LNS at equal seeds: the
final perplexity's difference (and the loss's, in nats) with its 95 %
interval and p from two seeds on, or, where a pair was cut, at the last
evaluation both runs reached. Last, the paper's three claims, each with
its verdict here and the width-64 study's.

A FOLDER may be several joined by +, the folders of one recipe that
calls of other seeds wrote (gpu-paper+gpu-paper-seeds2): their runs read
as one sweep's, the pruning and angles averaged with each folder's
number of runs as its weight. They must share the schedule (base.json's
train section), and a seed of an arm and depth may be in one of them only.

usage: read.py [--beside DIR] FOLDER[+FOLDER...]...
"""
import argparse
import csv
import importlib.util
import json
import os
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
        self.eval, self.out_var, self.step = {}, {}, 0
        for r in rows(os.path.join(folder, "runs"), f"{cell['experiment']}.csv"):
            step, v = int(r["step"]), num(r["value"])
            if r["name"] == "eval/ppl" and v is not None:
                self.eval[step] = v
            elif r["name"] == "eval/loss" and v is not None:
                self.eval[("loss", step)] = v
            elif r["name"] == "layer/out_var" and v is not None:
                self.out_var.setdefault(step, {})[int(r["layer"])] = v
            if r["name"] == "train/loss":
                self.step = max(self.step, step)
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
        steps = [s for s in self.eval if isinstance(s, int)]
        return (max(steps), self.eval[max(steps)]) if steps else (None, None)


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


def test(d):
    if len(d) < 2:
        return None
    return gap.test(d)


def paired(pre, lns):
    """Pre-LN − LNS at equal seeds: final, or at the last evaluation both reached."""
    out = []
    for seed in sorted({r.seed for r in pre} & {r.seed for r in lns}, key=gap.pair.order):
        a = next(r for r in pre if r.seed == seed)
        b = next(r for r in lns if r.seed == seed)
        common = sorted(s for s in a.eval if isinstance(s, int) and s in b.eval)
        if not common:
            continue
        s = common[-1]
        la, lb = a.eval.get(("loss", s)), b.eval.get(("loss", s))
        out.append((seed, s, a.finished and b.finished, a.eval[s] - b.eval[s],
                    None if la is None or lb is None else la - lb))
    return out


def describe_pairs(pairs):
    if not pairs:
        return "no pair of runs to compare", None
    final = all(f for _, _, f, _, _ in pairs)
    where = "final" if final else "at the last evaluation both reached (update " + \
        ", ".join(f"{s} for seed {seed}" for seed, s, _, _, _ in pairs) + ")"
    d = [x for _, _, _, x, _ in pairs]
    dl = [x for _, _, _, _, x in pairs if x is not None]
    t = test(d)
    if t is None:
        loss = f", {dl[0]:+.4f} nats" if dl else ""
        return f"{d[0]:+.3f}{loss} ({where}; one seed: no interval)", (d[0], None)
    mean, lo, hi, p = t
    tl = test(dl) if len(dl) == len(d) else None
    loss = f"; in nats {tl[0]:+.4f} [{tl[1]:+.4f}, {tl[2]:+.4f}]" if tl else ""
    noise = " (within seed noise)" if p >= 0.05 else ""
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {p:.2g}{noise}{loss} ({where}, {len(d)} seeds)", (mean, p)


def beside(folder, L):
    """The width-64 study's numbers at depth L: (pre ppl, lns ppl, paired text, ratios, ΔPs)."""
    summary = rows(folder, "depth_summary.csv")
    if not summary:
        return None
    by = {(int(r["layers"]), r["norm"]): r for r in summary}
    pre, lns = by.get((L, "pre")), by.get((L, "lns"))
    if not pre or not lns:
        return None
    diff = table.paired(rows(folder, "comparisons.csv"), pre["group"], lns["group"])
    return {"ppl": (num(pre["ppl_mean"]), num(lns["ppl_mean"])), "diff": diff,
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
    return {"base": bases[0], "planned": planned, "plan": "\n".join(plans), "runs": runs,
            "summary": [rows(p, "depth_summary.csv") for p in parts],
            "angular": [rows(p, "angular.csv") for p in parts]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--beside", default=os.path.join(here, "..", "depth", "gpu"))
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    width64 = os.path.relpath(os.path.normpath(a.beside))
    for joined in a.folders:
        got = pooled(joined)
        if isinstance(got, str):
            sys.exit(f"read.py: {got}")
        folder = joined.replace("+", " + ")
        base, planned, plan, runs = got["base"], got["planned"], got["plan"], got["runs"]
        summary, angular = got["summary"], got["angular"]
        model = base["model"]
        print(f"## {folder}\n")
        print(f"{plan}\n" if plan else "", end="")
        # a preset's width is the trainer's to know; the spec names it only when it overrides it
        width = f" (dim {model['dim']})" if "dim" in model else ""
        print(f"\nmodel {model.get('preset', 'custom')}{width}, "
              f"precision {base['train'].get('precision', 'mixed')}, packing "
              f"{base['data'].get('packing', 'stream')}, embed std {model.get('embed_std', 0.02)}, "
              f"lr {base['train']['lr']}, warmup {base['train']['warmup']}, {planned} updates of "
              f"{base['train']['batch_seqs']} × {base['train']['seq_len']}\n")
        print("| L | arm | runs | trained | eval ppl | out_var block L / block 1 at ¼, ½, ¾, end "
              "| mean ΔP of the deepest half, ppl (loss) | angular distance, first half / deepest half |")
        print("|---" * 8 + "|")
        verdicts = []
        for L in sorted({r.L for r in runs}):
            arms = {n: [r for r in runs if r.L == L and r.norm == n] for n in NAMES}
            for n, rs in arms.items():
                if not rs:
                    continue
                ratios = []
                for f in (0.25, 0.5, 0.75, 1.0):
                    vals = [r.ratio_near(f) for r in rs]
                    ratios.append(fmt(mean_sd([v for _, v in vals])[0]))
                final = pm([float(r.cell["eval_ppl"]) for r in rs if r.finished])
                cut = [(r.seed,) + r.last_eval() for r in rs if not r.finished and r.last_eval()[0] is not None]
                if cut:
                    final += "; " + ", ".join(f"seed {seed} {v:.2f} at update {s}" for seed, s, v in cut)
                dp = group_value(summary, L, n, "deep_half_delta_ppl")
                dl = group_value(summary, L, n, "deep_half_delta_loss")
                ang = angular_halves(angular, L, n)
                print(f"| {L} | {NAMES[n]} | {len(rs)} | {'; '.join(sorted({r.trained() for r in rs}))} "
                      f"| {final} | {', '.join(ratios)} | {fmt(dp)} ({fmt(dl)}) "
                      f"| {'—' if ang is None else f'{ang[0]:.3f} / {ang[1]:.3f}'} |")
            pre, lns = arms["pre"], arms["lns"]
            text, d = describe_pairs(paired(pre, lns))
            print(f"\nL = {L}, Pre-LN − LNS at equal seeds, eval perplexity: {text}\n")
            ratio = [mean_sd([r.ratio_near(1.0)[1] for r in rs])[0] for rs in (pre, lns)]
            dps = [group_value(summary, L, n, "deep_half_delta_ppl") for n in ("pre", "lns")]
            verdicts.append((L, ratio, d, dps, text))
        print(f"### The paper's three claims in {folder}, beside width 64 ({width64})\n")
        for L, ratio, d, dps, text in verdicts:
            b = beside(a.beside, L)
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
            if d is None:
                c2 = "not measured"
            else:
                mean, p = d
                lower = "LNS" if mean > 0 else "Pre-LN"
                if p is None:
                    c2 = ("holds" if mean > 0 else "does not hold") + f" at one seed: {lower} lower"
                elif p >= 0.05:
                    c2 = "not shown: within seed noise"
                else:
                    c2 = ("holds" if mean > 0 else "does not hold") + f": {lower} lower beyond seed noise"
                c2 += f" (Pre-LN − LNS {text})"
            print(f"2. LNS reaches the lower perplexity: {c2}"
                  + w64(lambda b: f"Pre-LN − LNS {b['diff']}"))
            if None in dps:
                c3 = "not measured (no pruning: a run cut before its end, or none finished)"
            else:
                c3 = ("holds" if dps[0] < dps[1] else "the opposite: LNS's deep blocks are the quieter") + \
                    f": removing one of the deepest half costs Pre-LN {dps[0]:.3g}, LNS {dps[1]:.3g} ppl"
            print(f"3. Pre-LN's deep blocks matter less than LNS's: {c3}"
                  + w64(lambda b: f"Pre-LN {fmt(b['dp'][0])}, LNS {fmt(b['dp'][1])}") + "\n")


if __name__ == "__main__":
    main()
