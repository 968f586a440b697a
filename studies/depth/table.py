#!/usr/bin/env python3
"""The depth study's reading as its README tables it, from a report
folder that `cod report` wrote (depth_summary.csv, comparisons.csv,
table1.csv): for each depth, Pre-LN's and LNS's eval perplexity (mean and
deviation over the seeds), their paired difference at equal seeds with its
95 % interval and p, how much each group's perplexity still moved over the
last tenth of its training, the ratio of the last block's out_var to the
first's, and the mean perplexity drop when one of the deepest half of the
blocks is removed ("—" for a variant the sweep did not run at that depth);
then the other variants' perplexities by depth. The
numbers are the report's; this only lays them out. Several folders (the
sweeps of one setting at different depths, such as cpu-3200-shallow,
cpu-3200 and cpu-3200-deep) make one table, each depth from the first
folder that has it.

usage: studies/depth/table.py DIR...    (e.g. studies/depth/gpu)
"""
import csv
import os
import sys


def rows(folder, name):
    with open(os.path.join(folder, name), newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    return float(v) if v not in (None, "") else None


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}g}"


def ppl(row):
    mean, sd, n = num(row["ppl_mean"]), num(row["ppl_sd"]), row["n"]
    if mean is None:
        return "—"
    return f"{mean:.2f} ± {sd:.2f} (n={n})" if sd is not None else f"{mean:.2f} (n={n})"


def paired(comparisons, pre, lns):
    """Pre-LN − LNS at equal seeds, whichever way the report ordered them."""
    for c in comparisons:
        ab = (c["a"], c["b"])
        if ab not in ((pre, lns), (lns, pre)) or c["mean_diff"] == "":
            continue
        sign = 1 if ab == (pre, lns) else -1
        d = sign * float(c["mean_diff"])
        lo, hi = sorted(sign * float(c[k]) for k in ("ci95_lo", "ci95_hi"))
        noise = " (within seed noise)" if c["within_noise"] == "true" else ""
        return f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}], p = {float(c['p']):.2g}{noise}"
    return "—"


def tail(row):
    v = num(row.get("ppl_change_last_tenth"))
    return "—" if v is None else f"{100 * v:+.1f} %"


def settings(summary):
    """The summary's rows by setting: the grid's other keys than the depth
    and the norm (a follow-up may vary the steps or the lr)."""
    keys = list(summary[0].keys()) if summary else []
    grid = keys[1:keys.index("layers")] if "layers" in keys else []
    other = [k for k in grid if k not in ("norm", "model.n_layers")]
    out = {}
    for r in summary:
        out.setdefault(tuple(f"{k}={r[k]}" for k in other), []).append(r)
    return out


class Report:
    """One folder's comparisons and cells, which its summary rows' groups name."""

    def __init__(self, folder):
        self.comparisons = rows(folder, "comparisons.csv")
        self.cells = {r["group"]: r for r in rows(folder, "table1.csv")}
        self.summary = rows(folder, "depth_summary.csv")


def main(folders):
    by_setting = {}
    for folder in folders:
        report = Report(folder)
        for setting, summary in settings(report.summary).items():
            merged = by_setting.setdefault(setting, {})
            for r in summary:
                merged.setdefault((int(r["layers"]), r["norm"]), (r, report))
    for setting, by in by_setting.items():
        if len(by_setting) > 1:
            print(f"\n{', '.join(setting)}:\n")
        table(by)


def table(by):
    """by: (depth, norm) → (summary row, its report)"""
    depths = sorted({L for L, _ in by})
    print("| L | Pre-LN eval ppl | LNS | Pre-LN − LNS, paired [95 % CI] | last tenth, Pre-LN | LNS "
          "| out_var block L / block 1, Pre-LN | LNS | mean ΔP (ppl) of the deepest half, Pre-LN | LNS |")
    print("|---" * 10 + "|")
    for L in depths:
        pre, lns = by.get((L, "pre")), by.get((L, "lns"))
        if pre is None and lns is None:
            continue
        diff = (paired(pre[1].comparisons, pre[0]["group"], lns[0]["group"])
                if pre and lns and pre[1] is lns[1] else "—")
        # a depth one of the two did not run (a follow-up of LNS alone) shows "—" for it
        both = [r[0] if r else None for r in (pre, lns)]

        def cols(f):
            return [f(r) if r else "—" for r in both]
        ppls, tails = cols(ppl), cols(tail)
        ratios = cols(lambda r: fmt(num(r["out_var_ratio_last_first"])))
        pruned = cols(lambda r: fmt(num(r["deep_half_delta_ppl"])))
        print(f"| {L} | {ppls[0]} | {ppls[1]} | {diff} | {tails[0]} | {tails[1]} "
              f"| {ratios[0]} | {ratios[1]} | {pruned[0]} | {pruned[1]} |")
    others = sorted({norm for _, norm in by} - {"pre", "lns"})
    for norm in others:
        parts = []
        for L in depths:
            if (L, norm) not in by:
                continue
            r, report = by[(L, norm)]
            c = report.cells.get(r["group"], {})
            lost = [f"{c[k]} {k}" for k in ("diverged", "unfinished", "failed") if c.get(k, "0") not in ("", "0")]
            parts.append(f"L = {L}: {ppl(r)}" + (f", {', '.join(lost)}" if lost else "")
                         + f", out_var ratio {fmt(num(r['out_var_ratio_last_first']))}")
        print(f"\n{norm}: " + "; ".join(parts))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: studies/depth/table.py DIR...")
    main(sys.argv[1:])
