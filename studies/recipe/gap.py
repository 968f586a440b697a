#!/usr/bin/env python3
"""The recipe study's reading: LNS's gap to Pre-LN under each recipe, and
how far a recipe moves it from the reference's, beside the seed noise.

Each folder is one sweep's report (its cells.csv) of norm pre and lns at
seeds 1, 2, 3 on one recipe. Per folder: the gap at each seed, final eval
perplexity of LNS minus Pre-LN's (and the same in eval loss, nats), its
mean and a two-sided paired t-test against 0 (positive: LNS behind). Per
folder after the first: the change of the gap from the first folder's,
seed by seed (a difference of differences), its mean, 95 % interval and
t-test; "within seed noise" when p >= 0.05. Only finished runs count; a
seed with a diverged or unfinished run on either side is left out and
named. A recipe's seeds may come from several sweeps (seeds added later,
`SEEDS=3 OUT=...` in run.sh): its folders joined by "+" read as one, a
finished run standing in for a cancelled one of the same norm and seed.
The t-test is studies/depth/pair.py's.

usage: studies/recipe/gap.py REFERENCE_DIR[+DIR...] DIR[+DIR...]...
"""
import csv
import importlib.util
import math
import os
import statistics
import sys

spec = importlib.util.spec_from_file_location(
    "pair", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "depth", "pair.py"))
pair = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pair)


def gaps(folders):
    """{seed: (ppl gap, loss gap)} of LNS − Pre-LN, and the seeds left out,
    from the folders ("A+B") of one recipe."""
    runs, left = {}, set()
    for folder in folders.split("+"):
        with open(os.path.join(folder, "cells.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["norm"] not in ("pre", "lns"):
                continue
            had = runs.get((r["norm"], r["seed"]))
            if had and pair.finished(had) and pair.finished(r):
                sys.exit(f"gap: {folders} holds two finished {r['norm']} runs of seed {r['seed']}: "
                         "one recipe a folder")
            if not had or pair.finished(r):
                runs[(r["norm"], r["seed"])] = r
    out = {}
    for seed in sorted({s for _, s in runs}, key=pair.order):
        pre, lns = runs.get(("pre", seed)), runs.get(("lns", seed))
        if pre and lns and pair.finished(pre) and pair.finished(lns):
            out[seed] = (float(lns["eval_ppl"]) - float(pre["eval_ppl"]),
                         float(lns["eval_loss"]) - float(pre["eval_loss"]))
        else:
            left.add(seed)
    return out, left


def test(d):
    """mean, 95 % interval and two-sided p of the paired differences d"""
    n, mean = len(d), statistics.mean(d)
    se = statistics.stdev(d) / math.sqrt(n)
    if se == 0:
        return mean, mean, mean, 1.0 if mean == 0 else 0.0
    half = pair.t_critical(0.05, n - 1) * se
    return mean, mean - half, mean + half, pair.t_two_sided(mean / se, n - 1)


def line(name, d, left, what):
    skipped = f"; seeds {', '.join(sorted(left, key=pair.order))} left out" if left else ""
    if len(d) < 2:
        return f"{name}: {len(d)} seed(s), too few to test{skipped}"
    mean, lo, hi, p = test([v for _, v in d])
    reading = "within seed noise" if p >= 0.05 else what(mean)
    by = ", ".join(f"{s}: {v:+.3f}" for s, v in d)
    return f"{name}: {mean:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {p:.2g}, {reading} (by seed {by}){skipped}"


def main(folders):
    ref, ref_left = gaps(folders[0])
    for i, folder in enumerate(folders):
        g, left = (ref, ref_left) if i == 0 else gaps(folder)
        print(f"{folder}")
        for k, unit in ((0, "ppl"), (1, "nats")):
            d = [(s, v[k]) for s, v in g.items()]
            print("  " + line(f"LNS − Pre-LN ({unit})", d, left,
                              lambda m: "LNS behind" if m > 0 else "LNS ahead"))
            if i == 0:
                continue
            dd = [(s, v[k] - ref[s][k]) for s, v in g.items() if s in ref]
            gone = left | ref_left | ({s for s in g} ^ {s for s in ref})
            print("  " + line(f"its change from {folders[0]} ({unit})", dd, gone,
                              lambda m: "LNS gains on Pre-LN" if m < 0 else "LNS loses ground"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: studies/recipe/gap.py REFERENCE_DIR[+DIR...] DIR[+DIR...]...")
    main(sys.argv[1:])
