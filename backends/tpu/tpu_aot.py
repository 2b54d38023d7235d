#!/usr/bin/env python3
"""libtpu's ahead-of-time compile of Pallas TPU kernels on a CPU-only host, and what it says of VMEM.

The TPU backend's runner: `simulate --confirm` (libtpu_confirm.cc) writes this file, built into
the binary, and runs `tpu_aot.py confirm`; the Python package ships it as scratchsim._tpu_aot
(scratchsim.pallas traces under a generation's device with it); bench/tpu's oracle scripts
import it from here.

Import this module before jax: it sets the environment libtpu needs off a TPU VM
(`TPU_SKIP_MDS_QUERY=1`, `JAX_PLATFORMS=cpu`) and, unless told not to, points libtpu's LLO
dump at a private folder so that each compile leaves its `vmem_report.html` (every scoped VMEM
allocation of each custom call, with its size and tag, and their total).

  import tpu_aot                      # first
  res = tpu_aot.compile_kernel(fn, args, "v5e")
  res["verdict"]                      # fits | vmem_scoped | vmem_capacity | vmem_alloc | error
  res["pallas"]["total_bytes"]        # scoped VMEM of the Pallas call (vmem_report.html)

  python3 tpu_aot.py confirm --gen v5e [--capacity-bytes N] kernel.jaxexport
      compiles a graph's exported call (pallas.jax_export) and prints what libtpu said as one JSON
      line, with what a kernel out of VMEM needs (requirement()): what `simulate --confirm` runs.

Versions this was written against: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1 (bench/tpu/README.md).
"""
import glob
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

DUMP_DIR = None
# TPU_AOT_BUNDLES=1 also dumps the LLO text of every compile (a few hundred files, slower), from
# which compile_kernel reads the Pallas kernels' final static schedule: bundles per grid step
# (read_bundles).
BUNDLES = os.environ.get("TPU_AOT_BUNDLES") == "1"
if os.environ.get("TPU_AOT_NO_DUMP") != "1":
  import atexit
  DUMP_DIR = tempfile.mkdtemp(prefix="tpu_aot_llo_")
  atexit.register(shutil.rmtree, DUMP_DIR, True)
  _flags = os.environ.get("LIBTPU_INIT_ARGS", "")
  os.environ["LIBTPU_INIT_ARGS"] = (
      _flags + f" --xla_jf_dump_to={DUMP_DIR} --xla_jf_dump_hlo_text=false"
      + (" --xla_jf_dump_llo_text=true" if BUNDLES
         else " --xla_jf_dump_llo_text=false --xla_jf_dump_category_filter=memory-report")).strip()

# The topology each generation is compiled for (libtpu 0.0.42.1; other names: bench/tpu/README.md).
TOPOLOGIES = {
    "v4": "v4:2x2x1",
    "v5e": "v5e:2x2",
    "v5p": "v5p:2x2x1",
    "v6e": "v6e:2x2",
    "v7x": "tpu7x:2x2x1",
}
GENERATIONS = list(TOPOLOGIES)

# VMEM of one TensorCore, the highest scoped limit a kernel may ask for: the vmem space's
# max_scoped_limit_bytes in models/devices/tpu_*.textproto, which cite their sources
# (tests/python/test_tpu_oracle.py holds the two equal).
VMEM_CAPACITY = {"v4": 16 << 20, "v5e": 128 << 20, "v5p": 64 << 20, "v6e": 128 << 20, "v7x": 64 << 20}

_DEVICES = {}


def device(gen):
  """devices[0] of the generation's topology (cached: libtpu builds it once)."""
  if gen not in _DEVICES:
    from jax.experimental import topologies
    topo = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[gen])
    _DEVICES[gen] = topo.devices[0]
  return _DEVICES[gen]


def versions():
  import jax
  import jaxlib
  out = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
  try:
    from importlib.metadata import version
    out["libtpu"] = version("libtpu")
  except Exception:  # pragma: no cover
    out["libtpu"] = None
  return out


# ---------------------------------------------------------------------------------------------
# Sizes as XLA prints them: "48.00M", "1020.0K", "147.1K", "512B", "1.50G".

_UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(s):
  """Bytes of an XLA size string ("48.00M" -> 50331648); None if it is not one."""
  m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([BKMGT])i?B?\s*", s or "")
  if not m:
    return None
  return int(round(float(m.group(1)) * _UNITS[m.group(2)]))


_SCOPED_RE = re.compile(
    r"Scoped allocation with size (\S+) and limit (\S+) exceeded scoped vmem limit by (\S+?)\.(?:\s|$)")
_CAPACITY_RE = re.compile(r"Used (\S+) of (\S+) vmem\. Exceeded vmem capacity by (\S+?)\.(?:\s|$)")
_ALLOC_RE = re.compile(r"Allocation \(size=(\d+)\) would exceed memory \(size=(\d+)\)")
_HLO_RE = re.compile(r"allocating on stack for %(\S+) = (\S+)")
_LARGEST_RE = re.compile(r"^\s*\d+\. Size: (\S+)\n(.*?)(?=^\s*\d+\. Size: |^\s*\[type|\Z)", re.M | re.S)


def parse_error(msg):
  """The verdict and the figures of a compile error message."""
  out = {"verdict": "error"}
  m = _SCOPED_RE.search(msg)
  if m:
    out.update(verdict="vmem_scoped", size_str=m.group(1), limit_str=m.group(2),
               over_str=m.group(3), size_bytes=parse_size(m.group(1)),
               limit_bytes=parse_size(m.group(2)), over_bytes=parse_size(m.group(3)))
    h = _HLO_RE.search(msg)
    if h:
      out.update(hlo_name=h.group(1), hlo_shape=h.group(2))
    return out
  m = _CAPACITY_RE.search(msg)
  if m:
    out.update(verdict="vmem_capacity", size_str=m.group(1), limit_str=m.group(2),
               over_str=m.group(3), size_bytes=parse_size(m.group(1)),
               limit_bytes=parse_size(m.group(2)), over_bytes=parse_size(m.group(3)))
    allocs = []
    for am in _LARGEST_RE.finditer(msg):
      body = am.group(2)
      tag = re.search(r"Tag: (.*)", body)
      label = re.search(r"XLA label: (.*)", body)
      shape = re.search(r"Shape: (\S+)", body)
      t = tag.group(1).strip() if tag else (label.group(1).strip() if label else "")
      allocs.append({"size_bytes": parse_size(am.group(1)), "size_str": am.group(1),
                     "shape": shape.group(1) if shape else None, "tag": t[:160]})
    out["largest_allocations"] = allocs
    return out
  m = _ALLOC_RE.search(msg)
  if m:
    out.update(verdict="vmem_alloc", size_bytes=int(m.group(1)), limit_bytes=int(m.group(2)))
    return out
  return out


# ---------------------------------------------------------------------------------------------
# vmem_report.html (libtpu's LLO dump)


def _report_json(path):
  t = open(path, encoding="utf-8", errors="replace").read()
  i = t.find("const DATA =")
  if i < 0:
    return None
  s = t[i + len("const DATA ="):]
  depth = 0
  for k, ch in enumerate(s):
    if ch == "{":
      depth += 1
    elif ch == "}":
      depth -= 1
      if depth == 0:
        return json.loads(s[:k + 1])
  return None


def short_tag(tag):
  """'input window allocation for operator input 0. ...' -> 'in0'; 'scratch operand' etc."""
  m = re.match(r"(input|output) window allocation for operator (?:input|output) (\d+)", tag or "")
  if m:
    return ("in" if m.group(1) == "input" else "out") + m.group(2)
  return tag or ""


def _window_levels(tag):
  m = re.search(r"has (\d+) buffering levels?", tag or "")
  return int(m.group(1)) if m else None


