#!/usr/bin/env python3
"""Reads the body of every kernel of the TPU oracle corpus (scratchsim._pallas_body) and writes it beside
the corpus: the body of every row with a graph, as the current tracer reads it.

  JAX_PLATFORMS=cpu /work/venvs/tpu/bin/python bench/tpu/corpus_bodies.py \
      tests/data/tpu/corpus.jsonl.gz --out tests/data/tpu/corpus_bodies.jsonl.gz

One JSON object a line: {"id": row id, "body": PallasBody textproto (the lines inside
`body { }`), "summary": the figures as a dict, "fit": whether the kernel is in the half
fit_spill_model.py fits the spill model on}, for every row with a graph. Tracing only (CPU):
no libtpu is loaded. backends/tpu/tpu_corpus_test.cc sets each row's graph.pallas.body from it
(replacing the body a row's graph was written with: the file follows the current tracer).
"""
import argparse
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("corpus")
  p.add_argument("--out", required=True)
  a = p.parse_args(argv)
  import jax
  import fit_spill_model
  from product import pallas_body, pallas_trace as p2g
  import tpu_kernels

  cache = {}
  out = []
  with gzip.open(a.corpus, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header") or "graph" not in r:
        continue
      key = (r["kind"], json.dumps(r["params"], sort_keys=True))
      if key not in cache:
        fn, args = tpu_kernels.build(r["kind"], r["params"])
        closed = jax.make_jaxpr(fn)(*args)
        eqns = []
        p2g._find_pallas_calls(closed.jaxpr, eqns)  # pylint: disable=protected-access
        cache[key] = pallas_body.summarize(eqns[0])
      s = cache[key]
      body = "\n".join(l.strip() for l in pallas_body.body_textproto(s)[1:-1])
      out.append({"id": r["id"], "body": body, "summary": s, "fit": fit_spill_model.in_fit_half(r)})
  with gzip.open(a.out, "wt", compresslevel=9) as f:
    for o in out:
      f.write(json.dumps(o, sort_keys=True) + "\n")
  print(f"wrote {a.out}: {len(out)} rows, {len(cache)} kernels traced")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
