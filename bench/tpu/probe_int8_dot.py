#!/usr/bin/env python3
"""What an int8 x int8 dot into int32 spills beside the bf16 x bf16 dot into f32 of the same shape:
one loaded (m, k) block times one loaded (k, n) block, nothing else in the body, on v5e, v5p, v6e
and v7x (v4's Mosaic does not lower an int8 right operand). Written after the eighth held-out set's
w8a8 matmul spilled where the widened central, which leaves 8-bit dots out, said 0.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_int8_dot.py docs/validation/data/tpu/int8-dot-probe.txt

Each row: generation, the case, m, k, n, libtpu's verdict, its spill slots (the kernel's SPILL
allocations) and the kernel's total, compiled at a raised scoped limit (sweep_spills.LIMITS) so
every shape reports its slots.
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
from sweep_spills import LIMITS, kernel_spill_bytes  # noqa: E402

# (operand type, result type): the int8 dot and its bf16 control.
CASES = [(jnp.int8, jnp.int32), (jnp.bfloat16, jnp.float32)]
SHAPES = [(256, 512, 512), (512, 512, 512), (512, 1024, 1024), (1024, 1024, 512), (1024, 2048, 1024),
          (2048, 1024, 1024), (512, 2048, 512), (256, 1024, 2048)]
GENERATIONS = ["v5e", "v5p", "v6e", "v7x"]


def build(case, m, k, n, gen):
  operand, result = case

  def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=result)

  specs = [pl.BlockSpec((m, k), lambda i: (0, 0)), pl.BlockSpec((k, n), lambda i: (0, 0))]
  args = (jax.ShapeDtypeStruct((m, k), operand), jax.ShapeDtypeStruct((k, n), operand))
  return one_step_call(kernel, specs, (m, n), "int8_dot_probe", result, LIMITS[gen]), args


def probe(gen, case, m, k, n):
  fn, args = build(case, m, k, n, gen)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "case": f"{jnp.dtype(case[0]).name} -> {jnp.dtype(case[1]).name}", "m": m, "k": k, "n": n,
          "verdict": r["verdict"], "spill_bytes": kernel_spill_bytes(r),
          "total_bytes": (r.get("pallas") or {}).get("total_bytes")}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, case, m, k, n) for gen in GENERATIONS for case in CASES for (m, k, n) in SHAPES)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of an int8 dot into int32 beside a bf16 dot into f32",
                               f"bench/tpu/probe_int8_dot.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
