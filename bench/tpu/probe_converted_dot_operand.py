#!/usr/bin/env python3
"""What Mosaic keeps of a dot operand the body converts from a narrow type: a (m, k) bf16 block
times a (k, n) block loaded as int8 (or int4, or bf16 for the control) and converted in the body to
bf16 or f32, the converted operand on the right or the left, contracted on its major or its minor
dim, scaled after the convert or not, on every generation. Probe kernels of their own, written
after the fifth held-out set's v4 int8 KV decode attention spilled about its converted K block at
32 bits.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_converted_dot_operand.py tests/data/tpu/converted_dot_operand_probe.txt

Each row: generation, the case (source and target dtype, side, contraction, scaled), m, k, n,
libtpu's verdict, its spill slots (the Pallas kernel's SPILL allocations) and the converted
operand's bytes at 32 bits (k x n x 4), the figure the spills are compared with.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_vreg_alloc  # noqa: E402
from sweep_spills import kernel_spill_bytes  # noqa: E402

DTYPES = {"i8": jnp.int8, "i4": jnp.int4, "bf16": jnp.bfloat16, "f32": jnp.float32}
F32 = jnp.float32

# (source, target, side, contraction, scaled): side "rhs" converts the (k, n) operand, "lhs" a
# (m, k) one in place of the bf16 block; contraction "minor" stores the converted operand as
# (n, k) and contracts its minor dim (the q.k^T of attention); scaled multiplies the converted
# operand by a per-column f32 scale before the dot (a dequantization).
CASES = [
    ("i8", "bf16", "rhs", "major", False),
    ("i8", "bf16", "rhs", "minor", False),
    ("i8", "f32", "rhs", "major", False),
    ("i8", "bf16", "rhs", "major", True),
    ("i8", "bf16", "lhs", "major", False),
    ("i4", "bf16", "rhs", "major", False),
    ("bf16", "f32", "rhs", "major", False),  # a 16-bit operand widened: the control
]
# (m, k, n): the converted (k, n) block from 64 KiB to 2 MiB of int8.
SHAPES = [(8, 256, 256), (8, 512, 512), (8, 1024, 1024), (128, 1024, 1024), (8, 2048, 1024), (8, 4096, 512),
          (8, 2048, 2048)]


def build(case, m, k, n):
  source, target, side, contraction, scaled = case
  tgt = DTYPES[target]

  def kernel(*refs):
    if scaled:
      x_ref, w_ref, s_ref, o_ref = refs
    else:
      (x_ref, w_ref, o_ref), s_ref = refs, None
    w = w_ref[...].astype(tgt)
    if scaled:
      w = w * s_ref[...].astype(tgt)
    x = x_ref[...]
    if side == "lhs":  # the converted block is the left operand: (k, n) read as (m', k') = (k, n)
      o_ref[...] = jnp.dot(w, x.astype(tgt), preferred_element_type=F32)
    elif contraction == "minor":
      o_ref[...] = jax.lax.dot_general(x.astype(tgt), w, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    else:
      o_ref[...] = jnp.dot(x.astype(tgt), w, preferred_element_type=F32)

  if side == "lhs":  # o = w (k x n) @ x (n x m)
    x_shape, w_shape, o_shape = (n, m * 16), (k, n), (k, m * 16)
  else:
    x_shape, o_shape = (m, k), (m, n)
    w_shape = (n, k) if contraction == "minor" else (k, n)
  specs = [pl.BlockSpec(x_shape, lambda i: (0, 0)), pl.BlockSpec(w_shape, lambda i: (0, 0))]
  args = [jax.ShapeDtypeStruct(x_shape, jnp.bfloat16), jax.ShapeDtypeStruct(w_shape, DTYPES[source])]
  if scaled:
    specs.append(pl.BlockSpec((1, w_shape[1]), lambda i: (0, 0)))
    args.append(jax.ShapeDtypeStruct((1, w_shape[1]), F32))

  return one_step_call(kernel, specs, o_shape, "converted_dot_probe"), tuple(args)


def one_step_call(kernel, specs, out_shape, name, out_dtype=F32, vmem_limit_bytes=None):
  """A probe kernel's pallas_call: one grid step, every block whole (the default limit unless given)."""
  def fn(*a):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(out_shape, out_dtype), grid=(1,), in_specs=specs,
                          out_specs=pl.BlockSpec(out_shape, lambda i: (0, 0)),
                          compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",),
                                                               vmem_limit_bytes=vmem_limit_bytes),
                          name=name)(*a)
  return fn


def probe(gen, case, m, k, n):
  fn, args = build(case, m, k, n)
  r = tpu_aot.compile_kernel(fn, args, gen)
  source, target, side, contraction, scaled = case
  return {"gen": gen, "case": f"{source}->{target} {side} {contraction}{' scaled' if scaled else ''}",
          "m": m, "k": k, "n": n, "verdict": r["verdict"], "spill_bytes": kernel_spill_bytes(r),
          "converted_32bit_bytes": k * n * 4, "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
          "size_bytes": r.get("size_bytes")}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, case, m, k, n) for gen in tpu_aot.GENERATIONS for case in CASES for (m, k, n) in SHAPES)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a dot operand converted in the body",
                               f"bench/tpu/probe_converted_dot_operand.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
