#!/usr/bin/env python3
"""How the spill slots of a streaming RoPE grow with its heads: the first held-out set's rope
(heldout_kernels: each head of a (heads, bt, d) block rotated by pltpu.roll against shared cos and
sin tables, no whole-operand op anywhere) compiled at 1-16 query heads and one KV head. Written after
the set's rope rows spilled 0.2-2.3 MB where the vreg replay holds nothing (no barrier).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_rope_heads.py docs/validation/data/tpu/rope-heads-probe.txt

Each row: generation, the shape (bt, d, dtype), the query heads, libtpu's verdict and the Pallas
call's spill slots at a raised scoped limit (sweep_spills.LIMITS).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

import heldout_kernels as hk  # noqa: E402
import probe_vreg_alloc  # noqa: E402
from sweep_spills import LIMITS, kernel_spill_bytes  # noqa: E402

# (bt, d, dtype): two held-out bf16 shapes at head dim 128, and the f32 one at 64 (a part-tile roll).
SHAPES = [(128, 128, "bf16"), (256, 128, "bf16"), (512, 64, "f32")]
HEADS = [1, 2, 4, 8, 16]
GENERATIONS = ["v5e", "v6e"]


def probe(gen, shape, heads):
  bt, d, dtype = shape
  fn, args = hk.rope(2048, heads, 1, d, bt, dtype, LIMITS[gen])
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "shape": list(shape), "q_heads": heads, "verdict": r["verdict"],
          "spill_bytes": kernel_spill_bytes(r)}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, shape, heads) for gen in GENERATIONS for shape in SHAPES for heads in HEADS)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a streaming RoPE by its heads",
                               f"bench/tpu/probe_rope_heads.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
