#!/usr/bin/env python3
"""How much VMEM and SMEM libtpu lets one kernel use, per generation, measured to the 4 KiB tile
(128 SMEM words): the facts the TPU device models cite.

A Pallas kernel of two 4 KiB windows and one scratch buffer is bisected over the scratch to the
largest that compiles, three ways per generation:
  1. an f32[rows, 128] VMEM scratch with vmem_limit_bytes at the whole VMEM: the VMEM one program
     may use (the memory report's total of the largest kernel, which equals the smallest limit that
     compiles it, docs/tpu-oracle.md; usable_per_core_bytes);
  2. the same without vmem_limit_bytes: the default scoped limit (default_scoped_limit_bytes);
  3. an int32[words] SMEM scratch: the SMEM capacity, less what libtpu adds of its own;
  4. a full SMEM scratch beside more inputs, grid steps and a scalar-prefetch operand: how much
     SMEM libtpu adds of its own (the error's excess, to its two digits).
Each line gives the largest that compiles and the error of the next. Output:
tests/data/tpu/usable_vmem_probe.txt (about 30 seconds on two cores).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/probe_usable_vmem.py 2>/dev/null
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

CAPACITY = tpu_aot.VMEM_CAPACITY
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


def kernel_with_operands(words, n_in, grid, prefetch_words):
  """n_in f32 (8, 128) inputs over a grid of `grid` steps, an int32[words] SMEM scratch and, if
  prefetch_words, an int32[prefetch_words] scalar-prefetch operand (whole in SMEM)."""
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(*refs):
    prefetch, refs = (refs[0], refs[1:]) if prefetch_words else (None, refs)
    ins, o_ref, s_ref = refs[:n_in], refs[n_in], refs[n_in + 1]
    s_ref[words - 1] = 1
    acc = ins[0][...]
    for r in ins[1:]:
      acc = acc + r[...]
    extra = prefetch[0].astype(jnp.float32) if prefetch_words else 0.0
    o_ref[...] = acc + s_ref[words - 1].astype(jnp.float32) + extra

  spec = pl.BlockSpec((8, 128), lambda i, *_: (i, 0))
  grid_spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1 if prefetch_words else 0, grid=(grid,),
                                           in_specs=[spec] * n_in, out_specs=spec,
                                           scratch_shapes=[pltpu.SMEM((words,), jnp.int32)])

  def fn(*args):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8 * grid, 128), jnp.float32),
                          grid_spec=grid_spec)(*args)
  args = [jax.ShapeDtypeStruct((prefetch_words,), jnp.int32)] if prefetch_words else []
  return fn, args + [jax.ShapeDtypeStruct((8 * grid, 128), jnp.float32)] * n_in


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
    # 4. libtpu's own SMEM beside a full SMEM scratch: what "Exceeded smem capacity by" adds to it
    for n_in, grid, prefetch in ((1, 1, 0), (4, 8, 0), (2, 4, 1024), (2, 4, 16384)):
      words = (1 << 18) - prefetch // 2
      fn, args = kernel_with_operands(words, n_in, grid, prefetch)
      r = tpu_aot.compile_kernel(fn, args, gen, keep_message=400)
      m = re.search(r"Exceeded smem capacity by ([\d.]+)([KM]?)B?", r.get("message") or "")
      over = float(m.group(1)) * {"": 1, "K": 1024, "M": 1 << 20}[m.group(2)] if m else None
      own = (1 << 20) + over - 4 * (words + prefetch) if over is not None else None
      print(f"{gen}: SMEM of libtpu's own: {n_in} inputs, grid {grid}, {prefetch} prefetched words, scratch {words} "
            f"words: {r['verdict']}: {first_line(r)[-60:]}: about {own:.0f} B of its own" if own is not None else
            f"{gen}: SMEM of libtpu's own: {n_in} inputs, grid {grid}, {prefetch} prefetched words: {r['verdict']}",
            flush=True)

if __name__ == "__main__":
  main()