def summarize_report(data):
  """{capacity, kernels: {hlo: {total_bytes, spill_bytes, allocations}}, total_bytes} (the
  largest custom call's total as total_bytes)."""
  if not data:
    return None
  out = {"vmem_capacity": data.get("global_info", {}).get("vmem_capacity"), "kernels": {}}
  for hlo, b in data.get("hlo_breakdowns", {}).items():
    if hlo.startswith("<"):
      continue  # <top-inlining-caller>: the same allocations seen from the caller
    allocs = []
    for blk in b.get("blocks", []):
      for a in blk.get("allocations", []):
        tag = a.get("tag", "")
        allocs.append({"what": short_tag(tag), "size": a.get("size"), "shape": a.get("shape"),
                       "padding": a.get("padding"), "levels": _window_levels(tag),
                       "block_type": blk.get("block_type")})
    out["kernels"][hlo] = {
        "total_bytes": b.get("total_size"),
        "spill_bytes": sum(a["size"] or 0 for a in allocs if a["what"] == "SPILL"),
        "allocations": allocs}
  if out["kernels"]:
    out["total_bytes"] = max(k["total_bytes"] or 0 for k in out["kernels"].values())
  return out


def _clear_dump():
  if DUMP_DIR and os.path.isdir(DUMP_DIR):
    for f in os.listdir(DUMP_DIR):
      p = os.path.join(DUMP_DIR, f)
      if os.path.isdir(p):
        shutil.rmtree(p, ignore_errors=True)
      else:
        try:
          os.remove(p)
        except OSError:
          pass


def _read_report():
  if not DUMP_DIR:
    return None
  paths = sorted(glob.glob(os.path.join(DUMP_DIR, "*vmem_report.html")))
  if not paths:
    return None
  return summarize_report(_report_json(paths[-1]))


_BUNDLE_RE = re.compile(r"\s*(0x[0-9a-f]+|\d+)\s+(LB|LH|LE)?")


def parse_bundles(text):
  """What one kernel's final LLO schedule (its *-final_bundles.txt) says of its length, in VLIW
  bundles (one issue cycle each, before stalls): total, and step, the body of its outermost
  loop, which Mosaic makes of the grid (first loop-body bundle to the backward branch after the
  loop exit test; the whole program where there is no loop). A static figure: DMA waits and other
  stalls add to it at run time."""
  total, loop_start, loop_end, after_exit = 0, None, None, False
  for line in text.splitlines():
    m = _BUNDLE_RE.match(line)
    if not m:
      continue
    address = int(m.group(1), 0)
    total = max(total, address + 1)
    if m.group(2) == "LB" and loop_start is None:
      loop_start = address
    if "loop exit test" in line and loop_end is None:
      after_exit = True
    if after_exit and loop_end is None and "sbr.rel" in line:
      loop_end = address
  if loop_start is None or loop_end is None or loop_end < loop_start:
    return {"total": total, "step": total, "grid_loop": False}
  return {"total": total, "step": loop_end - loop_start + 1, "grid_loop": True}


def read_bundles(kernels):
  """{kernel name: parse_bundles} for the named kernels of the last compile (TPU_AOT_BUNDLES=1;
  the module's XLA fusions have schedules of their own, left out). Dump files are named
  ID-KERNEL-NN-final_bundles.txt."""
  out = {}
  if not (DUMP_DIR and BUNDLES):
    return out
  for path in glob.glob(os.path.join(DUMP_DIR, "*-final_bundles.txt")):
    parts = os.path.basename(path).split("-")
    if len(parts) > 2 and parts[1] in kernels:
      with open(path) as f:
        out[parts[1]] = parse_bundles(f.read())
  return out


# ---------------------------------------------------------------------------------------------


def lower_args(args, gen):
  """ShapeDtypeStructs placed on the generation's device (args: ShapeDtypeStructs/arrays)."""
  import jax
  from jax.sharding import SingleDeviceSharding
  sh = SingleDeviceSharding(device(gen))
  return [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sh) for a in args]


# XLA's memory-space assignment would otherwise put small operands of the custom call whole
# into VMEM (program-scoped, layout S(1)), and then Mosaic allocates no window for them: a
# kernel's scoped figure would depend on its neighbours and on the array sizes. Off, every
# operand stays in HBM as the BlockSpec model assumes.
DEFAULT_OPTIONS = {"xla_msa_enable": False}

_CC_RE = re.compile(r'^\s*(?:ROOT )?%(\S+) = .*custom_call_target="tpu_custom_call"', re.M)


def custom_call_names(hlo_text):
  return _CC_RE.findall(hlo_text or "")


