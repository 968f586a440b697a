#!/usr/bin/env python3
"""The recipe study's reading: LNS's gap to Pre-LN under each recipe, and
how far a recipe moves it from the reference's, beside the seed noise.

Each folder is one sweep's report (its cells.csv) of norm pre and lns at
seeds 1, 2, 3 on one recipe. Per folder: the gap at each seed, final eval
perplexity of LNS minus Pre-LN's (and the same in eval loss, nats), its
mean and 95 % interval (positive: LNS behind). Per folder after the
first: the change of the gap from the first folder's, seed by seed (a
difference of differences), the same way. The verdicts are in nats, by
studies/verdict.py's rule: a difference shown (paired t-test), within
noise (TOST against ±0.01 nats on the same comparison's paired noise),
unresolved, or n = 1; every gap and change of one reading is one family,
Holm-corrected. The perplexities are described, not judged (the two
recipes' are of different texts). Only finished runs count; a
seed with a diverged or unfinished run on either side is left out and
named. A recipe's seeds may come from several sweeps (seeds added later,
`SEEDS=3 OUT=...` in run.sh): its folders joined by "+" read as one, a
finished run standing in for a cancelled one of the same norm and seed.

usage: studies/recipe/gap.py REFERENCE_DIR[+DIR...] DIR[+DIR...]...
"""
import csv
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("pair", os.path.join(here, "..", "depth", "pair.py"))
pair = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pair)
verdict = pair.verdict


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


def ppl_line(name, d, left):
    """the gap in perplexity, described: the verdict is the nats'"""
    skipped = f"; seeds {', '.join(sorted(left, key=pair.order))} left out" if left else ""
    by = ", ".join(f"{s}: {v:+.3f}" for s, v in d)
    if len(d) < 2:
        return f"{name}: {len(d)} seed(s), no interval (by seed {by}){skipped}"
    c = verdict.Comparison(name, [v for _, v in d])
    c.test(verdict.MARGIN)
    return f"{name}: {c.mean:+.3f} [{c.lo:+.3f}, {c.hi:+.3f}], p = {c.p:.2g} (by seed {by}){skipped}"


def main(folders, margin=verdict.MARGIN):
    ref, ref_left = gaps(folders[0])
    blocks = []
    for i, folder in enumerate(folders):
        g, left = (ref, ref_left) if i == 0 else gaps(folder)
        rows = [("LNS − Pre-LN", [(s, v) for s, v in g.items()], left, False)]
        if i:
            gone = left | ref_left | ({s for s in g} ^ {s for s in ref})
            rows.append((f"its change from {folders[0]}",
                         [(s, (v[0] - ref[s][0], v[1] - ref[s][1])) for s, v in g.items() if s in ref],
                         gone, True))
        blocks.append((folder, [(name, d, gone, change,
                                 verdict.Comparison(name, [v[1] for _, v in d], *(
                                     ("this recipe's gap", "the reference's") if change else ("LNS", "Pre-LN"))))
                                for name, d, gone, change in rows]))
    # every gap and change in nats of this reading is one family
    verdict.judge([c for _, rows in blocks for *_, c in rows], margin)
    for folder, rows in blocks:
        print(folder)
        for name, d, gone, change, c in rows:
            print("  " + ppl_line(f"{name} (ppl)", [(s, v[0]) for s, v in d], gone))
            skipped = f"; seeds {', '.join(sorted(gone, key=pair.order))} left out" if gone else ""
            by = ", ".join(f"{s}: {v[1]:+.3f}" for s, v in d)
            print(f"  {name} (loss): {verdict.describe(c, margin)} (by seed {by}){skipped}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: studies/recipe/gap.py REFERENCE_DIR[+DIR...] DIR[+DIR...]...")
    main(sys.argv[1:])
