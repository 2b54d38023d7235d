#!/usr/bin/env python3
"""What the eleventh held-out set's causal conv1d spills with no whole-operand op in its body: the
set's causal_conv1d_taps (heldout_kernels: 1-4 taps, each a shifted row slice of a padded block
times a broadcast weight row, summed, then SiLU) at channel blocks of 128-1,280 lanes and 1-4 taps,
one 1,024-row sequence over two channel blocks, bf16. Written after the set's v5e-v7x rows spilled 24-311 KB where the vreg
replay holds nothing.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_conv_taps.py docs/validation/data/tpu/conv-taps-probe.txt

Each row: generation, the channel block, the taps, libtpu's verdict and the Pallas call's spill
slots at a raised scoped limit (sweep_spills.LIMITS).
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

CHANNEL_BLOCKS = [128, 256, 512, 768, 1024, 1280]
TAPS = [1, 2, 3, 4]
GENERATIONS = ["v5e", "v6e"]


def probe(gen, bc, taps):
  fn, args = hk.causal_conv1d_taps(1, 1024, 2 * bc, bc, width=taps, limit=LIMITS[gen])
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "bc": bc, "taps": taps, "verdict": r["verdict"], "spill_bytes": kernel_spill_bytes(r)}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, bc, taps) for gen in GENERATIONS for bc in CHANNEL_BLOCKS for taps in TAPS)
  probe_vreg_alloc.write_probe(argv[0], "spill slots of a causal conv1d by its channel block and taps",
                               f"bench/tpu/probe_conv_taps.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