def pallas_summary(report, names=None, hlo_name=None):
  """The report entries of the Pallas custom calls (by name when known, else every entry that
  has a window, scratch operand or spill) and their largest total."""
  if not report:
    return None
  ks = report.get("kernels", {})
  want = set(names or []) | ({hlo_name} if hlo_name else set())
  if want:
    sel = {k: v for k, v in ks.items() if k in want}
  else:
    sel = {k: v for k, v in ks.items()
           if any(re.match(r"(in|out)\d+$|scratch operand|SPILL$", a["what"] or "")
                  for a in v["allocations"])}
  if not sel:
    return None
  return {"kernels": sorted(sel), "total_bytes": max(v["total_bytes"] or 0 for v in sel.values())}


def compile_kernel(fn, args, gen, options=None, keep_message=6000):
  """Compiles fn(*args) for the generation; returns a dict:
  verdict (fits | vmem_scoped | vmem_capacity | vmem_alloc | error), compile_s, message (the
  error text, cut to keep_message characters), the parsed figures (size_bytes, limit_bytes,
  over_bytes and their strings), report (summarize_report of vmem_report.html, when libtpu
  wrote one: every HLO's scoped allocations), pallas (the Pallas custom calls' entries of it:
  names and largest total_bytes), custom_calls and, for kernels that fit, memory_analysis.
  options: XLA/libtpu compile options (default DEFAULT_OPTIONS)."""
  import jax
  opts = dict(DEFAULT_OPTIONS if options is None else options)
  _clear_dump()
  dev = device(gen)
  largs = lower_args(args, gen)
  t0 = time.perf_counter()
  try:
    # the default device makes Pallas' lowering see the target TPU, not the host CPU
    with jax.default_device(dev):
      compiled = jax.jit(fn).lower(*largs).compile(opts)
  except Exception as e:  # JaxRuntimeError, ValueError from Pallas/Mosaic, ...
    dt = time.perf_counter() - t0
    msg = f"{type(e).__name__}: {e}"
    out = {"compile_s": round(dt, 4)}
    out.update(parse_error(msg))
    out["message"] = msg if len(msg) <= keep_message else msg[:keep_message] + " [...]"
    out["report"] = _read_report()
    out["pallas"] = pallas_summary(out["report"], hlo_name=out.get("hlo_name"))
    return out
  dt = time.perf_counter() - t0
  out = {"verdict": "fits", "compile_s": round(dt, 4), "report": _read_report()}
  try:
    out["custom_calls"] = custom_call_names(compiled.as_text())
  except Exception:  # pragma: no cover
    out["custom_calls"] = None
  out["pallas"] = pallas_summary(out["report"], out["custom_calls"])
  if BUNDLES:
    out["bundles"] = read_bundles(set((out["pallas"] or {}).get("kernels") or []))
  try:
    ma = compiled.memory_analysis()
    out["memory_analysis"] = {k: getattr(ma, k) for k in (
        "generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
        "temp_size_in_bytes")}
  except Exception:  # pragma: no cover
    pass
  return out


def compile_exported(exported, gen, options=None):
  """Compiles a kernel that jax.export exported (a graph's `pallas.jax_export`, written by
  scratchsim._pallas_trace.export_call: the serialized bytes, or the Exported) for the generation, as
  compile_kernel does the traced function."""
  import jax
  from jax import export
  if isinstance(exported, (bytes, bytearray)):
    exported = export.deserialize(bytearray(exported))
  args = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in exported.in_avals]
  return compile_kernel(exported.call, args, gen, options=options)


def _tpu_custom_calls(module):
  """Each Pallas kernel of a parsed module: its stablehlo.custom_call op (target
  tpu_custom_call) and that op's backend config, parsed."""
  from jax._src.lib.mlir import ir
  calls = []

  def visit(op):
    if (op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes
        and ir.StringAttr(op.attributes["call_target_name"]).value == "tpu_custom_call"):
      calls.append((op, json.loads(ir.StringAttr(op.attributes["backend_config"]).value)))
    return ir.WalkResult.ADVANCE

  module.operation.walk(visit)
  return calls


