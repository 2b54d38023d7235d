#!/usr/bin/env python3
"""Whose spills the heads-concatenated output projection has: the ninth held-out set's
mha_concat_outproj (heldout_kernels: every head's attention output, then one dot of their
concatenation with the projection) compiled beside the same product without the concatenation
(each head times its rows of the projection, summed), at 64-lane heads (part tiles, moved into new
vregs at the concatenation) and 128-lane heads (whole tiles). Written after the 16-head, d = 64 rows
spilled past the replay's bound on v5e and v5p.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_part_tile_concat.py docs/validation/data/tpu/part-tile-concat-probe.txt

Each row: generation, the shape (seq, heads, d, bq, dm, bn), how the heads are combined, libtpu's
verdict, the Pallas call's scoped total and its spill slots at a raised scoped limit
(sweep_spills.LIMITS).
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

# (seq, heads, d, bq, dm, bn): the two held-out 64-lane shapes, the 128-lane one of the same block,
# and the 16-head shape at 128 lanes.
SHAPES = [(512, 16, 64, 256, 1024, 1024), (256, 12, 64, 128, 768, 768), (512, 8, 128, 256, 1024, 1024),
          (512, 16, 128, 256, 1024, 1024)]
GENERATIONS = ["v4", "v5e", "v6e"]


def probe(gen, shape, combine):
  fn, args = hk.mha_concat_outproj(*shape, "bf16", LIMITS[gen], combine)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "shape": list(shape), "combine": combine, "verdict": r["verdict"],
          "total_bytes": (r.get("pallas") or {}).get("total_bytes"), "spill_bytes": kernel_spill_bytes(r)}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, shape, combine) for gen in GENERATIONS for shape in SHAPES
          for combine in ("concat", "accumulate"))
  probe_vreg_alloc.write_probe(argv[0], "spill slots of heads concatenated or accumulated into a projection",
                               f"bench/tpu/probe_part_tile_concat.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
