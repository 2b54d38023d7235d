#!/usr/bin/env python3
"""Writes the graphs `simulate --confirm` is tested with, and what libtpu says of each.

backends/tpu/testdata/confirm_<name>.pbtxt: a kernel traced with its exported call
(pallas.jax_export); confirm_expected.txt: libtpu's confirmation of each (the verdict, libtpu's
outcome and its bytes: the kernel's scoped VMEM where it fits, the error's figure where not; and
for a kernel out of VMEM what it needs, tpu_aot.requirement: the bytes with its limit raised to
the whole VMEM, or "exceeds" where it fails even there) on the generations KERNELS names, which
backends/tpu/libtpu_confirm_test.cc checks where libtpu is installed.

  JAX_PLATFORMS=cpu python3 bench/tpu/confirm_testdata.py backends/tpu/testdata
"""
import datetime
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from product import tpu_aot  # noqa: E402  (first: it sets libtpu's environment)
from product import pallas_trace as p2g  # noqa: E402
import tpu_kernels  # noqa: E402

# name: (the generations to confirm it on, the kernel)
KERNELS = {
    # AT RISK on v5e by the model (its spill band straddles the 16 MiB limit); libtpu fits it
    "matmul_f32_768": (("v5e", "v6e"), lambda: tpu_kernels.matmul_acc(768, 768, 768, "f32")),
    # 2048-wide bf16 blocks: over the scoped limit before any spill (E1001, 64 MiB)
    # (needs 72.8 MiB with its spills: fits v5e's and v6e's 128 MiB, not the whole 16 MiB of v4)
    "matmul_2048": (("v5e", "v6e", "v4"), lambda: p2g.example_matmul()),
    # a band miss of the first holdout sweep (v7x/matmul_acc/944bbbeb02: 68 vregs spilled where the
    # band is 0) at a limit between the model's high bound (10,092,544 B) and libtpu's requirement
    # (10,371,072 B): the model says FITS, libtpu fails it; only --confirm always catches it
    "holdout_band_miss": (("v7x",), lambda: tpu_kernels.matmul_acc(896, 896, 512, "bf16", limit=10_240_000)),
}


def main(argv):
  out_dir = argv[0] if argv else os.path.join(HERE, "..", "..", "backends", "tpu", "testdata")
  v = tpu_aot.versions()
  stamp = f"jax {v['jax']}, libtpu {v['libtpu']}, {datetime.date.today().isoformat()}"
  lines = [f"# libtpu's confirmation of each confirm_<graph>.pbtxt ({stamp}), by",
           "# JAX_PLATFORMS=cpu python3 bench/tpu/confirm_testdata.py backends/tpu/testdata",
           "# graph gen confirmed_verdict libtpu_outcome bytes requirement"]
  for name, (gens, build) in KERNELS.items():
    fn, args = build()
    graph = p2g.graphs_from_function(fn, args, name)[0]
    with open(os.path.join(out_dir, f"confirm_{name}.pbtxt"), "w") as f:
      f.write(f"# Traced by bench/tpu/confirm_testdata.py ({stamp}): {name}.\n" + graph)
    from jax import export
    exported = export.deserialize(bytearray(p2g.export_call(p2g.pallas_call_equations(fn, args)[0])))
    for gen in gens:
      first = tpu_aot.compile_exported(exported, gen)
      c = tpu_aot.confirmation(first, gen, tpu_aot.requirement(exported, gen, first), tpu_aot.stated_vmem_limits(exported))
      figure = c.get("scoped_vmem_bytes") if c["verdict"] == "fits" else c.get("size_bytes")
      need = c.get("requirement_bytes") or ("exceeds" if c.get("exceeds_capacity") else "-")
      lines.append(f"{name} {gen} {c['confirmed_verdict']} {c['verdict']} {figure} {need}")
      print(lines[-1], flush=True)
  with open(os.path.join(out_dir, "confirm_expected.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
