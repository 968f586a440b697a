#!/usr/bin/env python3
"""The depth study's reading as its README tables it, from a report
folder that `cod report` wrote (depth_summary.csv, cells.csv,
table1.csv): for each depth, Pre-LN's and LNS's eval perplexity (mean and
deviation over the seeds), their paired difference at equal seeds (the
perplexity's mean, then the loss's in nats with its 95 % interval, p and
verdict by studies/verdict.py's rule, Holm-corrected over every depth and
setting of the call; from cells.csv, not the report's uncorrected
comparisons.csv), how much each group's perplexity still moved over the
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
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "verdict", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verdict.py"))
verdict = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(verdict)


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


def pairs(cells, pre, lns):
    """Pre-LN − LNS at equal seeds from cells.csv, finished runs only:
    [(seed, ppl difference, loss difference)]."""
    by = {}
    for c in cells:
        if c["group"] in (pre, lns) and c["state"] == "succeeded" and c["diverged"] != "true" \
                and c["eval_loss"] != "":
            by[(c["group"], c["seed"])] = c
    out = []
    for (g, seed), a in sorted(by.items()):
        b = by.get((lns, seed))
        if g == pre and b:
            out.append((seed, float(a["eval_ppl"]) - float(b["eval_ppl"]),
                        float(a["eval_loss"]) - float(b["eval_loss"])))
    return out


def comparison(cells, pre, lns, label=""):
    """Pre-LN − LNS in nats, for verdict.judge, its pairs beside it"""
    d = pairs(cells, pre, lns)
    c = verdict.Comparison(label, [x for _, _, x in d], "Pre-LN", "LNS")
    c.ppl = [x for _, x, _ in d]
    return c


def paired(c):
    """a judged comparison as a cell: the perplexity's mean difference,
    then the nats' interval and verdict"""
    if c.n == 0:
        return "—"
    ppl = sum(c.ppl) / len(c.ppl)
    if c.p is None:
        return f"{ppl:+.2f} ppl; {c.mean:+.3f} nats (n = 1)"
    holm = f", Holm {c.p_adj:.2g}" if c.family > 1 else ""
    return f"{ppl:+.2f} ppl; {c.mean:+.3f} nats [{c.lo:+.3f}, {c.hi:+.3f}], p = {c.p:.2g}{holm}: {c.verdict}"


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
        self.cells = {r["group"]: r for r in rows(folder, "table1.csv")}
        self.runs = rows(folder, "cells.csv")
        self.summary = rows(folder, "depth_summary.csv")


def main(folders):
    by_setting = {}
    for folder in folders:
        report = Report(folder)
        for setting, summary in settings(report.summary).items():
            merged = by_setting.setdefault(setting, {})
            for r in summary:
                merged.setdefault((int(r["layers"]), r["norm"]), (r, report))
    # every Pre-LN − LNS of the call's tables is one family: Holm over them
    compared = {}
    for setting, by in by_setting.items():
        for L in {L for L, _ in by}:
            pre, lns = by.get((L, "pre")), by.get((L, "lns"))
            if pre and lns and pre[1] is lns[1]:
                compared[(setting, L)] = comparison(pre[1].runs, pre[0]["group"], lns[0]["group"])
    verdict.judge(list(compared.values()))
    for setting, by in by_setting.items():
        if len(by_setting) > 1:
            print(f"\n{', '.join(setting)}:\n")
        table(by, {L: c for (s, L), c in compared.items() if s == setting})
    if compared:
        print(f"\nPre-LN − LNS: the final perplexity's mean difference, then the loss's in nats with its "
              f"95 % interval, p and verdict (studies/verdict.py: TOST against ±{verdict.MARGIN:g} nats; "
              f"Holm over the {len(compared)} comparisons above)")


def table(by, compared):
    """by: (depth, norm) → (summary row, its report); compared: depth → its judged comparison"""
    depths = sorted({L for L, _ in by})
    print("| L | Pre-LN eval ppl | LNS | Pre-LN − LNS, paired: ppl; nats [95 % CI], verdict | last tenth, Pre-LN | LNS "
          "| out_var block L / block 1, Pre-LN | LNS | mean ΔP (ppl) of the deepest half, Pre-LN | LNS |")
    print("|---" * 10 + "|")
    for L in depths:
        pre, lns = by.get((L, "pre")), by.get((L, "lns"))
        if pre is None and lns is None:
            continue
        diff = paired(compared[L]) if L in compared else "—"
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
