#!/usr/bin/env python3
"""What a shard set holds for training at seq_len T, as cod's loader cuts
it (trainer/dataloader.c; docs/spec.md, data.packing):

- documents packing: one document a row, its first T + 1 tokens (a
  document is meta.json's doc token and what follows it, or with
  "doc_token_at": "end" what follows one up to and including the next), a
  row's targets min(len, T + 1) − 1; so an epoch visits every document once
  and trains on the sum of those targets, the unique tokens the set can
  teach; the fill is that over rows × T slots;
- stream packing: the tokens end to end in rows of T, every slot a target.

usage: tokens.py DIR T
prints one JSON object: per split (train, val) its documents, rows,
targets (documents packing), tokens, fill, truncated documents and the
targets they lose (steps.py sizes a schedule from it).
"""
import argparse
import json
import os
import struct

HEADER = 256 * 4
MAGIC = {20240520: ("<H", 2), 20240801: ("<I", 4)}


def read_tokens(path):
    with open(path, "rb") as f:
        head = f.read(HEADER)
        magic, _, n = struct.unpack_from("<iii", head)
        if magic not in MAGIC:
            raise SystemExit(f"tokens: {path}: not a token shard (magic {magic})")
        width = MAGIC[magic][1]
        body = f.read(n * width)
    if len(body) != n * width:
        raise SystemExit(f"tokens: {path}: {len(body) // width} tokens, its header says {n}")
    return body, width, n


def doc_ends(body, width, token):
    """Offsets (in tokens) of every occurrence of token, aligned."""
    pat = token.to_bytes(width, "little")
    out, i = [], body.find(pat)
    while i >= 0:
        if i % width == 0:
            out.append(i // width)
            i = body.find(pat, i + width)
        else:
            i = body.find(pat, i + 1)
    return out


def split(meta, d, name, T):
    shards = meta[name]["shards"]
    lens, total = [], 0
    at_end = meta.get("doc_token_at", "start") == "end"
    doc = meta["doc_token"]
    start = 0 if at_end else None
    for s in shards:
        body, width, n = read_tokens(os.path.join(d, s))
        for p in doc_ends(body, width, doc):
            g = total + p
            if at_end:
                lens.append(g + 1 - start)
                start = g + 1
            else:
                if start is not None:
                    lens.append(g - start)
                start = g
        total += n
    if not at_end and start is not None:
        lens.append(total - start)
    rows = [n for n in lens if n >= 2]
    targets = sum(min(n, T + 1) - 1 for n in rows)
    cut = [n for n in rows if n > T + 1]
    return {"documents": len(lens), "rows": len(rows), "targets": targets, "tokens": total,
            "fill": targets / (len(rows) * T) if rows else 0.0,
            "mean_targets_per_row": targets / len(rows) if rows else 0.0,
            "truncated": len(cut), "truncated_targets_lost": sum(n - T - 1 for n in cut)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("T", type=int)
    a = ap.parse_args()
    meta = json.load(open(os.path.join(a.dir, "meta.json")))
    out = {"dir": a.dir, "seq_len": a.T, "vocab_size": meta["vocab_size"],
           "doc_token": meta["doc_token"], "doc_token_at": meta.get("doc_token_at", "start"),
           "pad_token": meta.get("pad_token")}
    for name in ("train", "val"):
        out[name] = split(meta, a.dir, name, a.T)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