def with_vmem_limit(exported, limit_bytes):
  """The Exported with every Pallas kernel's scoped VMEM limit (its
  CompilerParams.vmem_limit_bytes) set to limit_bytes: the "scoped_memory_configs" entry of memory
  space 1 (VMEM) in the tpu_custom_call's backend config, where Pallas writes that limit (jax
  0.10.2, jax/_src/tpu_custom_call.py). Returns (Exported, how many kernels it changed)."""
  import dataclasses
  from jax._src.export import _export
  from jax._src.interpreters import mlir
  from jax._src.lib.mlir import ir
  with mlir.make_ir_context():
    module = ir.Module.parse(exported.mlir_module())
    calls = _tpu_custom_calls(module)
    for op, config in calls:
      scoped = [c for c in config.get("scoped_memory_configs", []) if c.get("memory_space") != 1]
      config["scoped_memory_configs"] = scoped + [{"memory_space": 1, "offset": 0, "size": int(limit_bytes)}]
      op.attributes["backend_config"] = ir.StringAttr.get(json.dumps(config))
    serialized = _export._module_to_bytecode(module)
  return dataclasses.replace(exported, mlir_module_serialized=serialized), len(calls)


def stated_vmem_limits(exported):
  """The scoped VMEM limits the module's Pallas kernels state (CompilerParams.vmem_limit_bytes,
  where with_vmem_limit writes it), one per kernel that states one; () where the module cannot be
  read (another JAX's export internals): then no limit counts as exact."""
  try:
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir
    with mlir.make_ir_context():
      calls = _tpu_custom_calls(ir.Module.parse(exported.mlir_module()))
      return [int(c["size"]) for _, config in calls for c in config.get("scoped_memory_configs", [])
              if c.get("memory_space") == 1 and "size" in c]
  except Exception:  # the confirmation stands with the limit as libtpu's text
    return ()


def requirement(exported, gen, first, capacity_bytes=None):
  """What a kernel that ran out of VMEM at its limit (first: compile_kernel's result) needs, as
  confirmation() records it: capacity_bytes (default VMEM_CAPACITY), and requirement_bytes, the
  scoped VMEM libtpu reports when it compiles the kernel with its limit raised to capacity_bytes
  (the smallest limit at which it compiles: make_corpus.py's --verify-every check, fits at it and
  fails 1 B below), or exceeds_capacity where it fails even there; requirement_error says why
  neither was measured (the module could not be rewritten). No second compile where the
  first already says so: a capacity or one-allocation error, an E1001 whose limit was capacity
  already or whose figure (what was allocated when it failed, so at most the need) is above it.
  {} for a kernel that fits or that Mosaic refused."""
  capacity = int(capacity_bytes or VMEM_CAPACITY[gen])
  verdict = first["verdict"]
  if not verdict.startswith("vmem"):
    return {}
  out = {"capacity_bytes": capacity}
  if (verdict != "vmem_scoped" or (first.get("limit_bytes") or 0) >= capacity
      or (first.get("size_bytes") or 0) > capacity):
    out["exceeds_capacity"] = True
    return out
  try:
    raised, changed = with_vmem_limit(exported, capacity)
  except Exception as e:  # another JAX whose export internals moved: the verdict stands without it
    out["requirement_error"] = f"not measured: {type(e).__name__}: {e}"[:300]
    return out
  if not changed:
    return {}  # nothing of a Pallas kernel to raise: the failure was another op's
  again = compile_exported(raised, gen)
  out["requirement_compile_s"] = again["compile_s"]
  if again["verdict"] == "fits" and (again.get("pallas") or {}).get("total_bytes"):
    out["requirement_bytes"] = again["pallas"]["total_bytes"]
  elif again["verdict"].startswith("vmem"):
    out["exceeds_capacity"] = True
  return out


# libtpu's outcome of a compile as a verdict of scratchsim's report.
CONFIRMED_VERDICTS = {"fits": "FITS", "vmem_scoped": "DOES_NOT_FIT", "vmem_capacity": "DOES_NOT_FIT",
                      "vmem_alloc": "DOES_NOT_FIT", "error": "NOT_COMPILABLE"}


