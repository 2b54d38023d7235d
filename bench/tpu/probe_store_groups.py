#!/usr/bin/env python3
"""What an elementwise body with several stored results holds in registers, read from libtpu's LLO
dump: f32 blocks x, y, z in; a = 0.9 y + 0.1 x and b = 0.99 z + 0.01 x^2, and o = x - 0.01 (a (b + 1)
+ 0.1 x) out, stored in a chosen order (or o alone, or a and b alone). Probe kernels of their own
(the shape of an optimizer update: results computed from shared inputs, each stored to its own
buffer); never a held-out family's kernel. No column, no barrier, no slow unit.

For each body, block and generation: the kernel's spill slots (vregs), the block's vregs, the
register pressure P of the schedule LLO hands its allocator, how the critical-path scheduler orders
the stores (each output buffer's stores as runs, in its order: "a128 o128 b128" is every store of a,
then of o, then of b), and, of the live ranges at P's peak, how many are values an output stores
(by output) and how many are other computed values.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_store_groups.py docs/validation/data/tpu/store-groups-probe.txt
"""
import glob
import itertools
import os
import re
import sys

os.environ["TPU_AOT_BUNDLES"] = "1"  # before tpu_aot's import: it dumps the LLO text of every compile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_vreg_alloc  # noqa: E402
from product import tpu_aot  # noqa: E402

F32 = jnp.float32
ROWS = 8192
# The stores each body makes, in program order.
BODIES = ("o", "ab", "oab", "abo")
BLOCKS = ((256, 512), (512, 1024))  # 128 and 512 f32 vregs a block
GENS = ("v5e", "v6e")
OUTPUT_NAMES = "oab"


def build(order, br, d, name):
  """The probe kernel storing `order`'s results; outputs in OUTPUT_NAMES order, unused ones dropped."""
  outputs = [n for n in OUTPUT_NAMES if n in order]

  def kernel(x_ref, y_ref, z_ref, *out_refs):
    x = x_ref[...]
    a = 0.9 * y_ref[...] + 0.1 * x
    b = 0.99 * z_ref[...] + 0.01 * x * x
    values = {"a": a, "b": b, "o": x - 0.01 * (a * (b + 1.0) + 0.1 * x)}
    refs = dict(zip(outputs, out_refs))
    for n in order:
      refs[n][...] = values[n]

  block = pl.BlockSpec((br, d), lambda i: (i, 0))
  shape = jax.ShapeDtypeStruct((ROWS, d), F32)

  def fn(x, y, z):
    return pl.pallas_call(
        kernel, out_shape=tuple(shape for _ in outputs), grid=(ROWS // br,), in_specs=[block] * 3,
        out_specs=tuple(block for _ in outputs), name=name,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",), vmem_limit_bytes=120 * 2**20))(x, y, z)
  return fn, (shape, shape, shape), outputs


def _dump(kernel, pattern):
  paths = [p for p in glob.glob(os.path.join(tpu_aot.DUMP_DIR, f"*-{kernel}-*")) if re.search(pattern, os.path.basename(p))]
  if not paths:
    return ""
  with open(sorted(paths)[0], errors="replace") as f:
    return f.read()


def output_bases(mosaic_text, outputs):
  """{store base register: output name}: the original listing's store bases in first-store order,
  which is the program's order of the outputs' first stores."""
  bases = []
  for base in re.findall(r"= vst \[vmem:\[(%s\d+)", mosaic_text):
    if base not in bases:
      bases.append(base)
  return dict(zip(bases, outputs))


def store_runs(text, names):
  """The listing's stores as runs of one output: "a128 o128 b128"."""
  seq = [names.get(b, "?") for b in re.findall(r"= vst \[vmem:\[(%s\d+)", text)]
  return " ".join(f"{n}{len(list(g))}" for n, g in itertools.groupby(seq))


def peak_by_output(pressure_text, names):
  """Of the live ranges listed at P's peak: per output, those some store of it reads, and "other"."""
  counts = {}
  for block in re.split(r"\n(?=len=)", pressure_text):
    if not block.startswith("len="):
      continue
    stored = re.findall(r"use: .*= vst \[vmem:\[(%s\d+)", block)
    key = names.get(stored[0], "?") if stored else "other"
    counts[key] = counts.get(key, 0) + 1
  return counts


def probe(order, br, d, gen):
  name = f"store_groups_{order}_{br}x{d}"
  fn, args, outputs = build(order, br, d, name)
  result = tpu_aot.compile_kernel(fn, args, gen)
  row = {"body": order, "block": [br, d], "block_vregs": br * d // 1024, "gen": gen, "verdict": result["verdict"]}
  kernels = (result.get("pallas") or {}).get("kernels") or []
  if result["verdict"] != "fits" or len(kernels) != 1:
    return row
  kernel = kernels[0]
  # The program's store order names the outputs: Mosaic stores in the body's order.
  names = output_bases(_dump(kernel, r"-\d+-original\.txt$"), list(order))
  pressure = _dump(kernel, r"register-pressure\.txt$")
  row.update({
      "spill_vregs": result["report"]["kernels"][kernel]["spill_bytes"] // 4096,
      "pressure": probe_vreg_alloc.register_pressure(pressure),
      "cp_store_runs": store_runs(_dump(kernel, r"-\d+-DGO-post-critical-path-scheduler\.txt$"), names),
      "peak_live_by_output": peak_by_output(pressure, names),
  })
  return row


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(order, br, d, gen) for gen in GENS for (br, d) in BLOCKS for order in BODIES)
  probe_vreg_alloc.write_probe(argv[0], "stores of several results from one elementwise body, read from LLO's dump",
                               f"bench/tpu/probe_store_groups.py {argv[0]} (docs/tpu.md, \"Several stored results\")",
                               rows)


if __name__ == "__main__":
  main(sys.argv[1:])
