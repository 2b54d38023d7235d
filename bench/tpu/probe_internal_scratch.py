#!/usr/bin/env python3
"""Mosaic's 'internal scratch' VMEM allocation per generation, and whether the scoped limit
counts it.

The vmem_report that make_corpus.py reads does not list it; the LLO text dump does
(`#allocationN [shape = 'u32[72,128]...', space=vmem, size = 0x9000, scoped, tag = 'internal
scratch']`). This script turns the full LLO dump on (slow, tens of MB per compile), so it is
separate from the corpus:

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/probe_internal_scratch.py

Part 1: the internal scratch of three kernels (matmul, copy, flash attention) per generation.
Part 2: a copy kernel whose blocks are exactly 16 MiB (2 x 4 MiB in + 2 x 4 MiB out) under
vmem_limit_bytes = 16 MiB and 16 MiB - 1, with the default internal scratch and with
CompilerParams(internal_scratch_in_bytes=1 MiB): if the limit counted the internal scratch,
16 MiB would not fit.
(ALLOW_MULTIPLE_LIBTPU_LOAD=1 lets it run beside another libtpu process, e.g. make_corpus.py.)
"""
import glob
import os
import re
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="tpu_llo_full_")
os.environ["TPU_AOT_NO_DUMP"] = "1"
os.environ["LIBTPU_INIT_ARGS"] = (os.environ.get("LIBTPU_INIT_ARGS", "") + f" --xla_jf_dump_to={DUMP}"
                                  " --xla_jf_dump_hlo_text=false --xla_jf_dump_category_filter=all")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402
import tpu_kernels  # noqa: E402

_RE = re.compile(r"#allocation\d+ \[shape = '([^']+)', space=vmem, size = (0x[0-9a-f]+).*tag = 'internal scratch'")


def internal_scratch():
  found = set()
  for f in glob.glob(os.path.join(DUMP, "*post-ra*")):
    with open(f, errors="replace") as fh:
      for line in fh:
        m = _RE.search(line)
        if m:
          found.add((m.group(1), int(m.group(2), 16)))
  return sorted(found)


def run(fn, args, gen):
  shutil.rmtree(DUMP, ignore_errors=True)
  os.makedirs(DUMP, exist_ok=True)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return r, internal_scratch()


def copy16(isb, limit):
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((4096, 1024), jnp.float32), grid=(4,),
        in_specs=[pl.BlockSpec((1024, 1024), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1024, 1024), lambda i: (i, 0)),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=limit,
                                             internal_scratch_in_bytes=isb))(x)
  return fn, [jax.ShapeDtypeStruct((4096, 1024), jnp.float32)]


def main():
  print(tpu_aot.versions())
  print("part 1: internal scratch per generation")
  kernels = [("matmul_acc", dict(bm=512, bn=512, bk=512)), ("copy", dict(br=256, d=1024)),
             ("flash_fwd", dict(b=1, h=2, s=4096, d=128, block_q=512, block_k_major=512, block_k=512))]
  for gen in tpu_aot.GENERATIONS:
    for kind, params in kernels:
      fn, args = tpu_kernels.build(kind, params)
      r, isc = run(fn, args, gen)
      print(f"  {gen:4} {kind:11} {r['verdict']:6} internal scratch {isc}", flush=True)
  print("part 2: 16 MiB of blocks against vmem_limit_bytes 16 MiB / 16 MiB - 1")
  for gen in tpu_aot.GENERATIONS:
    for isb in (None, 1 << 20):
      for limit in (16 << 20, (16 << 20) - 1):
        fn, args = copy16(isb, limit)
        r, isc = run(fn, args, gen)
        print(f"  {gen:4} internal_scratch_in_bytes={isb} limit={limit}: {r['verdict']} "
              f"{r.get('size_str') or ''} internal scratch {isc}", flush=True)
  shutil.rmtree(DUMP, ignore_errors=True)


if __name__ == "__main__":
  main()