def rounding_matches(text, value):
  """Whether libtpu's rounded size text ("16.00M") is `value` bytes printed at its precision."""
  m = re.fullmatch(r"\s*([0-9]+)(?:\.([0-9]+))?\s*([BKMGT])i?B?\s*", text or "")
  if not m:
    return False
  # Against the text's own decimal, not parse_size's whole bytes: a value halfway between two steps
  # (32.375M) prints as either neighbour, and the bytes parse_size rounds to would lose the tie.
  digits = len(m.group(2) or "")
  printed = int(m.group(1) + (m.group(2) or ""))  # the text in units of its last digit
  return abs(value * 10 ** digits - printed * _UNITS[m.group(3)]) * 2 <= _UNITS[m.group(3)]


def confirmation(r, gen, need=None, stated_limits=()):
  """What a compile_kernel result says of the kernel, as a report records it: libtpu's verdict,
  the confirmed verdict (FITS, DOES_NOT_FIT, NOT_COMPILABLE), the kernel's scoped VMEM from
  libtpu's report when it fits, else the error's figure, limit and message, and what it needs
  (requirement(): need); the topology and versions; compile_s counts both compiles. What
  `simulate --confirm` reads (confirm_main), so the command line, scratchsim.simulate and
  scratchsim.pallas.check report one confirmation. libtpu prints the figures of its VMEM errors
  rounded: they go out as size_text and limit_text, and as bytes only where exact (the integers
  of a one-allocation error; the limit the kernel states, stated_limits, when it is the one the
  rounded text shows)."""
  out = {"verdict": r["verdict"], "confirmed_verdict": CONFIRMED_VERDICTS.get(r["verdict"], "NOT_COMPILABLE"),
         "compile_s": r.get("compile_s"), "topology": TOPOLOGIES[gen], "versions": versions()}
  if r["verdict"] == "fits":
    out["scoped_vmem_bytes"] = (r.get("pallas") or {}).get("total_bytes")
  elif r.get("size_str") is not None:
    out.update(size_text=r["size_str"], limit_text=r["limit_str"])
    matching = {v for v in stated_limits if rounding_matches(r["limit_str"], v)}
    if len(matching) == 1:
      out["limit_bytes"] = matching.pop()
    out["message"] = (r.get("message") or "")[:600]
  else:
    out.update({k: r[k] for k in ("size_bytes", "limit_bytes") if r.get(k) is not None})
    out["message"] = (r.get("message") or "")[:600]
  out.update({k: v for k, v in (need or {}).items() if k != "requirement_compile_s"})
  if need and need.get("requirement_compile_s"):
    out["compile_s"] = round(out["compile_s"] + need["requirement_compile_s"], 4)
  return out


def confirm_main(argv):
  """`tpu_aot.py confirm --gen GEN FILE`: compiles the jax.export blob in FILE for GEN and prints
  confirmation() as one JSON line; where it cannot compile, {"error": why}. Exit 0 either way
  (the JSON says which); 2 for bad arguments. What `simulate --confirm` runs."""
  import argparse
  p = argparse.ArgumentParser(prog="tpu_aot.py confirm")
  p.add_argument("--gen", required=True, choices=GENERATIONS)
  p.add_argument("--capacity-bytes", type=int, default=None,
                 help="the highest scoped limit, for the retry of a kernel out of VMEM (default VMEM_CAPACITY)")
  p.add_argument("file")
  a = p.parse_args(argv)
  # An ahead-of-time compile on the CPU opens no TPU: another process holding libtpu (a sweep, a
  # second simulate) must not make this one fail.
  os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
  import importlib.util
  if importlib.util.find_spec("libtpu") is None:
    print(json.dumps({"error": f'libtpu is not installed for {sys.executable} (pip install "jax[tpu]")'}), flush=True)
    return 0
  try:
    with open(a.file, "rb") as f:
      blob = f.read()
    from jax import export
    exported = export.deserialize(bytearray(blob))
    first = compile_exported(exported, a.gen)
    out = confirmation(first, a.gen, requirement(exported, a.gen, first, a.capacity_bytes),
                       stated_vmem_limits(exported))
  except Exception as e:  # no JAX or libtpu, a blob of another JAX, libtpu refusing to start
    out = {"error": f"{type(e).__name__}: {e}"[:600]}
  print(json.dumps(out), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(confirm_main(sys.argv[2:]) if sys.argv[1:2] == ["confirm"] else
           "usage: tpu_aot.py confirm --gen GEN [--capacity-bytes N] FILE (bench/tpu/aot_smoke.py: a smoke test)")
