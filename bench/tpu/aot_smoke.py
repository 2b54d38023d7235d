#!/usr/bin/env python3
"""Smoke test of libtpu's ahead-of-time compile here (backends/tpu/tpu_aot.py): the tracer's
blocked matmul at 256 (fits) and 2048 (E1001) on every generation, or those named.

  python3 bench/tpu/aot_smoke.py [v5e v6e ...]      (the venv of README.md)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)
from product import pallas_trace  # noqa: E402


def main(gens):
  print(tpu_aot.versions())
  for gen in gens or tpu_aot.GENERATIONS:
    for b in (256, 2048):
      fn, args = pallas_trace.example_matmul(bm=b, bn=b, bk=b)
      r = tpu_aot.compile_kernel(fn, args, gen)
      fig = (r.get("pallas") or {}).get("total_bytes") if r["verdict"] == "fits" else r.get("size_str")
      print(f"{gen:4} matmul {b:5}: {r['verdict']:14} {fig}  ({r['compile_s']:.2f} s)", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
