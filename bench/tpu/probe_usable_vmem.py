#!/usr/bin/env python3
"""How much of a TensorCore's VMEM libtpu lets one kernel use, per generation: the capacity XLA's
error names ("Used 64.00M of 63.94M vmem" on v5p) to the byte.

A Pallas kernel whose scratch is an f32[rows, 128] buffer (4 KiB per 8 rows) beside two 4 KiB
windows, compiled with vmem_limit_bytes at the whole VMEM, is bisected over rows to the largest
that compiles; the memory report's total of that kernel (which equals the smallest limit that
compiles it, docs/tpu-oracle.md) and the next kernel's error are printed. Output:
tests/data/tpu/usable_vmem_probe.txt, read by models/devices/tpu_*.textproto.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/probe_usable_vmem.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

CAPACITY = {"v4": 16 << 20, "v5e": 128 << 20, "v5p": 64 << 20, "v6e": 128 << 20, "v7x": 64 << 20}
TILE = 4096  # one f32[8, 128] tile: the scratch grows by whole tiles


def kernel_with_scratch(rows, limit):
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(x_ref, o_ref, s_ref):
    s_ref[pl.ds(rows - 8, 8), :] = x_ref[...]
    o_ref[...] = s_ref[pl.ds(rows - 8, 8), :] + s_ref[pl.ds(0, 8), :]

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(1,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
        scratch_shapes=[pltpu.VMEM((rows, 128), jnp.float32)],
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=limit))(x)
  return fn, [jax.ShapeDtypeStruct((8, 128), jnp.float32)]


def compile_rows(gen, rows):
  fn, args = kernel_with_scratch(rows, CAPACITY[gen])
  return tpu_aot.compile_kernel(fn, args, gen, keep_message=400)


def main():
  print(f"# {tpu_aot.versions()}; vmem_limit_bytes = the VMEM capacity; scratch f32[rows, 128]")
  for gen in tpu_aot.GENERATIONS:
    lo, hi = 8, CAPACITY[gen] // 512  # rows: lo compiles, hi (the whole VMEM in scratch) does not
    assert compile_rows(gen, lo)["verdict"] == "fits"
    assert compile_rows(gen, hi)["verdict"] != "fits"
    while hi - lo > 8:
      mid = (lo + hi) // 16 * 8
      if compile_rows(gen, mid)["verdict"] == "fits":
        lo = mid
      else:
        hi = mid
    fits, fails = compile_rows(gen, lo), compile_rows(gen, hi)
    total = (fits.get("pallas") or {}).get("total_bytes")
    print(f"{gen}: capacity {CAPACITY[gen]} B; largest scratch that compiles {lo} rows ({lo * 512} B), report "
          f"total {total} B = capacity - {CAPACITY[gen] - total if total else '?'} B; {hi} rows: "
          f"{fails['verdict']}: {(fails.get('message') or '').splitlines()[0][:300]}", flush=True)


if __name__ == "__main__":
  main()
