#!/usr/bin/env python3
"""How much of a dot's computed left operand libtpu keeps, against how many passes of the MXU the
right operand takes: a (m, k) left block computed in the body (scaled by a row, bf16 or f32) times
a loaded (k, n) right block, n from one MXU width to four, on every generation. Probe kernels of
their own, written after the first held-out set's im2col conv2d (a left operand of computed
windows) spilled far less than the replay's "held whole" where its right block is one MXU wide.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_left_operand_passes.py tests/data/tpu/left_operand_passes_probe.txt

Each row: generation, left dtype, m, k, n, the MXU passes n takes (n over the generation's MXU
width, models/devices), libtpu's verdict and spill slots (the Pallas kernel's SPILL allocations),
the left operand's bytes at 32 bits and the f32 result's bytes, the figures the slots are compared
with.
"""
import math
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
from fit_spill_model import MXU  # noqa: E402  (each generation's MXU edge and count)
from probe_converted_dot_operand import one_step_call  # noqa: E402
from sweep_spills import kernel_spill_bytes  # noqa: E402

F32, BF16 = jnp.float32, jnp.bfloat16
DTYPES = {"bf16": BF16, "f32": F32}
# (m, k): left blocks of 256 KiB to 4 MiB at bf16; n from 128 to 1024 lanes.
MK = [(256, 1024), (1024, 1024), (256, 2048), (2048, 1024)]
NS = [128, 256, 512, 1024]


def build(dtype, m, k, n):
  dt = DTYPES[dtype]

  def kernel(x_ref, s_ref, w_ref, o_ref):
    x = x_ref[...] * s_ref[...]
    o_ref[...] = jnp.dot(x, w_ref[...], preferred_element_type=F32)

  specs = [pl.BlockSpec((m, k), lambda i: (0, 0)), pl.BlockSpec((1, k), lambda i: (0, 0)),
           pl.BlockSpec((k, n), lambda i: (0, 0))]
  args = (jax.ShapeDtypeStruct((m, k), dt), jax.ShapeDtypeStruct((1, k), dt), jax.ShapeDtypeStruct((k, n), dt))
  return one_step_call(kernel, specs, (m, n), "left_operand_passes_probe"), args


def probe(gen, dtype, m, k, n):
  fn, args = build(dtype, m, k, n)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "dtype": dtype, "m": m, "k": k, "n": n, "passes": math.ceil(n / MXU[gen][0]),
          "verdict": r["verdict"], "spill_bytes": kernel_spill_bytes(r), "left_bytes_32": m * k * 4,
          "result_bytes": m * n * 4, "total_bytes": (r.get("pallas") or {}).get("total_bytes")}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, dtype, m, k, n) for gen in tpu_aot.GENERATIONS for dtype in DTYPES for (m, k) in MK
          for n in NS)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a computed left operand by the right one's MXU passes",
                               f"bench/tpu/probe_left_operand_passes.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
