#!/usr/bin/env python3
"""What Mosaic's counted internal scratch holds for a dot of few left rows, on v4, v5e and v5p: the
vmem_report's 'internal scratch' entry of each kernel below, and the ops of the kernel's LLO
(Mosaic's program, `*-02-original.txt`) that store to or load from that allocation.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 TPU_AOT_BUNDLES=1 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_internal_scratch_uses.py > docs/validation/data/tpu/internal-scratch-uses-libtpu-0.0.42.1.txt

Each kernel is one dot whose left operand has 2 or 4 rows, read from a block one 128-lane tile
wide or wider, with its result stored as it comes, one lane tile wide or wider, or not stored
(reduced first, as decode attention's scores are). Where the report counts it, the program stores
vregs into it with a sublane stride (`vst ... ss:`) and loads them back sublane-shuffled
(`vld.sshfl`): a relayout of few-row vregs through VMEM (docs/tpu.md, "Mosaic's counted
scratch: what the internal scratch holds").
Versions: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

_ALLOC = re.compile(r"(#allocation\d+) \[shape = '[^']+', space=vmem, size = 0x[0-9a-f]+, scoped, tag = 'internal scratch'")


def one_dot(m, k, n, stored, transposed=False):
  """A pallas_call of one (m x k) . (k x n) bf16 dot over 8 grid steps of n columns; stored: the
  f32 result written to the output block as it comes, else its row maxima (a reduction first)."""
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl

  def kernel(a_ref, b_ref, o_ref):
    dims = (((1,), (1,)), ((), ())) if transposed else (((1,), (0,)), ((), ()))
    r = jax.lax.dot_general(a_ref[...], b_ref[...], dims, preferred_element_type=jnp.float32)
    o_ref[...] = r if stored else jnp.broadcast_to(jnp.max(r, axis=-1, keepdims=True), (m, 128))

  width = n if stored else 128
  b_block, b_shape = ((n, k), (8 * n, k)) if transposed else ((k, n), (k, 8 * n))
  b_map = (lambda i: (i, 0)) if transposed else (lambda i: (0, i))

  def fn(a, b):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((m, 8 * width), jnp.float32), grid=(8,),
                          in_specs=[pl.BlockSpec((m, k), lambda i: (0, 0)), pl.BlockSpec(b_block, b_map)],
                          out_specs=pl.BlockSpec((m, width), lambda i: (0, i)))(a, b)
  return fn, (jax.ShapeDtypeStruct((m, k), jnp.bfloat16), jax.ShapeDtypeStruct(b_shape, jnp.bfloat16))


CASES = [  # (name, m, k, n, stored, transposed)
    ("left 4 x 512 read from its block, result 4 x 128 stored", 4, 512, 128, True, False),
    ("left 2 x 512 read from its block, result 2 x 128 stored", 2, 512, 128, True, False),
    ("left 4 x 128, result 4 x 128 stored", 4, 128, 128, True, False),
    ("left 2 x 128, result 2 x 128 stored", 2, 128, 128, True, False),
    ("left 4 x 128, right transposed, result 4 x 512 stored", 4, 128, 512, True, True),
    ("left 4 x 128, right transposed, result 4 x 512 reduced, not stored", 4, 128, 512, False, True),
]


def uses():
  """(references to the internal scratch, its sublane-shuffled loads) in Mosaic's program of the
  Pallas kernel (the dump's one program that declares it)."""
  for path in glob.glob(os.path.join(tpu_aot.DUMP_DIR or "", "*-02-original.txt")):
    with open(path, errors="replace") as f:
      text = f.read()
    found = _ALLOC.search(text)
    if found:
      name = re.escape(found.group(1))
      return len(re.findall(rf"\[{name}[\] ]", text)), len(re.findall(rf"vld\.sshfl \[vmem:\[{name}", text))
  return 0, 0


def main():
  print(tpu_aot.versions())
  for gen in ("v4", "v5e", "v5p"):
    for name, m, k, n, stored, transposed in CASES:
      fn, args = one_dot(m, k, n, stored, transposed)
      r = tpu_aot.compile_kernel(fn, args, gen)
      listed = [a["size"] for v in ((r.get("report") or {}).get("kernels") or {}).values()
                for a in v["allocations"] if a["what"] == "internal scratch"]
      touched, loads = uses()
      print(f"{gen:4} {name:68} {r['verdict']:5} counted internal scratch {sum(listed):6} B; "
            f"Mosaic's program: {touched} references to it, {loads} shuffled loads")


if __name__ == "__main__":
  main()
