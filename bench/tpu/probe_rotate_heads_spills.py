#!/usr/bin/env python3
"""Where the fourth held-out set's KV cache update spills: its body (eight (256, 128) bf16 heads
rotated one at a time, RoPE by a lane roll, and the v block copied whole) against the same kernel
without the rotation (k copied as it is) and without the v copy (v zeroed), on v5e and v6e, with
the kernel's own spill slots. Probe kernels of their own, written for this question.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/probe_rotate_heads_spills.py docs/validation/data/tpu/rotate-heads-spill-probe.txt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

import probe_vreg_alloc  # noqa: E402
import sweep_spills  # noqa: E402

F32, BF16 = jnp.float32, jnp.bfloat16
S = jax.ShapeDtypeStruct
ROWS, BT, HB, D = 1024, 256, 8, 128


def build(rotate, copy_v):
  def kernel(k_ref, v_ref, c_ref, s_ref, ko_ref, vo_ref):
    if rotate:
      c, sn = c_ref[...], s_ref[...]
      for h in range(HB):
        x = k_ref[:, h * D:(h + 1) * D].astype(F32)
        ko_ref[:, h * D:(h + 1) * D] = (x * c + pltpu.roll(x, D // 2, 1) * sn).astype(ko_ref.dtype)
    else:
      ko_ref[...] = k_ref[...]
    vo_ref[...] = v_ref[...] if copy_v else jnp.zeros_like(vo_ref)

  def fn(k, v, c, s):
    block, table = pl.BlockSpec((BT, HB * D), lambda i: (i, 0)), pl.BlockSpec((BT, D), lambda i: (i, 0))
    return pl.pallas_call(kernel, out_shape=(S((ROWS, HB * D), BF16), S((ROWS, HB * D), BF16)), grid=(ROWS // BT,),
                          in_specs=[block, block, table, table], out_specs=(block, block),
                          name="rotate_heads_probe")(k, v, c, s)
  return fn, (S((ROWS, HB * D), BF16), S((ROWS, HB * D), BF16), S((ROWS, D), F32), S((ROWS, D), F32))


def probe(gen, rotate, copy_v):
  fn, args = build(rotate, copy_v)
  r = tpu_aot.compile_kernel(fn, args, gen)
  return {"gen": gen, "k": "rotated by heads" if rotate else "copied", "v": "copied" if copy_v else "zeroed",
          "verdict": r["verdict"], "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
          "spill_bytes": sweep_spills.kernel_spill_bytes(r)}


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  rows = (probe(gen, rotate, copy_v) for gen in ("v5e", "v6e")
          for rotate, copy_v in ((True, True), (True, False), (False, True)))
  probe_vreg_alloc.write_probe(argv[0], "spill slots of rotated heads",
                               f"bench/tpu/probe_rotate_heads_spills.py {argv[0]}", rows)


if __name__ == "__main__":
  main(sys.argv[1:])
