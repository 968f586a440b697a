#!/usr/bin/env python3
"""One line per kernel of an Nsight Compute details page (ncu --import R
--csv --page details): launches, time, share, and the section metrics that
say what bounds it, averaged over its launches weighted by their duration.
Kernels are named by their function, without namespaces, templates' values
kept (fa_fwd_kernel<64>), so that one kernel's launches add up.
usage: ncu_table.py DETAILS.csv"""
import csv
import re
import sys

TIME_UNITS = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3,
              "msecond": 1e3, "s": 1e6, "second": 1e6}
# (section contains, metric name) -> column; the same name can be in two sections
WANTED = {
    ("Speed Of Light", "DRAM Throughput"): "dram%",
    ("Speed Of Light", "Compute (SM) Throughput"): "sm%",
    ("Memory Workload Analysis", "L2 Hit Rate"): "l2hit%",
    ("Occupancy", "Achieved Occupancy"): "occ%",
    ("Launch Statistics", "Registers Per Thread"): "regs",
}


def number(text):
    return float(text.replace(",", ""))


def short_name(name):
    """'void (anonymous namespace)::fa_fwd_kernel<64>(bf16 *, ...)' -> 'fa_fwd_kernel<64>'"""
    name = name.replace("(anonymous namespace)::", "")
    depth = 0
    for i, ch in enumerate(name):  # the argument list: the first '(' outside <>
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            name = name[:i]
            break
    name = re.sub(r"^(void|static)\s+", "", name.strip())
    base, sep, rest = name.partition("<")
    return base.split("::")[-1] + sep + rest


def read(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own ==PROF== lines aside
    rows = list(csv.reader(lines))
    if not rows or "Metric Name" not in rows[0]:
        sys.exit(f"ncu_table: {path}: no details page header (Metric Name) found")
    h = {k: i for i, k in enumerate(rows[0])}
    for need in ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value"):
        if need not in h:
            sys.exit(f"ncu_table: {path}: no column {need!r} in the header")
    launches = {}
    for r in rows[1:]:
        if len(r) < len(rows[0]):
            continue
        k = launches.setdefault(r[h["ID"]], {"name": short_name(r[h["Kernel Name"]])})
        section, metric, unit = r[h["Section Name"]], r[h["Metric Name"]], r[h["Metric Unit"]]
        try:
            value = number(r[h["Metric Value"]])
        except ValueError:
            continue
        if metric == "Duration" and "Speed Of Light" in section and unit in TIME_UNITS:
            k["us"] = value * TIME_UNITS[unit]
        for (sec, name), col in WANTED.items():
            if metric == name and sec in section:
                k[col] = value
    return [k for k in launches.values() if "us" in k]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    launches = read(sys.argv[1])
    if not launches:
        sys.exit(f"ncu_table: {sys.argv[1]}: no kernel with a duration")
    kernels = {}
    for k in launches:
        a = kernels.setdefault(k["name"], {"n": 0, "us": 0.0, "w": {}})
        a["n"] += 1
        a["us"] += k["us"]
        for col in WANTED.values():
            if col in k:
                s = a["w"].setdefault(col, [0.0, 0.0])
                s[0] += k[col] * k["us"]
                s[1] += k["us"]
    total = sum(a["us"] for a in kernels.values())
    cols = list(WANTED.values())
    print(f"{'kernel':<44} {'launches':>8} {'ms':>8} {'share':>6} " +
          " ".join(f"{c:>7}" for c in cols))
    for name, a in sorted(kernels.items(), key=lambda kv: -kv[1]["us"]):
        vals = []
        for c in cols:
            s = a["w"].get(c)
            vals.append(f"{s[0] / s[1]:7.1f}" if s and s[1] > 0 else f"{'-':>7}")
        print(f"{name[:44]:<44} {a['n']:>8} {a['us'] / 1e3:8.3f} {100 * a['us'] / total:5.1f}% " +
              " ".join(vals))
    print(f"{'total':<44} {len(launches):>8} {total / 1e3:8.3f}")


if __name__ == "__main__":
    main()
