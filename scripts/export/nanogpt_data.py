#!/usr/bin/env python3
"""Text as nanoGPT's character-level dataset (what data/shakespeare_char/prepare.py writes).

  python3 scripts/export/nanogpt_data.py INPUT... --out DIR

INPUT is a text file (read whole, as UTF-8) or one of the repo's annotated JSON files
(web/data/roles/*.json: the 'text' of each entry of 'sentences' or 'items', one a line).
Several inputs are joined with a newline. DIR gets, as prepare.py writes them:

  train.bin  the first 90% of the characters' ids, uint16 little-endian
  val.bin    the last 10%
  meta.pkl   {'vocab_size': V, 'itos': {id: char}, 'stoi': {char: id}}, ids in sorted order

Point nanoGPT's train.py at it with --dataset=NAME, DIR being nanoGPT's data/NAME/.
Standard library only (prepare.py's numpy writes the same bytes on a little-endian machine).
"""
import argparse
import json
import os
import pickle
import sys
from array import array


def fail(message):
    sys.exit(f"nanogpt_data: {message}")


def read_input(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{path}: could not be read as UTF-8 text ({e})")
    if not path.endswith(".json"):
        return text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON ({e})")
    entries = data.get("sentences", data.get("items")) if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("text"), str) for e in entries):
        fail(f"{path}: expected an object with 'sentences' or 'items', a list of objects with a 'text' string")
    return "\n".join(e["text"] for e in entries) + "\n"


def prepare(text):
    """(train ids, val ids, meta) exactly as shakespeare_char/prepare.py makes them."""
    chars = sorted(set(text))
    if len(chars) > 65536:
        fail(f"{len(chars)} distinct characters: uint16 ids hold at most 65536")
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    n = len(text)
    ids = [stoi[c] for c in text]
    meta = {"vocab_size": len(chars), "itos": itos, "stoi": stoi}
    return ids[: int(n * 0.9)], ids[int(n * 0.9):], meta


def write_ids(path, ids):
    a = array("H", ids)
    if sys.byteorder != "little":
        a.byteswap()
    with open(path, "wb") as f:
        a.tofile(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="text files or web/data/roles/*.json")
    parser.add_argument("--out", required=True, metavar="DIR", help="the dataset folder (nanoGPT's data/NAME/)")
    args = parser.parse_args()
    text = "\n".join(read_input(p).rstrip("\n") for p in args.inputs) + "\n"
    # train.py samples block_size + 1 characters from each split, so both need a few hundred
    if len(text) < 1000:
        fail(f"{len(text)} characters: expected at least 1000 (the val split is the last 10%)")
    train, val, meta = prepare(text)
    os.makedirs(args.out, exist_ok=True)
    write_ids(os.path.join(args.out, "train.bin"), train)
    write_ids(os.path.join(args.out, "val.bin"), val)
    with open(os.path.join(args.out, "meta.pkl"), "wb") as f:
        pickle.dump(meta, f)
    print(f"{len(text):,} characters, vocab size {meta['vocab_size']}: "
          f"train {len(train):,} tokens, val {len(val):,} tokens -> {args.out}")


if __name__ == "__main__":
    main()
