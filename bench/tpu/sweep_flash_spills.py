#!/usr/bin/env python3
"""Mosaic's register spill slots of JAX's flash attention forward over a grid of block shapes,
compiled by libtpu with the scoped limit raised so that every kernel compiles and its report
gives the spill slots exactly: an out-of-sample check of the spill estimate's band
(backends/tpu/spill_model.cc; tests: backends/tpu/tpu_corpus_test.cc, FlashSweep*).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/sweep_flash_spills.py \\
      tests/data/tpu/flash_spill_sweep.jsonl.gz [--gens v5e,v5p,v6e,v7x]

Shapes: batch 1, 2 heads, sequence 8192, head_dim 128, bf16; block_q 256-2048, block_k 128-1024,
block_k_major = block_k x 1, 2, 4 or 8 (at most 4096), the score tiles of one grid step
(block_q x block_k_major x 4 B x iterations) at most 48 MiB. None of them is a corpus kernel (the
corpus's flash kernels have sequence 4096). The limit: 100 MiB on v5e and v6e (128 MiB of VMEM),
60 MiB on v5p and v7x (64 MiB); v4's 16 MiB VMEM holds too few of them. One row per compile,
after a header line: id, gen, kind, params, vmem_limit_bytes, graph (pallas_to_graph.py's, with
its body), result (the verdict, the report's total and its spill slots).
Versions: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1 (about 4 minutes a generation on two cores).
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)
import make_corpus  # noqa: E402
import pallas_to_graph  # noqa: E402
import tpu_kernels  # noqa: E402

LIMITS = {"v5e": 100 << 20, "v6e": 100 << 20, "v5p": 60 << 20, "v7x": 60 << 20}


def shapes():
  out = []
  for block_q in (256, 512, 1024, 2048):
    for block_k in (128, 256, 512, 1024):
      for iterations in (1, 2, 4, 8):
        major = block_k * iterations
        if major <= 4096 and iterations * block_q * block_k * 4 <= (48 << 20):
          out.append({"b": 1, "h": 2, "s": 8192, "d": 128, "block_q": block_q, "block_k_major": major,
                      "block_k": block_k})
  return sorted(out, key=lambda p: p["block_q"] * p["block_k_major"])


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("out")
  ap.add_argument("--gens", default="v5e,v5p,v6e,v7x")
  a = ap.parse_args()
  rows = [{"header": True, "versions": tpu_aot.versions(), "date": datetime.date.today().isoformat(),
           "command": " ".join(["bench/tpu/sweep_flash_spills.py"] + sys.argv[1:])}]
  for gen in a.gens.split(","):
    limit = LIMITS[gen]
    for params in shapes():
      fn, args = tpu_kernels.flash_fwd(**params)
      key = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
      graph = pallas_to_graph.graphs_from_function(fn, args, f"{gen}_flash_fwd_{key}")[0]
      r = make_corpus.compile_with_limit("flash_fwd", params, gen, limit)
      allocations = [x for k in ((r.get("report") or {}).get("kernels") or {}).values() for x in k["allocations"]]
      result = {"verdict": r["verdict"], "compile_s": r.get("compile_s"),
                "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
                "spill_bytes": sum(x["size"] for x in allocations if x["what"] == "SPILL")}
      rows.append({"id": f"{gen}/flash_fwd/{key}", "gen": gen, "kind": "flash_fwd", "params": params,
                   "vmem_limit_bytes": limit, "graph": graph, "result": result})
      print(gen, params["block_q"], params["block_k"], params["block_k_major"], result["verdict"],
            result["spill_bytes"], flush=True)
  with gzip.open(a.out, "wt", compresslevel=9) as f:
    for r in rows:
      f.write(json.dumps(r, sort_keys=True) + "\n")


if __name__ == "__main__":
  main()
