#!/usr/bin/env python3
"""What a column broadcast across the lanes costs in registers, read from libtpu's LLO dump: an
elementwise body over a (256, 4096) block whose operands include (256, 1) columns (a row's
log-sum-exp, its label, an upstream gradient), beside the same body with constants. Probe kernels
of their own, written for this question (the structure of a cross-entropy backward); never a
held-out family's kernel.

For each body and generation: the kernel's spill slots (vregs), the register pressure P of the
schedule LLO hands its allocator and the ops defining the live ranges at that peak
(bench/tpu/probe_vreg_alloc.py reads the dump the same way).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_column_broadcast.py docs/validation/data/tpu/column-broadcast-probe.txt
"""
import os
import sys

os.environ["TPU_AOT_BUNDLES"] = "1"  # before tpu_aot's import: it dumps the LLO text of every compile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_vreg_alloc  # noqa: E402
from product import tpu_aot  # noqa: E402

F32, I32 = jnp.float32, jnp.int32
ROWS, COLS, BR, BC = 1024, 16384, 256, 4096
GENS = ("v4", "v5e", "v6e", "v7x")

# name -> body(x, column_a, column_b, column_c, lane_index): x the f32 block, the columns (BR, 1).
BODIES = {
    "constants": lambda x, a, b, c, col: x * 2.0 + 1.0,
    "minus a column": lambda x, a, b, c, col: x - a,
    "exp, minus a column": lambda x, a, b, c, col: jnp.exp(x - a),
    "exp, minus a column, times a column": lambda x, a, b, c, col: jnp.exp(x - a) * c,
    "one-hot of a column": lambda x, a, b, c, col: jnp.where(col == b, 1.0, 0.0) - x,
    "three columns (cross-entropy backward)":
        lambda x, a, b, c, col: (jnp.exp(x - a) - jnp.where(col == b, 1.0, 0.0)) * c,
}


def build(body, name):
  def kernel(x_ref, a_ref, b_ref, c_ref, o_ref):
    col = pl.program_id(1) * BC + jax.lax.broadcasted_iota(I32, (BR, BC), 1)
    o_ref[...] = body(x_ref[...].astype(F32), a_ref[...], b_ref[...], c_ref[...], col).astype(o_ref.dtype)

  def fn(x, a, b, c):
    blk = pl.BlockSpec((BR, BC), lambda i, j: (i, j))
    column = pl.BlockSpec((BR, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((ROWS, COLS), jnp.bfloat16), grid=(ROWS // BR, COLS // BC),
        in_specs=[blk, column, column, column], out_specs=blk,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel"),
                                             vmem_limit_bytes=100 << 20),
        name=name)(x, a, b, c)
  s = jax.ShapeDtypeStruct
  return fn, (s((ROWS, COLS), jnp.bfloat16), s((ROWS, 1), F32), s((ROWS, 1), I32), s((ROWS, 1), F32))


def probe(gen, name, body):
  kernel_name = "probe_" + "".join(ch if ch.isalnum() else "_" for ch in name)
  fn, args = build(body, kernel_name)
  r = tpu_aot.compile_kernel(fn, args, gen)
  row = {"gen": gen, "body": name, "verdict": r["verdict"], "f32_block_vregs": BR * BC // 1024}
  kernels = (r.get("pallas") or {}).get("kernels") or []
  if r["verdict"] != "fits" or len(kernels) != 1:
    return row
  report = r["report"]["kernels"][kernels[0]]
  pressure = probe_vreg_alloc._dump_file(tpu_aot.DUMP_DIR, kernels[0], r"register-pressure\.txt$")
  row.update(spill_vregs=report["spill_bytes"] // 4096, pressure=probe_vreg_alloc.register_pressure(pressure),
             peak_ops=probe_vreg_alloc.peak_ops(pressure))
  return row


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, name, body) for gen in GENS for name, body in BODIES.items())
  probe_vreg_alloc.write_probe(argv[0], "column broadcasts across the lanes in LLO's schedule",
                               f"bench/tpu/probe_column_broadcast.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
