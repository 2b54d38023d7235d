#!/usr/bin/env python3
"""Whose spills a matmul with an epilogue has: the held-out matmul + bias + GELU
(heldout_kernels.matmul_bias_gelu: an f32 accumulator, the epilogue at the last k step) compiled
three ways at the same blocks, with the tanh GELU of acc + bias, with acc + bias alone and with acc
alone. Written after the held-out family's spills (bf16, growing with the K block) stayed outside
the matmul band, which the GELU's ops widen.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_epilogue_spills.py docs/validation/data/tpu/epilogue-spill-probe.txt

Each row: generation, dtype, (bm, bn, bk), the epilogue, libtpu's verdict, the Pallas call's scoped
total and its spill slots (the kernel's SPILL allocations) at a raised scoped limit
(sweep_spills.LIMITS).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

import jax.numpy as jnp  # noqa: E402

import heldout_kernels as hk  # noqa: E402
import probe_vreg_alloc  # noqa: E402
from sweep_spills import LIMITS, kernel_spill_bytes  # noqa: E402

BLOCKS = [(512, 512, 1024), (512, 512, 512), (256, 256, 1024), (512, 512, 2048), (384, 1152, 768), (256, 512, 512)]
EPILOGUES = {"gelu": hk._bias_gelu,
             "bias": lambda acc, b_ref: acc + b_ref[...].astype(jnp.float32),
             "none": lambda acc, b_ref: acc}
GENERATIONS = ["v4", "v5e", "v6e", "v7x"]


def probe(gen, dtype, block, epilogue):
  fn, args = hk.matmul_bias_gelu(*block, dtype, LIMITS[gen], EPILOGUES[epilogue])
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "dtype": jnp.dtype(hk.DTYPES[dtype]).name, "block": list(block), "epilogue": epilogue,
          "verdict": r["verdict"], "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
          "spill_bytes": kernel_spill_bytes(r)}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, dtype, block, epilogue) for gen in GENERATIONS for block in BLOCKS
          for dtype in ("bf16", "f32") for epilogue in EPILOGUES)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a matmul under three epilogues",
                               f"bench/tpu/probe_epilogue_spills.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
