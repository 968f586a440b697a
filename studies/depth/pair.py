#!/usr/bin/env python3
"""Paired comparisons of two variants across report folders.

A report pairs only the cells of its own sweep. When a follow-up sweep runs
other variants on the same base and seeds (cpu-3200-rivals-24 beside
cpu-3200), this pairs their runs by seed from the folders' cells.csv, the
way the report does within one: finished runs only (a diverged or unfinished
replicate is left out and counted), the difference A − B of the final eval
perplexity per seed, and a two-sided paired t-test on those differences
(n − 1 degrees of freedom) with its 95 % interval; then the same in nats
of eval loss with its verdict by studies/verdict.py's rule (a difference
shown, within noise by TOST against ±0.01 nats, unresolved, or n = 1),
Holm-corrected over the settings of one call. Cells pair when every
grid key but the norm and the seed is equal (a key one folder's grid lacks
counts as its base value, and pairs only with the same lack).

A side may also fix keys, NORM:KEY=VALUE[,KEY=VALUE]: its cells are those
runs of NORM with those values (numbers compared as numbers; "base" is a
folder whose grid left the key alone), and the keys fixed on either side
are left out of the pairing. So each variant at its own learning rate:
lns:train.lr=6e-3 pre:train.lr=base pairs LNS at 6e-3 with Pre-LN at the
base's rate, seed by seed, at every depth both have.

usage: studies/depth/pair.py A B DIR...    (e.g. mixln pre studies/depth/cpu-3200 studies/depth/cpu-3200-rivals-24)
"""
import csv
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("verdict", os.path.join(here, "..", "verdict.py"))
verdict = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(verdict)


def load(folders):
    """Every run as (its grid keys' values, its row); the keys are every grid
    key of any folder, the norm and seed aside. A folder whose grid lacks a
    key ran it at its base's value, which its cells.csv does not say: "base",
    so that its cells pair only with those of folders that left the key
    alone too."""
    tables = []
    for folder in folders:
        with open(os.path.join(folder, "cells.csv"), newline="") as f:
            tables.append(list(csv.DictReader(f)))
    # cells.csv: experiment, group, the grid's keys, then seed, state, ...
    keys = sorted({k for t in tables for r in t[:1] for k in list(r)[2:list(r).index("seed")]
                   if k != "norm"})
    return keys, [({k: r.get(k, "base") for k in keys}, r) for t in tables for r in t]


def side(arg):
    """NORM or NORM:KEY=VALUE,...: the norm and the keys it fixes."""
    norm, _, rest = arg.partition(":")
    if not norm:
        sys.exit(f"pair: '{arg}' names no norm (a side is NORM or NORM:KEY=VALUE,...)")
    fixed = {}
    for item in rest.split(",") if rest else []:
        k, eq, v = item.partition("=")
        if not (k and eq and v):
            sys.exit(f"pair: '{item}' in '{arg}' is not KEY=VALUE (a side is NORM or NORM:KEY=VALUE,...)")
        fixed[k] = v
    return norm, fixed


def same(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def pick(keys, runs, norm, fixed, free):
    """One side's runs by (setting, seed), the setting its keys but the free
    ones; the first folder's run where two have the same."""
    out = {}
    for values, r in runs:
        if r["norm"] == norm and all(same(values.get(k, "base"), v) for k, v in fixed.items()):
            setting = tuple(f"{k}={values[k]}" for k in keys if k not in free)
            out.setdefault((setting, r["seed"]), r)
    return out


def order(value):
    """Numbers by value (6 before 12), other values after them by name."""
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def finished(r):
    return r["state"] == "succeeded" and r["diverged"] != "true" and r["eval_ppl"] != ""


def main(a, b, folders, margin=verdict.MARGIN):
    (na, fa), (nb, fb) = side(a), side(b)
    keys, runs = load(folders)
    free = set(fa) | set(fb)
    cells_a, cells_b = pick(keys, runs, na, fa, free), pick(keys, runs, nb, fb, free)
    settings = sorted({s for s, _ in cells_a} | {s for s, _ in cells_b},
                      key=lambda s: [order(k.split("=", 1)[1]) for k in s])
    lines = []
    for setting in settings:
        seeds = sorted({seed for s, seed in list(cells_a) + list(cells_b) if s == setting}, key=order)
        diffs, left = [], []
        for seed in seeds:
            ra, rb = cells_a.get((setting, seed)), cells_b.get((setting, seed))
            if ra is None or rb is None:
                continue
            if finished(ra) and finished(rb):
                diffs.append((seed, float(ra["eval_ppl"]) - float(rb["eval_ppl"]),
                              float(ra["eval_loss"]) - float(rb["eval_loss"])))
            else:
                left.append(seed)
        if diffs or left:
            lines.append((setting, diffs, left,
                          verdict.Comparison(", ".join(setting), [x for _, _, x in diffs], a, b)))
    if not lines:
        sys.exit(f"pair: no cells of {a} and {b} at equal settings and seeds in {', '.join(folders)}")
    # the settings of one call are one family: Holm over them
    verdict.judge([c for *_, c in lines], margin)
    for setting, diffs, left, nats in lines:
        head = f"{', '.join(setting)}: {a} − {b}"
        skipped = f"; seeds {', '.join(left)} left out (not finished, or diverged)" if left else ""
        if len(diffs) < 2:
            one = f" ({diffs[0][1]:+.3f} ppl, {diffs[0][2]:+.4f} nats at seed {diffs[0][0]})" if diffs else ""
            print(f"{head}: {len(diffs)} pair(s), too few to test{one}{skipped}")
            continue
        ppl = verdict.Comparison("ppl", [v for _, v, _ in diffs])
        ppl.test(margin)
        per_seed = ", ".join(f"{s}: {v:+.3f}" for s, v, _ in diffs)
        print(f"{head}: {ppl.mean:+.3f} [{ppl.lo:+.3f}, {ppl.hi:+.3f}], p = {ppl.p:.2g}, {len(diffs)} pairs "
              f"(ppl, by seed {per_seed}); {verdict.describe(nats, margin)}{skipped}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: studies/depth/pair.py A B DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
