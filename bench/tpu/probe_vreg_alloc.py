#!/usr/bin/env python3
"""How libtpu's register allocator turns a Pallas body's vector registers into spill slots, read
from its LLO text dump (docs/tpu.md, "How libtpu allocates spill slots").

For each kernel it compiles (dev families of bench/tpu/heldout_kernels.py only: never a held-out
one) it reads three files of the kernel's LLO dump:
  *-register-pressure.txt   "Register pressure for vregs is P": the most vregs live at once in
                            the schedule LLO hands the allocator (absent when nothing is spilled
                            in some kernels);
  *-NN-post-ra.txt          the allocated program: physical vregs %vN_vR, the spill slots
                            (#allocationN_spill [shape = 'u32[8,128]{1,0}', space=vmem, size =
                            0x1000, ..., tag = 'spilled vreg/vmreg']) and the spill stores and
                            fills (vst/vld to #allocationN_spill);
and the vmem_report's SPILL bytes of the kernel. It writes one JSON object a line:
  kind, gen, params, spill_bytes (the report), slots (u32[8,128] spill allocations), vregs (the
  distinct physical vregs the allocated program names), pressure (P, or null), spill_stores,
  spill_fills, spilled_peak (the most spilled values held in slots at once in the listing's
  order: a value from its spill store to its last fill).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-bench/bin/python \\
      bench/tpu/probe_vreg_alloc.py tests/data/tpu/vreg_alloc_probe.txt

With --peak-ops it compiles PEAK_KERNELS instead and writes, for each, P and the op that defines
each live range the register-pressure dump lists at the peak (peak_ops: op -> count; they sum to P):

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-bench/bin/python \\
      bench/tpu/probe_vreg_alloc.py --peak-ops tests/data/tpu/vreg_peak_ops_probe.txt

With --convert-pairs it compiles CONVERT_KERNELS (dev-family bodies that hold a bf16 block widened
to 32 bits across a reduction) and writes, for each, the slots, P and peak_ops:

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-bench/bin/python \\
      bench/tpu/probe_vreg_alloc.py --convert-pairs docs/validation/data/tpu/convert-pairs-probe.txt

The LLO text dump is large (tens of MB a compile) and slow: it is on only here.
"""
import collections
import datetime
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# (kind, generation, params): dev-family kernels that spill, each family on v4 and on a 64-vreg
# generation where one of its shapes spills there.
KERNELS = [
    ("add_rmsnorm_alias", "v4", {"br": 256, "d": 512, "dtype": "bf16", "rows": 8192}),
    ("add_rmsnorm_alias", "v5e", {"br": 256, "d": 512, "dtype": "bf16", "rows": 8192}),
    ("add_rmsnorm_alias", "v6e", {"br": 256, "d": 512, "dtype": "bf16", "rows": 8192}),
    ("block_sparse_matmul", "v4", {"bk": 1024, "bm": 512, "bn": 1024, "dtype": "bf16", "nnz": 2}),
    ("block_sparse_matmul", "v6e", {"bk": 1024, "bm": 256, "bn": 2048, "dtype": "bf16", "nnz": 4}),
    ("cumsum_carry", "v4", {"bd": 1024, "br": 512, "d": 2048, "dtype": "f32", "rows": 8192}),
    ("cumsum_carry", "v6e", {"bd": 1024, "br": 512, "d": 2048, "dtype": "f32", "rows": 8192}),
    ("decode_attention", "v4", {"batch": 2, "bk": 4096, "d": 128, "dtype": "bf16", "heads": 64, "s": 8192}),
    ("decode_attention", "v6e", {"batch": 2, "bk": 4096, "d": 128, "dtype": "bf16", "heads": 64, "s": 8192}),
    ("dequant_i8_matmul", "v4", {"bk": 256, "bm": 128, "bn": 256}),
    ("dequant_i8_matmul", "v4", {"bk": 1024, "bm": 512, "bn": 512}),
    ("dequant_i8_matmul", "v5e", {"bk": 512, "bm": 512, "bn": 1024}),
    ("dwconv1d", "v4", {"batch": 4, "bc": 1024, "ch": 2048, "dtype": "f32", "length": 513, "width": 3}),
    ("dwconv1d", "v5p", {"batch": 4, "bc": 1024, "ch": 2048, "dtype": "f32", "length": 513, "width": 3}),
    ("layernorm_bwd", "v4", {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}),
    ("layernorm_bwd", "v5p", {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}),
    ("layernorm_bwd", "v7x", {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}),
    ("layernorm_bwd", "v4", {"br": 256, "d": 2048, "dtype": "bf16", "rows": 8192}),
    ("layernorm_bwd", "v5e", {"br": 256, "d": 2048, "dtype": "bf16", "rows": 8192}),
    ("manual_dma", "v4", {"br": 128, "d": 512, "dtype": "f32", "rows": 4096}),
    ("manual_dma", "v5e", {"br": 128, "d": 512, "dtype": "f32", "rows": 4096}),
    ("manual_dma", "v6e", {"br": 128, "d": 512, "dtype": "f32", "rows": 4096}),
    ("online_lse", "v4", {"bk": 1024, "br": 128, "d": 8192, "dtype": "f32", "rows": 4096}),
    ("online_lse", "v6e", {"bk": 1024, "br": 128, "d": 8192, "dtype": "f32", "rows": 4096}),
    ("online_lse", "v7x", {"bk": 512, "br": 512, "d": 4096, "dtype": "f32", "rows": 4096}),
    ("rmsnorm_matmul", "v4", {"bn": 256, "br": 128, "d": 1024, "dtype": "bf16", "n": 1024, "rows": 4096}),
    ("rmsnorm_matmul", "v5e", {"bn": 256, "br": 128, "d": 1024, "dtype": "bf16", "n": 1024, "rows": 4096}),
    ("rmsnorm_matmul", "v5p", {"bn": 512, "br": 512, "d": 2048, "dtype": "bf16", "n": 4096, "rows": 4096}),
    ("running_argmax", "v4", {"bk": 512, "br": 128, "d": 4096, "dtype": "f32", "rows": 4096}),
    ("running_argmax", "v4", {"bk": 2048, "br": 512, "d": 8192, "dtype": "f32", "rows": 4096}),
    ("running_argmax", "v5e", {"bk": 512, "br": 128, "d": 4096, "dtype": "f32", "rows": 4096}),
    ("swiglu_mlp", "v4", {"bf": 256, "bt": 128, "d": 512, "dtype": "bf16", "f": 2048, "tokens": 2048}),
    ("swiglu_mlp", "v5e", {"bf": 256, "bt": 128, "d": 512, "dtype": "bf16", "f": 2048, "tokens": 2048}),
    ("swiglu_mlp", "v7x", {"bf": 768, "bt": 384, "d": 1536, "dtype": "bf16", "f": 6144, "tokens": 2048}),
    ("swiglu_mlp_buf1", "v5e", {"bf": 512, "bt": 256, "d": 1024, "f": 4096, "tokens": 2048}),
    ("transpose_add", "v6e", {"bm": 1024, "bn": 2048, "dtype": "bf16"}),
    ("transpose_add", "v7x", {"bm": 1024, "bn": 2048, "dtype": "bf16"}),
]

