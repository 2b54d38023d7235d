#!/usr/bin/env python3
"""How many copies of a window libtpu allocates when a megacore chip's two TensorCores share the
grid: a streaming kernel (o = 2x over (512, 1024) f32 blocks, 2 MiB a window copy) on grids of 1-8
steps, one and two axes, with dimension_semantics unset, all "parallel", all "arbitrary" or mixed,
on every generation. Probe kernels of their own, written for this question.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_megacore_buffering.py tests/data/tpu/megacore_buffering_probe.txt

Each row: generation, grid, semantics, libtpu's verdict and the Pallas call's scoped total, and
that total over one window copy (2 MiB): 4 when the input and output windows are double-buffered,
2 when single.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_vreg_alloc  # noqa: E402
from product import tpu_aot  # noqa: E402

BR, COLS = 512, 1024
COPY_BYTES = BR * COLS * 4
# (grid, dimension_semantics or None)
CASES = [((1,), None), ((2,), None), ((2,), ("parallel",)), ((2,), ("arbitrary",)), ((3,), ("parallel",)),
         ((4,), None), ((4,), ("parallel",)), ((4,), ("arbitrary",)), ((8,), ("parallel",)),
         ((2, 1), ("parallel", "arbitrary")), ((1, 2), ("parallel", "arbitrary")), ((1, 2), ("parallel", "parallel")),
         ((2, 2), ("parallel", "arbitrary")), ((2, 2), ("arbitrary", "parallel")), ((2, 1), ("arbitrary", "arbitrary"))]


def build(grid, semantics):
  rows = BR * grid[0]
  cols = COLS * (grid[1] if len(grid) > 1 else 1)
  if len(grid) == 1:
    spec = pl.BlockSpec((BR, COLS), lambda i: (i, 0))
  else:
    spec = pl.BlockSpec((BR, COLS), lambda i, j: (i, j))

  def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0

  params = pltpu.CompilerParams(dimension_semantics=semantics) if semantics else None

  def fn(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float32), grid=grid,
                          in_specs=[spec], out_specs=spec, compiler_params=params, name="megacore_probe")(x)
  return fn, (jax.ShapeDtypeStruct((rows, cols), jnp.float32),)


def probe(gen, grid, semantics):
  fn, args = build(grid, semantics)
  r = tpu_aot.compile_kernel(fn, args, gen)
  total = (r.get("pallas") or {}).get("total_bytes")
  row = {"gen": gen, "grid": list(grid), "semantics": list(semantics) if semantics else None, "verdict": r["verdict"],
         "total_bytes": total}
  if total:
    row["window_copies_total"] = round(total / COPY_BYTES, 3)
  return row


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, grid, semantics) for gen in tpu_aot.GENERATIONS for grid, semantics in CASES)
  probe_vreg_alloc.write_probe(argv[0], "window copies on megacore grids",
                               f"bench/tpu/probe_megacore_buffering.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
