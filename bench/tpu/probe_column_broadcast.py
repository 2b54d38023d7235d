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

With --variants, what moves that figure: the slow unit without a column (exp, tanh, rsqrt of the
block alone), the column's place in the chain and the work after it, two columns, and the block's
input dtype and size (bf16 or f32 input, 256 x 4096 or 128 x 2048), every body on each:

  ... bench/tpu/probe_column_broadcast.py --variants docs/validation/data/tpu/column-broadcast-variants.txt
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

VARIANT_BODIES = {
    "exp": lambda x, a, b, c, col: jnp.exp(x),
    "exp, times 2 plus 1 first": lambda x, a, b, c, col: jnp.exp(x * 2.0 + 1.0),
    "tanh": lambda x, a, b, c, col: jnp.tanh(x),
    "rsqrt": lambda x, a, b, c, col: jax.lax.rsqrt(x),
    "exp, minus a constant, minus x": lambda x, a, b, c, col: jnp.exp(x - 3.0) - x,
    "minus a column": lambda x, a, b, c, col: x - a,
    "times a column": lambda x, a, b, c, col: x * c,
    "minus a column, then times 2": lambda x, a, b, c, col: (x - a) * 2.0,
    "minus a column, then times 2 plus 1": lambda x, a, b, c, col: (x - a) * 2.0 + 1.0,
    "times 2, then minus a column": lambda x, a, b, c, col: x * 2.0 - a,
    "times 2 plus 1, then minus a column": lambda x, a, b, c, col: (x * 2.0 + 1.0) - a,
    "minus two columns": lambda x, a, b, c, col: x - a - c,
    "two columns, product of differences": lambda x, a, b, c, col: (x - a) * (x - c),
    "exp, times a column": lambda x, a, b, c, col: jnp.exp(x) * c,
}
# (input dtype, block rows, block columns) of the variants.
VARIANT_BLOCKS = (("bf16", 256, 4096), ("f32", 256, 4096), ("bf16", 128, 2048))
DTYPES = {"bf16": jnp.bfloat16, "f32": F32}


def build(body, name, x_dtype=jnp.bfloat16, block=(BR, BC)):
  br, bc = block

  def kernel(x_ref, a_ref, b_ref, c_ref, o_ref):
    col = pl.program_id(1) * bc + jax.lax.broadcasted_iota(I32, (br, bc), 1)
    o_ref[...] = body(x_ref[...].astype(F32), a_ref[...], b_ref[...], c_ref[...], col).astype(o_ref.dtype)

  def fn(x, a, b, c):
    blk = pl.BlockSpec((br, bc), lambda i, j: (i, j))
    column = pl.BlockSpec((br, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((ROWS, COLS), x_dtype), grid=(ROWS // br, COLS // bc),
        in_specs=[blk, column, column, column], out_specs=blk,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel"),
                                             vmem_limit_bytes=100 << 20),
        name=name)(x, a, b, c)
  s = jax.ShapeDtypeStruct
  return fn, (s((ROWS, COLS), x_dtype), s((ROWS, 1), F32), s((ROWS, 1), I32), s((ROWS, 1), F32))


def probe(gen, name, body, x_dtype_name="bf16", block=(BR, BC)):
  kernel_name = "probe_" + "".join(ch if ch.isalnum() else "_" for ch in name)
  fn, args = build(body, kernel_name, DTYPES[x_dtype_name], block)
  r = tpu_aot.compile_kernel(fn, args, gen)
  row = {"gen": gen, "body": name, "verdict": r["verdict"], "f32_block_vregs": block[0] * block[1] // 1024}
  if (x_dtype_name, block) != ("bf16", (BR, BC)):
    row.update(input_dtype=x_dtype_name, block=list(block))
  kernels = (r.get("pallas") or {}).get("kernels") or []
  if r["verdict"] != "fits" or len(kernels) != 1:
    return row
  report = r["report"]["kernels"][kernels[0]]
  pressure = probe_vreg_alloc._dump_file(tpu_aot.DUMP_DIR, kernels[0], r"register-pressure\.txt$")
  row.update(spill_vregs=report["spill_bytes"] // 4096, pressure=probe_vreg_alloc.register_pressure(pressure),
             peak_ops=probe_vreg_alloc.peak_ops(pressure))
  return row


def main(argv):
  variants = argv[:1] == ["--variants"]
  argv = argv[1:] if variants else argv
  if len(argv) != 1:
    sys.exit(__doc__)
  if variants:
    rows = (probe(gen, name, body, dtype, (br, bc)) for gen in GENS for dtype, br, bc in VARIANT_BLOCKS
            for name, body in VARIANT_BODIES.items())
    title, command = "what moves a column broadcast's spill", f"bench/tpu/probe_column_broadcast.py --variants {argv[0]}"
  else:
    rows = (probe(gen, name, body) for gen in GENS for name, body in BODIES.items())
    title, command = "column broadcasts across the lanes in LLO's schedule", f"bench/tpu/probe_column_broadcast.py {argv[0]}"
  probe_vreg_alloc.write_probe(argv[0], title, command, rows)


if __name__ == "__main__":
  main(sys.argv[1:])
