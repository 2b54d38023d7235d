#!/usr/bin/env python3
"""The Mosaic scratch that the scoped VMEM limit counts, beside the kernel's windows, scratch
operands and spill slots: when libtpu's vmem_report lists it for a Pallas kernel, the smallest
vmem_limit_bytes that compiles the kernel includes it. (Every kernel also has a default internal
scratch that the report does not list and the limit does not count: probe_internal_scratch.py.)

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/probe_counted_scratch.py \
      > tests/data/tpu/counted_scratch_probe.txt

Part 1, row vectors broadcast down the sublanes (layer norm: x * w + b with w, b of shape (1, d)):
per generation, the report's 'temp for sublane replication' allocations (count and bytes), its
'internal scratch', and the body's row_broadcast_bytes (scratchsim._pallas_body: 2 x d x 32 B, one vreg per
128 lanes of each row vector).
Part 2, dots whose left operand has few rows: a matmul (m = the block's rows = 1..16, bf16 and
f32) and the paged attention kernel (m = q_heads / kv_heads) per generation: the report's
'internal scratch'.
Part 4, converts to and from 8- and 4-bit types (int8, int4, fp8; bf16 as the control), without
and with a row vector broadcast down the block: the report's 'scoped memory for <kernel>'
entries (v4's 4 KiB packing temporary) and its 'internal scratch'.
Part 3, counted: for one kernel of each part on each generation that lists such scratch, compiles
at vmem_limit_bytes = the report's total (must fit), total - 1, and total - the scratch (both must
fail) - so the limit counts it.
Versions: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)
from product import pallas_body, pallas_trace  # noqa: E402
import tpu_kernels as tk  # noqa: E402


def allocations(r):
  kernels = (r.get("report") or {}).get("kernels") or {}
  return [a for v in kernels.values() for a in v["allocations"]]


def scratch_of(r, what):
  found = [a["size"] for a in allocations(r) if a["what"] == what]
  return len(found), sum(found)


def body_summary(fn, args):
  import jax
  eqns = []
  pallas_trace._find_pallas_calls(jax.make_jaxpr(fn)(*args).jaxpr, eqns)  # pylint: disable=protected-access
  return pallas_body.summarize(eqns[0])


def counted(build, total, scratch, gen):
  """Verdicts at limit = total, total - 1 and total - scratch."""
  out = []
  for limit in (total, total - 1, total - scratch):
    fn, args = build(limit)
    out.append(f"{limit}:{tpu_aot.compile_kernel(fn, args, gen)['verdict']}")
  return " ".join(out)


def main():
  print(tpu_aot.versions())
  print("part 1: layer norm (rows 8192), temps for sublane replication and internal scratch")
  cases = [(768, 512, "f32"), (4096, 128, "bf16"), (5120, 256, "bf16")]
  for gen in tpu_aot.GENERATIONS:
    for d, br, dtype in cases:
      fn, args = tk.layernorm(8192, d, br, dtype=dtype)
      r = tpu_aot.compile_kernel(fn, args, gen)
      n, temps = scratch_of(r, "temp for sublane replication")
      _, internal = scratch_of(r, "internal scratch")
      row_broadcast = body_summary(fn, args)["row_broadcast_bytes"]
      total = (r.get("pallas") or {}).get("total_bytes")
      print(f"  {gen:4} d={d:5} br={br:4} {dtype:4} {r['verdict']:6} total {total} temps {n} x 4 KiB = {temps} "
            f"(row_broadcast_bytes {row_broadcast}) internal scratch {internal}", flush=True)
  print("part 2: dots with few left-operand rows: internal scratch")
  for gen in tpu_aot.GENERATIONS:
    line = []
    for m in (1, 2, 3, 4, 5, 6, 7, 8, 16):
      for dtype in ("bf16", "f32"):
        fn, args = tk.matmul_noacc(m, 128, 256, dtype=dtype, m=m)
        r = tpu_aot.compile_kernel(fn, args, gen)
        line.append(f"matmul m={m} {dtype}: {scratch_of(r, 'internal scratch')[1] if r['verdict'] == 'fits' else r['verdict']}")
    for q_heads, kv_heads in ((8, 8), (8, 4), (16, 4), (24, 4), (32, 8), (8, 1), (64, 8)):
      fn, args = tk.paged_attention(8, q_heads, kv_heads, 128, 16, 128, 16)
      r = tpu_aot.compile_kernel(fn, args, gen)
      line.append(f"paged m={q_heads // kv_heads}: {scratch_of(r, 'internal scratch')[1] if r['verdict'] == 'fits' else r['verdict']}")
    print(f"  {gen:4} " + "; ".join(line), flush=True)
  print("part 3: does the limit count it? (vmem_limit_bytes = total, total - 1, total - scratch)")
  for gen in tpu_aot.GENERATIONS:
    fn, args = tk.layernorm(8192, 4096, 128, dtype="bf16")
    r = tpu_aot.compile_kernel(fn, args, gen)
    extra = scratch_of(r, "temp for sublane replication")[1] + scratch_of(r, "internal scratch")[1]
    if extra:
      print(f"  {gen:4} layernorm d=4096: temps + internal {extra}: "
            + counted(lambda lim: tk.layernorm(8192, 4096, 128, dtype="bf16", limit=lim),
                      r["pallas"]["total_bytes"], extra, gen), flush=True)
    fn, args = tk.matmul_noacc(4, 128, 256, dtype="bf16", m=4)
    r = tpu_aot.compile_kernel(fn, args, gen)
    internal = scratch_of(r, "internal scratch")[1]
    if internal:
      print(f"  {gen:4} matmul m=4: internal {internal}: "
            + counted(lambda lim: tk.matmul_noacc(4, 128, 256, dtype="bf16", m=4, limit=lim),
                      r["pallas"]["total_bytes"], internal, gen), flush=True)
  print("part 4: converts to and from 8- and 4-bit types: Mosaic's packing temporary")
  for gen in tpu_aot.GENERATIONS:
    line = []
    for src, dst in (("f32", "int8"), ("int8", "f32"), ("f32", "int4"), ("int4", "f32"), ("f32", "float8_e4m3fn"),
                     ("f32", "bf16")):
      for row_vector in (False, True):
        fn, args = convert_kernel(src, dst, row_vector)
        r = tpu_aot.compile_kernel(fn, args, gen)
        packing = sum(a["size"] for a in allocations(r) if a["what"].startswith("scoped memory for"))
        line.append(f"{src}->{dst}{' x row' if row_vector else ''}: packing {packing} internal "
                    f"{scratch_of(r, 'internal scratch')[1]}" if r["verdict"] == "fits" else r["verdict"])
    print(f"  {gen:4} " + "; ".join(line), flush=True)


def convert_kernel(src, dst, row_vector):
  """A block of 256 x 512 `src` values, doubled in f32 (and scaled by a (1, 512) row vector, where
  row_vector: Mosaic replicates it down the sublanes) and stored as `dst`, over 4 grid steps."""
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  dtype = {"f32": jnp.float32, "bf16": jnp.bfloat16, "int8": jnp.int8, "int4": jnp.int4,
           "float8_e4m3fn": jnp.float8_e4m3fn}

  def kernel(x_ref, w_ref, o_ref):
    y = x_ref[...].astype(jnp.float32) * 2.0
    o_ref[...] = (y * w_ref[...] if row_vector else y).astype(o_ref.dtype)

  def fn(x, w):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((1024, 512), dtype[dst]), grid=(4,),
                          in_specs=[pl.BlockSpec((256, 512), lambda i: (i, 0)), pl.BlockSpec((1, 512), lambda i: (0, 0))],
                          out_specs=pl.BlockSpec((256, 512), lambda i: (i, 0)))(x, w)
  return fn, (jax.ShapeDtypeStruct((1024, 512), dtype[src]), jax.ShapeDtypeStruct((1, 512), jnp.float32))


if __name__ == "__main__":
  main()
