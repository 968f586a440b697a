#!/usr/bin/env python3
"""bench/RESULTS.md's table of the GPU trainer's speed against PyTorch,
made from the results files in bench/gpu/results/ (one per measurement,
written by bench/gpu/results.py): for each device, its newest file (by the
date in it, then by name). What a file leaves null shows as "—".

  results_table.py           prints the Markdown
  results_table.py --write   puts it into bench/RESULTS.md between its two
                             "results_table.py" comment lines
  results_table.py --check   exits 1 where bench/RESULTS.md's table is not
                             what the files make (make test runs it)
  --dir DIR, --md FILE       other files than bench/gpu/results, bench/RESULTS.md

A file that is not JSON, or lacks what the table needs, is an error naming
the file and the field (exit 2). Python 3 alone.
"""
import argparse
import glob
import json
import os
import sys

BEGIN = "<!-- results_table.py: begin; made from bench/gpu/results/*.json, edit those and run it with --write -->"
END = "<!-- results_table.py: end -->"
TARGET_RATIO = 1.2  # cod / torch.compile (issue 40): shown in bold where met


class Bad(Exception):
    pass


def need(doc, path, *keys):
    """doc[keys[0]][keys[1]]…, present (it may be null)"""
    v = doc
    for i, k in enumerate(keys):
        if not isinstance(v, dict) or k not in v:
            raise Bad(f"{path}: no field {'.'.join(keys[:i + 1])}")
        v = v[k]
    return v


def load(path):
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        raise Bad(f"{path}: not a results file: {e}")
    if need(doc, path, "schema") != 1:
        raise Bad(f"{path}: schema {doc['schema']!r}, this script reads 1")
    for k in ("date", "commit", "peak_tflops", "command"):
        need(doc, path, k)
    if not isinstance(need(doc, path, "device", "name"), (str, type(None))):
        raise Bad(f"{path}: device.name must be the device's name, or null")
    sizes = need(doc, path, "sizes")
    if not isinstance(sizes, list):
        raise Bad(f"{path}: sizes must be a list")
    for i, s in enumerate(sizes):
        for side, keys in (("cod", ("tokens_per_s", "mfu", "peak_gib", "attention")),
                           ("torch_compile", ("tokens_per_s", "mfu", "peak_gib", "sdpa_backend"))):
            for k in keys:
                need(s, f"{path}: sizes[{i}]", side, k)
        need(s, f"{path}: sizes[{i}]", "model")
    return doc


def newest_per_device(files):
    by_device = {}
    for path in sorted(files):
        doc = load(path)
        key = (doc["date"], os.path.basename(path))
        name = doc["device"]["name"] or "an unknown device"
        if name not in by_device or key > by_device[name][0]:
            by_device[name] = (key, path, doc)
    return [(path, doc) for _, (_, path, doc) in sorted(by_device.items())]


def dash(v, fmt="{}"):
    return "—" if v is None else fmt.format(v)


def pct(v):
    return "—" if v is None else f"{100 * v:.1f} %"


def device_line(path, doc):
    d, s = doc["device"], doc.get("software") or {}
    mem = f" ({d['memory_mib']:,} MiB)" if d.get("memory_mib") else ""
    commit = (doc["commit"] or "—")[:7] + (" with uncommitted changes" if doc.get("commit_dirty") else "")
    settings = ", ".join(f"`{k}={v}`" for k, v in (doc.get("settings") or {}).items())
    return (f"**{d['name'] or 'an unknown device'}**{mem}, driver {dash(d.get('driver'))}, CUDA {dash(d.get('cuda'))}, "
            f"cuDNN {dash(s.get('cudnn'))}, PyTorch {dash(s.get('torch'))} (its cuDNN {dash(s.get('torch_cudnn'))}): "
            f"code at {commit}, {doc['date']}, `{doc['command']}`{', with ' + settings if settings else ''}; "
            f"MFU against {doc['peak_tflops']} TFLOP/s. From `{path}`.")


