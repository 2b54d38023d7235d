#!/usr/bin/env python3
"""Traces one kernel of every body the spill model's bands were fitted on or checked against (the
libtpu oracle corpus's catalogue, tpu_kernels.catalogue, and every family of sweep_spills.py) and
writes their graphs: the bodies whose ops and patterns the bands are validated on.

  JAX_PLATFORMS=cpu python3 bench/tpu/validated_bodies.py backends/tpu/testdata/validated_bodies.pbtxt.gz

Per distinct (kind, dtype and flag parameters), the first, middle and last shape the catalogue and
the sweeps list, without the exported call. `SpillModelTest.ValidatedSignaturesAreTheFitBodies`
(backends/tpu/vreg_replay_test.cc) derives each class's validated signature from them (ops, most
barriers a region has) and checks spill_model.cc's table equals it; with
SCRATCHSIM_UPDATE_GOLDEN=1 it prints the table to paste. Tracing only: no libtpu needed.
"""
import argparse
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from product import pallas_trace  # noqa: E402
import sweep_spills  # noqa: E402
import tpu_kernels  # noqa: E402

GENS = ("v4", "v5e", "v5p", "v6e", "v7x")


def representatives():
  """(kind, params) of every distinct body: per kind and non-numeric parameters, its first, middle
  and last shape as the catalogue and the sweeps list them (the shapes of one body can differ in
  how many whole-operand ops a region has: heads unrolled in Python, k steps)."""
  seen = {}
  listed = [kp for gen in GENS for kp in tpu_kernels.catalogue(gen)]
  for family, shapes in sorted(sweep_spills.FAMILIES.items()):
    listed += shapes()
  for kind, params in listed:
    key = (kind, json.dumps({k: v for k, v in params.items() if isinstance(v, (str, bool)) or v is None},
                            sort_keys=True))
    group = seen.setdefault(key, [])
    if params not in group:
      group.append(params)
  out = []
  for key in sorted(seen):
    group = seen[key]
    for i in sorted({0, len(group) // 2, len(group) - 1}):
      out.append((key[0], group[i]))
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("out")
  a = ap.parse_args()
  graphs = []
  for kind, params in representatives():
    try:
      fn, args = tpu_kernels.build(kind, params)
      graph = pallas_trace.graphs_from_function(fn, args, f"{kind}", export=False)[0]
    except Exception as e:  # pylint: disable=broad-except
      print("skipped", kind, params, type(e).__name__, str(e)[:120], file=sys.stderr)
      continue
    graphs.append(f"# {kind} {json.dumps(params, sort_keys=True)}\n{graph}")
    print(kind, json.dumps(params, sort_keys=True), file=sys.stderr)
  # One KernelGraph textproto per record, separated by a line of its own.
  with gzip.open(a.out, "wt", compresslevel=9) as out:
    out.write("\n---\n".join(graphs))
  print(len(graphs), "bodies", file=sys.stderr)


if __name__ == "__main__":
  main()
