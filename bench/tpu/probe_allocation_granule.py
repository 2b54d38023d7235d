#!/usr/bin/env python3
"""The size libtpu's scoped VMEM allocator gives a window whose bytes are not a whole KiB, read
from the LLO dump's allocation list (`#allocationN [shape = 'u8[512]{0}', space=vmem, size =
0x400, ...]`): a small side input (a norm's (1, d) weight, a bias row) beside a streamed block,
with a constant index map (one copy) and with a moving one (two copies, through a squeezed
leading dim), on every generation. Probe kernels of their own, written for this question.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_allocation_granule.py tests/data/tpu/allocation_granule_probe.txt

Each row: the side input's block, dtype and copies, and its allocation's listed shape (its bytes,
all copies together) beside the size the allocator gave it.
"""
import glob
import os
import re
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="tpu_llo_granule_")
os.environ["TPU_AOT_NO_DUMP"] = "1"
os.environ["LIBTPU_INIT_ARGS"] = (os.environ.get("LIBTPU_INIT_ARGS", "") + f" --xla_jf_dump_to={DUMP}"
                                  " --xla_jf_dump_hlo_text=false --xla_jf_dump_category_filter=all")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402

import probe_vreg_alloc  # noqa: E402
from product import tpu_aot  # noqa: E402

S = jax.ShapeDtypeStruct
ROWS, COLS, BR = 1024, 384, 128
GRID = ROWS // BR
# (rows, lanes, dtype) of the side input's block.
SIDE_BLOCKS = ((1, 128, "bf16"), (1, 384, "bf16"), (1, 640, "bf16"), (1, 128, "f32"), (1, 384, "f32"),
               (3, 384, "f32"), (8, 128, "f32"))
DTYPES = {"bf16": jnp.bfloat16, "f32": jnp.float32}
_ALLOCATION = re.compile(r"#allocation\d+ \[shape = 'u8\[(\d+)\][^']*', space=vmem, size = (0x[0-9a-f]+).*"
                         r"tag = 'input window allocation for operator input 1\.")


def build(rows, lanes, dtype, moving):
  """x + sum(w): x streamed in (BR, COLS) blocks, w the side input, its block (rows, lanes)."""
  def kernel(x_ref, w_ref, o_ref):
    o_ref[...] = x_ref[...] + jnp.sum(w_ref[...].astype(jnp.float32))

  stream = pl.BlockSpec((BR, COLS), lambda i: (i, 0))
  if moving:  # one (rows, lanes) block per grid step: double-buffered
    side, side_shape = pl.BlockSpec((None, rows, lanes), lambda i: (i, 0, 0)), (GRID, rows, lanes)
  else:  # the same block at every step: one copy
    side, side_shape = pl.BlockSpec((rows, lanes), lambda i: (0, 0)), (rows, lanes)

  def fn(x, w):
    return pl.pallas_call(kernel, out_shape=S((ROWS, COLS), jnp.float32), grid=(GRID,), in_specs=[stream, side],
                          out_specs=stream, name="granule_probe")(x, w)
  return fn, (S((ROWS, COLS), jnp.float32), S(side_shape, DTYPES[dtype]))


def probe(gen, rows, lanes, dtype, moving):
  shutil.rmtree(DUMP, ignore_errors=True)
  os.makedirs(DUMP, exist_ok=True)
  fn, args = build(rows, lanes, dtype, moving)
  r = tpu_aot.compile_kernel(fn, args, gen)
  found = set()
  for path in glob.glob(os.path.join(DUMP, "*post-bundle*")):
    with open(path, errors="replace") as f:
      found.update((int(m.group(1)), int(m.group(2), 16)) for m in map(_ALLOCATION.search, f) if m)
  row = {"gen": gen, "block": [rows, lanes], "dtype": dtype, "copies": 2 if moving else 1, "verdict": r["verdict"]}
  if len(found) == 1:
    (listed, size), = found
    row.update(listed_bytes=listed, allocated_bytes=size)
  return row


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, rows, lanes, dtype, moving) for gen in tpu_aot.GENERATIONS for moving in (False, True)
          for rows, lanes, dtype in SIDE_BLOCKS)
  probe_vreg_alloc.write_probe(argv[0], "the scoped VMEM allocator's granule", f"bench/tpu/probe_allocation_granule.py {argv[0]}",
                               rows)


if __name__ == "__main__":
  main(sys.argv[1:])
