#!/usr/bin/env python3
"""Paired comparisons of two variants across report folders.

A report pairs only the cells of its own sweep. When a follow-up sweep runs
other variants on the same base and seeds (cpu-3200-rivals-24 beside
cpu-3200), this pairs their runs by seed from the folders' cells.csv, the
way the report does within one: finished runs only (a diverged or unfinished
replicate is left out and counted), the difference A − B of the final eval
perplexity per seed, and a two-sided paired t-test on those differences
(n − 1 degrees of freedom) with its 95 % interval. Cells pair when every
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
import math
import os
import statistics
import sys

def beta_cf(a, b, x):
    """The regularized incomplete beta's continued fraction (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 301):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def beta_reg(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * beta_cf(a, b, x) / a
    return 1 - front * beta_cf(b, a, 1 - x) / b


def t_two_sided(t, df):
    """P(|T| ≥ t) for Student's t with df degrees of freedom."""
    return 0.0 if math.isinf(t) else beta_reg(df / 2, 0.5, df / (df + t * t))


def t_critical(p, df):
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided(mid, df) > p else (lo, mid)
    return (lo + hi) / 2


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


def main(a, b, folders):
    (na, fa), (nb, fb) = side(a), side(b)
    keys, runs = load(folders)
    free = set(fa) | set(fb)
    cells_a, cells_b = pick(keys, runs, na, fa, free), pick(keys, runs, nb, fb, free)
    settings = sorted({s for s, _ in cells_a} | {s for s, _ in cells_b},
                      key=lambda s: [order(k.split("=", 1)[1]) for k in s])
    out = 0
    for setting in settings:
        seeds = sorted({seed for s, seed in list(cells_a) + list(cells_b) if s == setting}, key=order)
        diffs, left = [], []
        for seed in seeds:
            ra, rb = cells_a.get((setting, seed)), cells_b.get((setting, seed))
            if ra is None or rb is None:
                continue
            if finished(ra) and finished(rb):
                diffs.append((seed, float(ra["eval_ppl"]) - float(rb["eval_ppl"])))
            else:
                left.append(seed)
        if not diffs and not left:
            continue
        out += 1
        head = f"{', '.join(setting)}: {a} − {b}"
        skipped = f"; seeds {', '.join(left)} left out (not finished, or diverged)" if left else ""
        if len(diffs) < 2:
            print(f"{head}: {len(diffs)} pair(s), too few to test{skipped}")
            continue
        d = [v for _, v in diffs]
        n, mean, sd = len(d), statistics.mean(d), statistics.stdev(d)
        se = sd / math.sqrt(n)
        if se == 0:
            p, lo, hi = (1.0 if mean == 0 else 0.0), mean, mean
        else:
            p = t_two_sided(mean / se, n - 1)
            half = t_critical(0.05, n - 1) * se
            lo, hi = mean - half, mean + half
        reading = "within seed noise" if p >= 0.05 else (f"{a} lower" if mean < 0 else f"{b} lower")
        per_seed = ", ".join(f"{s}: {v:+.3f}" for s, v in diffs)
        print(f"{head}: {mean:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {p:.2g}, {n} pairs, {reading} "
              f"(by seed {per_seed}){skipped}")
    if not out:
        sys.exit(f"pair: no cells of {a} and {b} at equal settings and seeds in {', '.join(folders)}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: studies/depth/pair.py A B DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
