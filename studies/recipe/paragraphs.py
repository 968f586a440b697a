#!/usr/bin/env python3
"""A text corpus cut into documents at its paragraphs, for documents packing
(data.packing "documents"), until cod-prep's --split does it.

Each file of CORPUS/train and CORPUS/val is cut at its blank lines, and
consecutive paragraphs are grouped into documents of at most N bytes; a
paragraph longer than N is a document of its own (of which training reads
the first seq_len + 1 tokens, as the paper's long C4 documents are
truncated). Each document becomes a file of OUT/train or OUT/val named
after its source file and its place in it, so that cod-prep, which takes a
directory's files in name order, keeps the corpus's order; cod-prep then
puts the doc token before each (bytes: 256).

It prints, for each set, the documents, their mean length and, for rows of
ROW bytes after the doc token (seq_len), the share of a row's targets that
are text rather than padding and the share of documents truncated.

usage: studies/recipe/paragraphs.py N ROW CORPUS OUT
"""
import os
import re
import sys

BLANK = re.compile(rb"\n[ \t]*\n+")


def documents(text, n):
    """The text's paragraphs grouped into documents of at most n bytes."""
    docs, cur = [], b""
    for par in BLANK.split(text):
        par = par.strip(b"\n")
        if not par.strip():
            continue
        if cur and len(cur) + 2 + len(par) > n:
            docs.append(cur)
            cur = b""
        cur = par if not cur else cur + b"\n\n" + par
    if cur:
        docs.append(cur)
    return docs


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    n, row, corpus, out = int(argv[1]), int(argv[2]), argv[3], argv[4]
    for split in ("train", "val"):
        src, dst = os.path.join(corpus, split), os.path.join(out, split)
        os.makedirs(dst, exist_ok=True)
        lengths = []
        for name in sorted(os.listdir(src)):
            with open(os.path.join(src, name), "rb") as f:
                docs = documents(f.read(), n)
            stem = os.path.splitext(name)[0]
            for i, doc in enumerate(docs):
                with open(os.path.join(dst, f"{stem}-{i:05d}.txt"), "wb") as f:
                    f.write(doc)
                lengths.append(len(doc))
        if not lengths:
            sys.exit(f"paragraphs.py: no text in {src}")
        # a row of a document of L bytes holds min(L, row) targets after the doc token
        targets = sum(min(x, row) for x in lengths)
        print(f"{split}: {len(lengths)} documents of {sum(lengths) / len(lengths):.0f} bytes on "
              f"average (paragraphs grouped up to {n}, a longer one alone); rows of {row}: "
              f"{targets / (row * len(lengths)):.1%} text, {sum(x > row for x in lengths) / len(lengths):.1%} "
              f"of documents truncated, {targets / sum(lengths):.1%} of the text read in an epoch")


if __name__ == "__main__":
    main(sys.argv)