def speed_table(doc):
    rows = ["| model | cod tokens/s | MFU | peak GiB | attention | torch.compile tokens/s | MFU | peak GiB "
            "| SDPA | cod / compile |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    missing = []
    for s in doc["sizes"]:
        c, t = s["cod"], s["torch_compile"]
        ratio = "—"
        if c["tokens_per_s"] and t["tokens_per_s"]:
            r = c["tokens_per_s"] / t["tokens_per_s"]
            ratio = f"**{r:.2f}×**" if r >= TARGET_RATIO else f"{r:.2f}×"
        rows.append(f"| {s['model']} | {dash(c['tokens_per_s'], '{:,}')} | {pct(c['mfu'])} "
                    f"| {dash(c['peak_gib'], '{:.2f}')} | {dash(c['attention'])} "
                    f"| {dash(t['tokens_per_s'], '{:,}')} | {pct(t['mfu'])} "
                    f"| {dash(t['peak_gib'], '{:.2f}')} | {dash(t['sdpa_backend'])} | {ratio} |")
        for side, name in ((c, "cod"), (t, "torch.compile")):
            if side["tokens_per_s"] is None and side.get("note"):
                missing.append(f"{s['model']} {name}: {side['note']}")
    return rows, missing


def attention_table(doc):
    shapes = (doc.get("attention") or {}).get("shapes") or []
    if not shapes:
        return []
    rows = ["| shape (B×H×T×D) | attention | forward ms | TFLOP/s | backward ms | TFLOP/s | fwd+bwd TFLOP/s |",
            "|---|---|---|---|---|---|---|"]
    for s in shapes:
        where = f"{s['model']} {s['batch']}×{s['heads']}×{s['seq']}×{s['head']}"
        for impl, r in s["results"].items():
            if "unavailable" in r:
                rows.append(f"| {where} | {impl} | unavailable: {r['unavailable']} | | | | |")
            else:
                rows.append(f"| {where} | {impl} | {dash(r.get('fwd_ms'), '{:.3f}')} "
                            f"| {dash(r.get('fwd_tflops'), '{:.3g}')} | {dash(r.get('bwd_ms'), '{:.3f}')} "
                            f"| {dash(r.get('bwd_tflops'), '{:.3g}')} | {dash(r.get('fwdbwd_tflops'), '{:.3g}')} |")
            where = ""
        if s.get("torch_default"):
            rows.append(f"| | PyTorch's own choice: {s['torch_default']} | | | | | |")
    rows.append("")
    rows += [f"{impl} at {s['model']}: {r['source']}." for s in shapes for impl, r in s["results"].items()
             if r.get("source")]
    if doc["attention"].get("note"):
        rows.append(doc["attention"]["note"][0].upper() + doc["attention"]["note"][1:] + ".")
    return rows


def changes_table(doc):
    """each change measured on and off, where the file has them"""
    changes = doc.get("changes") or []
    if not changes:
        return []
    presets = [s["model"] for s in doc["sizes"] if any(s["model"] in c["sizes"] for c in changes)]
    rows = ["| change | the run's settings | " + " | ".join(presets) + " |",
            "|---|---|" + "---|" * len(presets)]
    for c in changes:
        cells = []
        for p in presets:
            r = c["sizes"].get(p)
            if not r:
                cells.append("—")
            elif r.get("ratio") is None:
                cells.append("no figure")
            else:
                cells.append(f"{r['ratio']:.3f}× ({r['tokens_per_s']:,} tokens/s; "
                             f"{dash(r.get('with_peak_gib'), '{:.2f}')} → {dash(r.get('peak_gib'), '{:.2f}')} GiB)")
        rows.append(f"| {c.get('what') or c['name']} | `{c['settings']}` | " + " | ".join(cells) + " |")
    spread = doc.get("again")
    if spread:
        rows += ["", f"{spread['model']} timed twice in the call: {spread['apart'] * 100:.2f} % apart."]
    return rows


def table(files):
    out = []
    for path, doc in newest_per_device(files):
        rows, missing = speed_table(doc)
        out += [device_line(path, doc), ""] + rows + [""]
        if missing:
            out += ["Not measured: " + "; ".join(missing) + ".", ""]
        ch = changes_table(doc)
        if ch:
            out += ["Each change to the backend, from the same call: the defaults' tokens/s over the run "
                    "with it switched (above 1: the default pays), that run's tokens/s, and peak memory "
                    "with the defaults → in that run:", ""] + ch + [""]
        att = attention_table(doc)
        if att:
            out += [f"The attention alone ({doc['attention']['flops']}):", ""] + att
            out += [""] if att[-1] else []
            out += [f"- {line}" for line in doc["attention"].get("comparison") or []]
            if doc["attention"].get("comparison"):
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    ap = argparse.ArgumentParser(description="bench/RESULTS.md's GPU speed table from bench/gpu/results/")
    ap.add_argument("--dir", default="bench/gpu/results")
    ap.add_argument("--md", default="bench/RESULTS.md")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    a = ap.parse_args()
    files = glob.glob(os.path.join(a.dir, "*.json"))
    try:
        if not files:
            raise Bad(f"{a.dir}: no results files (*.json)")
        made = table(files)
    except Bad as e:
        print(f"results_table.py: {e}", file=sys.stderr)
        return 2
    if not (a.write or a.check):
        sys.stdout.write(made)
        return 0
    with open(a.md) as fh:
        text = fh.read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        print(f"results_table.py: {a.md} must hold the line {BEGIN!r} once, then {END!r}", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + made + END + tail
    if a.check:
        if new != text:
            print(f"results_table.py: {a.md}'s GPU table is not what {a.dir}/*.json make: "
                  f"run python3 bench/gpu/results_table.py --write", file=sys.stderr)
            return 1
        print(f"results_table.py: {a.md}'s GPU table is what {a.dir}/*.json make")
        return 0
    with open(a.md + ".tmp", "w") as fh:
        fh.write(new)
    os.replace(a.md + ".tmp", a.md)
    print(f"results_table.py: wrote the GPU table of {a.md} from {len(files)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
