#!/usr/bin/env python3
"""What Mosaic keeps of a dot's left operand while it converts the right one from 8 bits vreg by
vreg: a (m, k) left block, loaded (bf16 or f32) or converted from fp8, times a (k, n) right block
loaded as int8 and converted in the body (or loaded as bf16, or scaled in bf16, for the controls),
on every generation. Probe kernels of their own, written after the sixth held-out set's quantized
linear spilled about its activation block on v5e-v7x, where the weights are converted vreg by vreg
(tests/data/tpu/converted_dot_operand_probe.txt).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_streamed_dot_operand.py tests/data/tpu/streamed_dot_operand_probe.txt

Each row: generation, the case (left operand, right operand, contraction), m, k, n, libtpu's
verdict, its spill slots (the Pallas kernel's SPILL allocations) and the left operand's bytes at
its dot width (m x k x 2 for bf16, x 4 for f32), the figure the spills are compared with.
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

import probe_vreg_alloc  # noqa: E402
from probe_converted_dot_operand import one_step_call  # noqa: E402
from sweep_spills import kernel_spill_bytes  # noqa: E402

F32, BF16 = jnp.float32, jnp.bfloat16
# (left, right, contraction): left "bf16" / "f32" is loaded as it is, "f8->bf16" is an fp8 block
# converted in the body; right "i8->T" is an int8 block converted to T in the body, "bf16" a bf16
# block loaded as it is (the control: nothing converted), "bf16*s" a bf16 block scaled in the body
# (a 16-bit computed operand); contraction "minor" stores the right block as (n, k), a linear in
# PyTorch's (out, in) layout.
CASES = [
    ("bf16", "i8->bf16", "major"),
    ("bf16", "i8->bf16", "minor"),
    ("f32", "i8->f32", "major"),
    ("f8->bf16", "i8->bf16", "major"),
    ("bf16", "bf16", "major"),
    ("bf16", "bf16*s", "major"),
]
# (m, k, n): left blocks of 256 KiB to 4 MiB at bf16.
SHAPES = [(128, 1024, 1024), (256, 1024, 1024), (512, 1024, 1024), (1024, 1024, 512), (512, 2048, 512),
          (1024, 2048, 512)]


def left_dtypes(left):
  """The left block's dtype in HBM and at the dot."""
  return {"bf16": (BF16, BF16), "f32": (F32, F32), "f8->bf16": (jnp.float8_e4m3fn, BF16)}[left]


def right_dtypes(right):
  return {"i8->bf16": (jnp.int8, BF16), "i8->f32": (jnp.int8, F32), "bf16": (BF16, BF16),
          "bf16*s": (BF16, BF16)}[right]


def build(case, m, k, n):
  left, right, contraction = case
  (x_src, x_dot), (w_src, w_dot) = left_dtypes(left), right_dtypes(right)
  scaled = right == "bf16*s"

  def kernel(*refs):
    if scaled:
      x_ref, w_ref, s_ref, o_ref = refs
    else:
      (x_ref, w_ref, o_ref), s_ref = refs, None
    x = x_ref[...].astype(x_dot)
    w = w_ref[...].astype(w_dot)
    if scaled:
      w = w * s_ref[...]
    if contraction == "minor":
      o_ref[...] = jax.lax.dot_general(x, w, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    else:
      o_ref[...] = jnp.dot(x, w, preferred_element_type=F32)

  w_shape = (n, k) if contraction == "minor" else (k, n)
  specs = [pl.BlockSpec((m, k), lambda i: (0, 0)), pl.BlockSpec(w_shape, lambda i: (0, 0))]
  args = [jax.ShapeDtypeStruct((m, k), x_src), jax.ShapeDtypeStruct(w_shape, w_src)]
  if scaled:
    specs.append(pl.BlockSpec((1, n), lambda i: (0, 0)))
    args.append(jax.ShapeDtypeStruct((1, n), BF16))

  return one_step_call(kernel, specs, (m, n), "streamed_dot_probe"), tuple(args)


def probe(gen, case, m, k, n):
  fn, args = build(case, m, k, n)
  r = tpu_aot.compile_kernel(fn, args, gen)
  left, right, contraction = case
  return {"gen": gen, "case": f"{left} x {right} {contraction}", "m": m, "k": k, "n": n,
          "verdict": r["verdict"], "spill_bytes": kernel_spill_bytes(r),
          "left_dot_bytes": m * k * jnp.dtype(left_dtypes(left)[1]).itemsize,
          "total_bytes": (r.get("pallas") or {}).get("total_bytes"), "size_bytes": r.get("size_bytes")}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, case, m, k, n) for gen in tpu_aot.GENERATIONS for case in CASES for (m, k, n) in SHAPES)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a dot's left operand against a right one converted "
                               "from 8 bits", f"bench/tpu/probe_streamed_dot_operand.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
