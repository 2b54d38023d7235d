#!/usr/bin/env python3
"""Whether storing one row of a block at a dynamic sublane offset makes Mosaic list (and the scoped
limit count) its internal scratch: the gather pattern of the fourth held-out set's embedding kernel
(a (1, d) row a grid step, written into an (rb, d) staging scratch at row program_id, the block
stored whole at the last row), with the row's dtype, the staging dtype and the offset varied, on
v4-v7x. Probe kernels of their own, written for this question.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_row_store_scratch.py tests/data/tpu/row_store_scratch_probe.txt

Each row: generation, row dtype, staging dtype, offset (dynamic or 0), d, libtpu's verdict, the
report's internal scratch (count, bytes) and the Pallas call's total.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_counted_scratch  # noqa: E402
import probe_vreg_alloc  # noqa: E402

DTYPES = {"bf16": jnp.bfloat16, "f32": jnp.float32}
TOKENS, RB = 1024, 16


def build(row_dtype, stage_dtype, dynamic, d):
  def kernel(t_ref, o_ref, buf_ref):
    r = pl.program_id(1)
    row = t_ref[...].astype(DTYPES[stage_dtype])
    buf_ref[pl.ds(r if dynamic else 0, 1), :] = row

    @pl.when(r == RB - 1)
    def _():
      o_ref[...] = buf_ref[...].astype(o_ref.dtype)

  def fn(table):
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((TOKENS, d), DTYPES[row_dtype]), grid=(TOKENS // RB, RB),
        in_specs=[pl.BlockSpec((None, 1, d), lambda i, r: (i * RB + r, 0, 0))],
        out_specs=pl.BlockSpec((RB, d), lambda i, r: (i, 0)),
        scratch_shapes=[pltpu.VMEM((RB, d), DTYPES[stage_dtype])],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
        name="row_store_probe")(table)
  return fn, (jax.ShapeDtypeStruct((TOKENS, 1, d), DTYPES[row_dtype]),)


def probe(gen, row_dtype, stage_dtype, dynamic, d):
  fn, args = build(row_dtype, stage_dtype, dynamic, d)
  r = tpu_aot.compile_kernel(fn, args, gen)
  count, size = probe_counted_scratch.scratch_of(r, "internal scratch")
  return {"gen": gen, "row_dtype": row_dtype, "stage_dtype": stage_dtype, "offset": "dynamic" if dynamic else "0",
          "d": d, "verdict": r["verdict"], "internal_scratch": [count, size],
          "total_bytes": (r.get("pallas") or {}).get("total_bytes")}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, row, stage, dynamic, d) for gen in tpu_aot.GENERATIONS
          for row, stage in (("bf16", "f32"), ("f32", "f32"), ("bf16", "bf16"), ("f32", "bf16"))
          for dynamic in (True, False) for d in (768, 3072))
  probe_vreg_alloc.write_probe(argv[0], "internal scratch for one-row stores",
                               f"bench/tpu/probe_row_store_scratch.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
