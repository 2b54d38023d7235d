#!/usr/bin/env python3
"""How much VMEM and SMEM libtpu lets one kernel use, per generation, measured to the 4 KiB tile
(128 SMEM words): the facts the TPU device models cite.

A Pallas kernel of two 4 KiB windows and one scratch buffer is bisected over the scratch to the
largest that compiles, three ways per generation:
  1. an f32[rows, 128] VMEM scratch with vmem_limit_bytes at the whole VMEM: the VMEM one program
     may use (the memory report's total of the largest kernel, which equals the smallest limit that
     compiles it, docs/tpu-oracle.md; usable_per_core_bytes);
  2. the same without vmem_limit_bytes: the default scoped limit (default_scoped_limit_bytes);
  3. an int32[words] SMEM scratch: the SMEM capacity, less what libtpu adds of its own.
Each line gives the largest that compiles and the error of the next. Output:
tests/data/tpu/usable_vmem_probe.txt (about 30 seconds on two cores).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/probe_usable_vmem.py 2>/dev/null
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

CAPACITY = {"v4": 16 << 20, "v5e": 128 << 20, "v5p": 64 << 20, "v6e": 128 << 20, "v7x": 64 << 20}
TILE = 4096  # one f32[8, 128] tile: the scratch grows by whole tiles


def kernel_with_smem(words):
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(x_ref, o_ref, s_ref):
    s_ref[words - 1] = 1
    s_ref[0] = 2
    o_ref[...] = x_ref[...] + (s_ref[words - 1] + s_ref[0]).astype(jnp.float32)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(1,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
        scratch_shapes=[pltpu.SMEM((words,), jnp.int32)])(x)
  return fn, [jax.ShapeDtypeStruct((8, 128), jnp.float32)]


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


def compile_rows(gen, rows, limit="capacity"):
  fn, args = kernel_with_scratch(rows, CAPACITY[gen] if limit == "capacity" else None)
  return tpu_aot.compile_kernel(fn, args, gen, keep_message=400)


def compile_words(gen, words):
  fn, args = kernel_with_smem(words)
  return tpu_aot.compile_kernel(fn, args, gen, keep_message=400)


def largest_that_compiles(compile_one, lo, hi, step):
  """Bisects [lo, hi) in steps: lo compiles, hi does not. Returns (largest, its result, the next's)."""
  assert compile_one(lo)["verdict"] == "fits"
  assert compile_one(hi)["verdict"] != "fits"
  while hi - lo > step:
    mid = (lo + hi) // (2 * step) * step
    if compile_one(mid)["verdict"] == "fits":
      lo = mid
    else:
      hi = mid
  return lo, compile_one(lo), compile_one(hi)


def first_line(result):
  return (result.get("message") or "").splitlines()[0][:300] if result.get("message") else ""


def main():
  print(f"# {tpu_aot.versions()}; a kernel of two 4 KiB windows and one scratch buffer, bisected to the "
        "largest that compiles")
  for gen in tpu_aot.GENERATIONS:
    cap = CAPACITY[gen]
    # 1. the VMEM one program may use: vmem_limit_bytes at the capacity, an f32[rows, 128] scratch
    rows, fits, fails = largest_that_compiles(lambda r: compile_rows(gen, r), 8, cap // 512, 8)
    total = (fits.get("pallas") or {}).get("total_bytes")
    print(f"{gen}: usable VMEM: capacity {cap} B; largest scratch that compiles {rows} rows ({rows * 512} B), report "
          f"total {total} B = capacity - {cap - total if total else '?'} B; {rows + 8} rows: {fails['verdict']}: "
          f"{first_line(fails)}", flush=True)
    # 2. the default scoped limit: the same kernel without vmem_limit_bytes
    rows, fits, fails = largest_that_compiles(lambda r: compile_rows(gen, r, limit=None), 8, cap // 512, 8)
    total = (fits.get("pallas") or {}).get("total_bytes")
    print(f"{gen}: default scoped limit: largest scratch that compiles without vmem_limit_bytes {rows} rows, report "
          f"total {total} B; {rows + 8} rows: {fails['verdict']}: {first_line(fails)}", flush=True)
    # 3. SMEM: an int32[words] SMEM scratch
    words, fits, fails = largest_that_compiles(lambda w: compile_words(gen, w), 128, 1 << 20, 128)
    print(f"{gen}: SMEM: largest int32 SMEM scratch that compiles {words} words ({words * 4} B); {words + 128} "
          f"words: {fails['verdict']}: {first_line(fails)}", flush=True)

if __name__ == "__main__":
  main()
