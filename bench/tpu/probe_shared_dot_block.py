#!/usr/bin/env python3
"""What a loaded block that feeds two dots around a softmax spills: the weight-absorbed MLA decode's
shape, (hb, 512) queries scored against a (bk, 512) latent block (a transposed-right-operand dot),
the scores' row max and exp, then the same latent block as the values. Written after the eighth
held-out set's MLA decode spilled about four times the model's central, which takes a loaded
block to be loaded again where it is needed. Each shape twice: the score dot alone ("scores") and
the whole chain ("both"), f32 and bf16, on v5e, v6e and v7x.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_shared_dot_block.py docs/validation/data/tpu/shared-dot-block-probe.txt

Each row: generation, dtype, hb, bk, the case, libtpu's verdict and spill slots (the kernel's SPILL
allocations) at a raised scoped limit (sweep_spills.LIMITS), beside the latent block's bytes.
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

LATENT = 512
CONTRACT_MINOR = (((1,), (1,)), ((), ()))  # q k^T: both operands contracted on their minor dim
SHAPES = [(8, 512), (16, 1024), (32, 2048), (64, 1024)]  # (hb, bk)
CASES = ["scores", "both"]
GENERATIONS = ["v5e", "v6e", "v7x"]


def build(case, hb, bk, dtype, gen):
  def kernel(q_ref, kv_ref, o_ref):
    kv = kv_ref[...]
    s = jax.lax.dot_general(q_ref[...], kv, CONTRACT_MINOR, preferred_element_type=jnp.float32)
    if case == "scores":
      o_ref[...] = s[:, :LATENT]
      return
    p = jnp.exp(s - s.max(axis=1, keepdims=True))
    o_ref[...] = jnp.dot(p.astype(dtype), kv, preferred_element_type=jnp.float32)

  specs = [pl.BlockSpec((hb, LATENT), lambda i: (0, 0)), pl.BlockSpec((bk, LATENT), lambda i: (0, 0))]
  args = (jax.ShapeDtypeStruct((hb, LATENT), dtype), jax.ShapeDtypeStruct((bk, LATENT), dtype))
  return one_step_call(kernel, specs, (hb, LATENT), "shared_dot_block_probe", jnp.float32, LIMITS[gen]), args


def probe(gen, dtype, hb, bk, case):
  fn, args = build(case, hb, bk, dtype, gen)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "dtype": jnp.dtype(dtype).name, "hb": hb, "bk": bk, "case": case, "verdict": r["verdict"],
          "spill_bytes": kernel_spill_bytes(r), "latent_block_bytes": bk * LATENT * jnp.dtype(dtype).itemsize}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, dtype, hb, bk, case) for gen in GENERATIONS for dtype in (jnp.float32, jnp.bfloat16)
          for (hb, bk) in SHAPES for case in CASES)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a loaded block feeding two dots around a softmax",
                               f"bench/tpu/probe_shared_dot_block.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