# Kernels whose values live at LLO's pressure peak are read by op (--peak-ops): dev families whose
# body holds computed blocks across lane reductions, a transpose and a matmul, on v4 and a 64-vreg
# generation.
# Dev-family kernels whose body widens a loaded bf16 block to 32 bits and holds it across a
# reduction (docs/tpu.md, "Held-out families": a widening convert held packed, tried).
CONVERT_KERNELS = [
    ("online_lse", "v5e", {"bk": 4096, "br": 256, "d": 32768, "dtype": "bf16", "rows": 4096}),
    ("running_argmax", "v5e", {"bk": 8192, "br": 64, "d": 8192, "dtype": "bf16", "rows": 4096}),
    ("rmsnorm_matmul", "v6e", {"bn": 512, "br": 512, "d": 2048, "dtype": "bf16", "n": 4096, "rows": 4096}),
    ("rmsnorm_matmul", "v6e", {"bn": 256, "br": 128, "d": 1024, "dtype": "bf16", "n": 1024, "rows": 4096}),
    ("layernorm_bwd", "v5e", {"br": 256, "d": 2048, "dtype": "bf16", "rows": 8192}),
    ("manual_dma", "v5e", {"br": 256, "d": 4096, "dtype": "bf16", "rows": 16384}),
    ("manual_dma", "v4", {"br": 512, "d": 2048, "dtype": "bf16", "rows": 8192}),
]

PEAK_KERNELS = [
    ("layernorm_bwd", "v4", {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}),
    ("layernorm_bwd", "v7x", {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}),
    ("add_rmsnorm_alias", "v4", {"br": 256, "d": 512, "dtype": "bf16", "rows": 8192}),
    ("add_rmsnorm_alias", "v6e", {"br": 256, "d": 512, "dtype": "bf16", "rows": 8192}),
    ("transpose_add", "v7x", {"bm": 1024, "bn": 2048, "dtype": "bf16"}),
    ("block_sparse_matmul", "v6e", {"bk": 1024, "bm": 256, "bn": 2048, "dtype": "bf16", "nnz": 4}),
]

_PRESSURE_RE = re.compile(r"Register pressure for vregs is (\d+)")
_SLOT_RE = re.compile(r"#allocation\d+_spill \[shape = 'u32\[8,128\][^']*', space=vmem, size = 0x1000,")
_STORE_RE = re.compile(r"= vst \[vmem:\[#allocation(\d+)_spill\]")
_FILL_RE = re.compile(r"= vld \[vmem:\[#allocation(\d+)_spill\]")
_PHYS_RE = re.compile(r"%v\d+_v(\d+)\b")


