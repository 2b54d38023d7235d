#!/usr/bin/env python3
"""Tables of the TPU oracle corpus: rows and verdicts per generation and per kind, compile
times, and how much of the requirement the compiler adds (spill) near the limit.

  python3 bench/tpu/corpus_stats.py tests/data/tpu/corpus.jsonl.gz     # markdown tables

Plain Python 3 (no jax).
"""
import collections
import gzip
import json
import statistics
import sys

VERDICTS = ["fits", "vmem_scoped", "vmem_capacity", "vmem_alloc", "error", "timeout", "crash"]


def load(path):
  op = gzip.open if path.endswith(".gz") else open
  header, rows = None, []
  with op(path, "rt") as f:
    for line in f:
      try:
        r = json.loads(line)
      except json.JSONDecodeError:
        continue
      if r.get("header"):
        header = r
      else:
        rows.append(r)
  return header, rows


def q(xs, p):
  xs = sorted(xs)
  return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))] if xs else float("nan")


def main(argv):
  header, rows = load(argv[0])
  if header:
    print(f"versions {header['versions']}, date {header['date']}, command `{header['command']}`\n")
  gens = [g for g in ["v4", "v5e", "v5p", "v6e", "v7x"] if any(r["gen"] == g for r in rows)]
  print("| generation | compiles | " + " | ".join(VERDICTS) + " | near the limit (0.8-1.25x) |")
  print("|---|---|" + "---|" * len(VERDICTS) + "---|")
  tot = collections.Counter()
  for g in gens:
    rs = [r for r in rows if r["gen"] == g]
    c = collections.Counter(r["result"]["verdict"] for r in rs)
    near = 0
    for r in rs:
      lim = r.get("vmem_limit_bytes") or r.get("default_limit_bytes") or (16 << 20)
      need = r.get("requirement_bytes") or r["result"].get("size_bytes")
      if need and 0.8 <= need / lim <= 1.25:
        near += 1
    tot.update(c)
    tot["n"] += len(rs)
    tot["near"] += near
    print(f"| {g} | {len(rs)} | " + " | ".join(str(c.get(v, 0)) for v in VERDICTS) + f" | {near} |")
  print(f"| all | {tot['n']} | " + " | ".join(str(tot.get(v, 0)) for v in VERDICTS) + f" | {tot['near']} |")

  print("\n| kind | " + " | ".join(gens) + " | fits / fails (all generations) |")
  print("|---|" + "---|" * len(gens) + "---|")
  kinds = sorted({r["kind"] for r in rows})
  for k in kinds:
    rs = [r for r in rows if r["kind"] == k]
    fits = sum(r["result"]["verdict"] == "fits" for r in rs)
    vm = sum(r["result"]["verdict"].startswith("vmem") for r in rs)
    print(f"| {k} | " + " | ".join(str(sum(r['gen'] == g for r in rs)) for g in gens)
          + f" | {fits} / {vm} VMEM, {len(rs) - fits - vm} other |")

  print("\ncompile time of the first compile (s): per generation")
  print("| generation | median | p90 | max | sum |")
  print("|---|---|---|---|---|")
  allt = []
  for g in gens:
    ts = [r["result"].get("compile_s") or 0 for r in rows if r["gen"] == g]
    allt += ts
    print(f"| {g} | {statistics.median(ts):.2f} | {q(ts, .9):.2f} | {max(ts):.2f} | {sum(ts):.0f} |")
  print(f"| all | {statistics.median(allt):.2f} | {q(allt, .9):.2f} | {max(allt):.2f} | {sum(allt):.0f} |")
  extra = sum((r.get("at_capacity") or {}).get("compile_s") or 0 for r in rows) + \
      sum((r.get("verify") or {}).get("compile_s") or 0 for r in rows)
  print(f"\nplus {extra:.0f} s of retries at capacity and verifications")

  print("\ncompile time per kind (s), all generations")
  print("| kind | median | p90 | max |")
  print("|---|---|---|---|")
  for k in kinds:
    ts = [r["result"].get("compile_s") or 0 for r in rows if r["kind"] == k]
    print(f"| {k} | {statistics.median(ts):.2f} | {q(ts, .9):.2f} | {max(ts):.2f} |")
  by_v = collections.defaultdict(list)
  for r in rows:
    by_v[r["result"]["verdict"]].append(r["result"].get("compile_s") or 0)
  print("\ncompile time per verdict (s): " + ", ".join(
      f"{v} median {statistics.median(ts):.2f} max {max(ts):.2f}" for v, ts in sorted(by_v.items())))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
