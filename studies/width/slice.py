#!/usr/bin/env python3
"""A share of a JSON-lines corpus's documents, spread evenly over it, for
the width study's bundle (studies/width/corpus.sh).

Document i (0-based, in the file's order) is kept when ⌊(i+1)·S⌋ > ⌊i·S⌋,
S the share: every source of the corpus, which lists its documents source
by source, keeps about the same share, and the same share of the same file
keeps the same documents. Optionally the kept documents' text as
SentencePiece's trainer reads it: one line a sentence, the non-empty lines
of every --sample-th kept document.

usage: slice.py SHARE IN.jsonl[.xz] OUT.jsonl [--text FILE --sample K]
prints: documents read, kept, bytes of text kept
"""
import argparse
import json
import lzma
import math


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("share", type=float)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--text")
    ap.add_argument("--sample", type=int, default=1)
    a = ap.parse_args()
    if not 0 < a.share <= 1:
        ap.error(f"SHARE must be in (0, 1], not {a.share}")
    opener = lzma.open if a.src.endswith(".xz") else open
    n = kept = nbytes = 0
    text = open(a.text, "w", encoding="utf-8") if a.text else None
    with opener(a.src, "rt", encoding="utf-8") as f, open(a.dst, "w", encoding="utf-8") as out:
        for line in f:
            i, n = n, n + 1
            if math.floor((i + 1) * a.share) == math.floor(i * a.share):
                continue
            doc = json.loads(line)["text"]
            out.write(line)
            if text and kept % a.sample == 0:
                text.writelines(s + "\n" for s in doc.split("\n") if s.strip())
            kept += 1
            nbytes += len(doc.encode("utf-8"))
    if text:
        text.close()
    print(f"{n} {kept} {nbytes}")


if __name__ == "__main__":
    main()
