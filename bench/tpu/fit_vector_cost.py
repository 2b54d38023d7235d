#!/usr/bin/env python3
"""Fits the TPU vector unit's cost per grid step: VLIW bundles as a linear function of the body's
vector work (PallasVectorWork, scratchsim._pallas_body), per generation, on libtpu's static schedule.

  python3 bench/tpu/fit_vector_cost.py tests/data/tpu/bundles.jsonl.gz \\
      tests/data/tpu/bundles_v4_v5p_v7x.jsonl.gz --bodies tests/data/tpu/corpus_bodies.jsonl.gz [--cc]

The model (backends/tpu/vector_cost.cc): a grid step issues

    bundles = step + loads * w_load + stores * w_store + alu * w_alu + transcendental * w_transcendental
              + reductions * w_reduction + transposes * w_transpose + converts * w_convert

where each figure is vector registers of that kind of work and `step` is what every grid step
issues whatever its body (DMA issue and wait, semaphores, the loop). The weights are bundles per
vreg: below 1 where a bundle issues several such ops (a VLIW bundle has several vector slots).
They are fitted per generation by non-negative least squares on the relative error, on the fit
half of the kernels whose body has no dot and no rolled loop (the same half as the spill model:
fit_spill_model.in_fit_half), and judged on the other half. Kernels with dots are not fitted on:
the planner charges their MXU work at the peak (docs/tpu.md), and tpu_corpus_test judges the
sum of the two against the schedule.

Prints, per generation, the coefficients, and the median and spread of predicted / recorded
bundles on both halves and per kind; --cc prints the C++ table rows. No jax needed.
"""
import argparse
import collections
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_spill_model  # noqa: E402  (in_fit_half: the same halves as the spill model)
from product import pallas_body  # noqa: E402

FIGURES = pallas_body.VECTOR_FIGURES  # the figures the tracer writes
# Kinds whose static schedule is not one grid step's work: megablox gmm has no grid loop, paged
# and ragged paged attention loop over pages inside the body (docs/tpu.md).
NOT_A_STEP = {"gmm", "paged_attention", "ragged_paged"}


def step_bundles(bundles):
  """Bundles of one grid step of the Pallas kernel: its grid loop's body (None without one)."""
  if not bundles:
    return None
  kernel = max(bundles, key=lambda name: bundles[name]["total"])
  b = bundles[kernel]
  return b["step"] if b.get("grid_loop") else None


def load(bundle_paths, bodies_path):
  summaries = {}
  with gzip.open(bodies_path, "rt") as f:
    for line in f:
      r = json.loads(line)
      summaries[r["id"]] = r["summary"]
  rows = []
  for path in bundle_paths:
    with gzip.open(path, "rt") as f:
      for line in f:
        r = json.loads(line)
        if r.get("header") or r["kind"] in NOT_A_STEP:
          continue
        step = step_bundles(r.get("bundles"))
        s = summaries.get(r["id"])
        if step is None or s is None or not s.get("vector"):
          continue
        rows.append({"id": r["id"], "gen": r["gen"], "kind": r["kind"], "params": r["params"], "bundles": step,
                     "x": [1.0] + [float(s["vector"].get(k, 0)) for k in FIGURES], "dots": bool(s["dots"]),
                     "rolled": s.get("rolled_loops", 0) > 0, "fit": fit_spill_model.in_fit_half(r)})
  return rows


def nnls_relative(xs, ys, sweeps=4000):
  """Non-negative weights w minimising sum(((x . w) / y - 1)^2): projected coordinate descent."""
  a = [[v / y for v in x] for x, y in zip(xs, ys)]  # rows scaled by 1/y; target all ones
  n = len(a[0])
  w = [0.0] * n
  residual = [-1.0] * len(a)  # a w - 1
  norms = [sum(r[j] * r[j] for r in a) for j in range(n)]
  for _ in range(sweeps):
    moved = 0.0
    for j in range(n):
      if norms[j] == 0:
        continue
      grad = sum(r[j] * e for r, e in zip(a, residual))
      new = max(0.0, w[j] - grad / norms[j])
      d = new - w[j]
      if d:
        for i, r in enumerate(a):
          residual[i] += r[j] * d
        w[j] = new
        moved = max(moved, abs(d) / max(abs(new), 1e-9))
    if moved < 1e-9:
      break
  return w


def predict(w, x):
  return sum(a * b for a, b in zip(w, x))


def spread(ratios):
  if not ratios:
    return "-"
  within = sum(abs(r - 1) <= 0.2 for r in ratios) / len(ratios)
  return (f"n {len(ratios)}, median {statistics.median(ratios):.3f}, range {min(ratios):.2f}-{max(ratios):.2f}, "
          f"within 20% {100 * within:.0f}%")


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("bundles", nargs="+", help="compute_oracle.py outputs")
  p.add_argument("--bodies", required=True, help="corpus_bodies.py output (with the vector figures)")
  p.add_argument("--cc", action="store_true", help="print the C++ table rows")
  a = p.parse_args(argv)
  rows = load(a.bundles, a.bodies)
  table = {}
  for gen in sorted({r["gen"] for r in rows}):
    vector_only = [r for r in rows if r["gen"] == gen and not r["dots"] and not r["rolled"]]
    fit = [r for r in vector_only if r["fit"]]
    if len(fit) < len(FIGURES) + 1:
      print(f"{gen}: {len(fit)} fit rows, too few to fit")
      continue
    w = nnls_relative([r["x"] for r in fit], [r["bundles"] for r in fit])
    table[gen] = (w, len(fit))
    print(f"{gen}: step {w[0]:.1f} bundles; per vreg " + ", ".join(f"{k} {v:.3f}" for k, v in zip(FIGURES, w[1:])))
    for half, name in ((True, "fit"), (False, "holdout")):
      print(f"  {name:8s} " + spread([predict(w, r["x"]) / r["bundles"] for r in vector_only if r["fit"] == half]))
    by_kind = collections.defaultdict(list)
    for r in vector_only:
      by_kind[r["kind"]].append(predict(w, r["x"]) / r["bundles"])
    for kind, ratios in sorted(by_kind.items()):
      print(f"    {kind:16s} " + spread(ratios))
  if a.cc:
    print("\n// gen, step, " + ", ".join(FIGURES) + ", fit rows")
    for gen, (w, n) in table.items():
      print(f'    {{"{gen}", ' + ", ".join(f"{v:.4g}" for v in w) + f", {n}}},")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
