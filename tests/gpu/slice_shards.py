#!/usr/bin/env python3
"""A small shard set for the GPU bundle: the first N training tokens of a
tokenized corpus (llm.c shards, cod-prep's format) and all its held-out
ones, with meta.json's counts made to match.

usage: slice_shards.py SRC_DIR DEST_DIR N
"""
import json
import os
import struct
import sys

src, dest, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
HEADER = 256 * 4
os.makedirs(dest, exist_ok=True)
meta = json.load(open(os.path.join(src, "meta.json")))
width = meta.get("token_bytes", 2)


def copy(name, limit):
    with open(os.path.join(src, name), "rb") as f:
        header = bytearray(f.read(HEADER))
        count = struct.unpack_from("<i", header, 8)[0]
        keep = count if limit is None else min(count, limit)
        body = f.read(keep * width)
    struct.pack_into("<i", header, 8, keep)
    tmp = os.path.join(dest, name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(header)
        f.write(body)
    os.replace(tmp, os.path.join(dest, name))
    return keep


meta["train"]["tokens"] = sum(copy(s, n) for s in meta["train"]["shards"][:1])
meta["train"]["shards"] = meta["train"]["shards"][:1]
meta["val"]["tokens"] = sum(copy(s, None) for s in meta["val"]["shards"])
with open(os.path.join(dest, "meta.json"), "w") as f:
    json.dump(meta, f, indent=2)
print(f"slice_shards: {meta['train']['tokens']} training and {meta['val']['tokens']} held-out "
      f"tokens in {dest}")
