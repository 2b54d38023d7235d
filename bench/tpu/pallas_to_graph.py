#!/usr/bin/env python3
"""Writes a scratchsim KernelGraph (textproto with a `pallas` message) from real Pallas code: the
command line of the package's Pallas tracer (scratchsim._pallas_trace; scratchsim.pallas.to_graph
in Python).

  python3 pallas_to_graph.py --module my_kernels --fn build -o kernel.pbtxt
      my_kernels.build() returns (fn, args): fn(*args) calls pl.pallas_call.
  python3 pallas_to_graph.py --example matmul -o matmul.pbtxt
      a built-in blocked matmul (docs/pallas/tpu/matmul.md structure).

Then: simulate --device tpu_v5e --graph kernel.pbtxt [--confirm at-risk]
Each graph carries its pallas_call as jax.export serializes it (pallas.jax_export; needs the
flatbuffers package), which `simulate --confirm` compiles with libtpu.
"""
import argparse
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from product import pallas_trace  # noqa: E402


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--module", help="module with a function returning (fn, args)")
  p.add_argument("--fn", default="build", help="that function's name (default: build)")
  p.add_argument("--example", choices=["matmul", "e1001", "prefetch"], help="a built-in example instead of --module")
  p.add_argument("--name", default=None, help="graph name (default: the function's name)")
  p.add_argument("-o", "--output", default="-", help="output .pbtxt ('-': stdout)")
  a = p.parse_args(argv)
  examples = {"matmul": pallas_trace.example_matmul, "e1001": pallas_trace.example_e1001,
              "prefetch": pallas_trace.example_prefetch}
  if a.example:
    fn, args = examples[a.example]()
    name = a.name or f"pallas_{a.example}"
  elif a.module:
    sys.path.insert(0, ".")
    fn, args = getattr(importlib.import_module(a.module), a.fn)()
    name = a.name or a.fn
  else:
    p.error("give --module or --example")
  texts = pallas_trace.graphs_from_function(fn, args, name)
  out = "".join(texts) if len(texts) == 1 else texts[0]
  if len(texts) > 1:
    print(f"note: {len(texts)} pallas_calls found; writing the first", file=sys.stderr)
  if a.output == "-":
    sys.stdout.write(out)
  else:
    with open(a.output, "w") as f:
      f.write(out)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
