#!/usr/bin/env python3
"""Records what libtpu's static schedule says of each compiling corpus kernel's compute: VLIW
bundles per grid step (tpu_aot.parse_bundles), the oracle for the TPU planner's per-step compute
time (docs/tpu.md, "Compute per grid step").

  JAX_PLATFORMS=cpu python3 bench/tpu/compute_oracle.py tests/data/tpu/corpus.jsonl.gz \\
      tests/data/tpu/bundles.jsonl.gz --gens v5e,v6e [--kinds matmul_grid,softmax] [--limit N]

Each kernel of the corpus that compiles at its default limit on the generation (one row per
(kind, params) without a vmem_limit_bytes of its own) is compiled again with TPU_AOT_BUNDLES=1;
the output has one JSON line per row: id, gen, kind, params, bundles ({Pallas kernel: {total,
step, grid_loop}}), compile_s, and a header line with the versions and date. Needs jax with libtpu
(bench/tpu/README.md); about 2 s per kernel.
"""
import argparse
import datetime
import gzip
import json
import os
import sys
import time

os.environ["TPU_AOT_BUNDLES"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (sets the environment before jax)
import tpu_kernels  # noqa: E402


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("corpus")
  p.add_argument("out")
  p.add_argument("--gens", default="v5e,v6e")
  p.add_argument("--kinds", default="", help="comma-separated kinds (default: every kind)")
  p.add_argument("--limit", type=int, default=0, help="at most this many rows per (gen, kind)")
  a = p.parse_args(argv)
  gens = a.gens.split(",")
  kinds = set(filter(None, a.kinds.split(",")))
  rows = []
  with gzip.open(a.corpus, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header") or r.get("gen") not in gens or (kinds and r["kind"] not in kinds):
        continue
      if (r.get("result") or {}).get("verdict") != "fits" or r.get("vmem_limit_bytes"):
        continue
      rows.append(r)
  if a.limit:
    kept, seen = [], {}
    for r in rows:
      key = (r["gen"], r["kind"])
      seen[key] = seen.get(key, 0) + 1
      if seen[key] <= a.limit:
        kept.append(r)
    rows = kept
  start = time.time()
  with gzip.open(a.out, "wt") as out:
    out.write(json.dumps({"header": True, "versions": tpu_aot.versions(), "date": datetime.datetime.now(
        datetime.timezone.utc).isoformat(), "command": " ".join(sys.argv), "topologies": tpu_aot.TOPOLOGIES}) + "\n")
    for i, r in enumerate(rows):
      fn, args = tpu_kernels.build(r["kind"], r["params"])
      res = tpu_aot.compile_kernel(fn, args, r["gen"])
      out.write(json.dumps({"id": r["id"], "gen": r["gen"], "kind": r["kind"], "params": r["params"],
                            "verdict": res["verdict"], "bundles": res.get("bundles"),
                            "compile_s": res["compile_s"]}) + "\n")
      if (i + 1) % 20 == 0:
        print(f"{i + 1}/{len(rows)} in {time.time() - start:.0f} s", file=sys.stderr, flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