def register_pressure(text):
  """P of a *-register-pressure.txt dump, or None."""
  m = _PRESSURE_RE.search(text or "")
  return int(m.group(1)) if m else None


_LIVE_RANGE_RE = re.compile(r"^len=\d+ lr=\[\d+, \d+\).*:: %\w+ = ([\w.]+)")


def peak_ops(text):
  """The op defining each live range a *-register-pressure.txt dump lists at the peak, counted
  (their number is P); the dump's "use:" lines are skipped."""
  return dict(collections.Counter(m.group(1) for m in map(_LIVE_RANGE_RE.match, (text or "").splitlines()) if m))


def post_ra_facts(text):
  """What the allocated LLO (*-NN-post-ra.txt) says of its vector registers and spill slots."""
  stores, fills = collections.defaultdict(list), collections.defaultdict(list)
  slots = 0
  for i, line in enumerate(text.splitlines()):
    if _SLOT_RE.search(line):
      slots += 1
      continue
    m = _STORE_RE.search(line)
    if m:
      stores[m.group(1)].append(i)
    m = _FILL_RE.search(line)
    if m:
      fills[m.group(1)].append(i)
  # A spilled value holds its slot from its store to its last fill before the slot's next store.
  events = []
  for slot, at in stores.items():
    later = sorted(fills.get(slot, []))
    bounds = sorted(at) + [float("inf")]
    for k, start in enumerate(bounds[:-1]):
      end = max([f for f in later if start < f < bounds[k + 1]], default=start)
      events += [(start, 1), (end + 0.5, -1)]
  peak = live = 0
  for _, step in sorted(events):
    live += step
    peak = max(peak, live)
  return {"slots": slots, "vregs": len(set(_PHYS_RE.findall(text))),
          "spill_stores": sum(map(len, stores.values())), "spill_fills": sum(map(len, fills.values())),
          "spilled_peak": peak}


def _dump_file(dump_dir, kernel, pattern):
  paths = [p for p in glob.glob(os.path.join(dump_dir, f"*-{kernel}-*")) if re.search(pattern, os.path.basename(p))]
  if not paths:
    return None
  with open(sorted(paths)[0], errors="replace") as f:
    return f.read()


def probe(kind, gen, params):
  from product import tpu_aot
  import heldout_kernels
  fn, args = heldout_kernels.build(kind, params)
  r = tpu_aot.compile_kernel(fn, args, gen)
  row = {"kind": kind, "gen": gen, "params": params, "verdict": r["verdict"]}
  kernels = (r.get("pallas") or {}).get("kernels") or []
  if r["verdict"] != "fits" or len(kernels) != 1:
    return row
  name = kernels[0]
  report = r["report"]["kernels"][name]
  row["spill_bytes"] = report["spill_bytes"]
  row.update(post_ra_facts(_dump_file(tpu_aot.DUMP_DIR, name, r"-\d+-post-ra\.txt$") or ""))
  pressure_dump = _dump_file(tpu_aot.DUMP_DIR, name, r"register-pressure\.txt$")
  row["pressure"] = register_pressure(pressure_dump)
  row["peak_ops"] = peak_ops(pressure_dump)
  return row


def write_probe(path, title, command, rows):
  """Prints each row (a dict) as it comes and writes `path`: two header lines (`title` with the
  versions; the date and `command`), then one JSON object a row, keys sorted."""
  from product import tpu_aot
  lines = [f"# {title}: {json.dumps(tpu_aot.versions())}", f"# {datetime.date.today().isoformat()}, {command}"]
  for row in rows:
    print(json.dumps(row), flush=True)
    lines.append(json.dumps(row, sort_keys=True))
  with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")


def main(argv):
  mode = argv[0] if argv[:1] in (["--peak-ops"], ["--convert-pairs"]) else None
  argv = argv[1:] if mode else argv
  if len(argv) != 1:
    sys.exit(__doc__)
  os.environ["TPU_AOT_BUNDLES"] = "1"  # before tpu_aot's import: it dumps the LLO text of every compile
  kernels = {"--peak-ops": PEAK_KERNELS, "--convert-pairs": CONVERT_KERNELS}.get(mode, KERNELS)
  keys = {"--peak-ops": ("kind", "gen", "params", "verdict", "pressure", "peak_ops"),
          "--convert-pairs": ("kind", "gen", "params", "verdict", "spill_bytes", "slots", "pressure", "spilled_peak",
                              "peak_ops")}.get(mode)

  def rows():
    for kind, gen, params in kernels:
      row = probe(kind, gen, params)
      yield {k: row.get(k) for k in keys} if keys else row
  write_probe(argv[0], "libtpu's spill slots and vector registers, read from its LLO dump",
              f"bench/tpu/probe_vreg_alloc.py {mode + ' ' if mode else ''}{argv[0]} (docs/tpu.md, "
              "\"How libtpu allocates spill slots\")", rows())


if __name__ == "__main__":
  main(sys.argv[1:])
