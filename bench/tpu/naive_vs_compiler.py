#!/usr/bin/env python3
"""Compares the naive scoped-VMEM sum of each corpus kernel with what libtpu reported.

The naive sum is the BlockSpec model of docs/tpu.md, computed from the row's graph (the
KernelGraph textproto pallas_to_graph.py wrote): per input/output block, (sublane, lane)-padded
bytes x copies (2, 1 for a constant index map / extent-1 axes / no grid, n for Buffered(n)),
plus VMEM scratch once. The compiler's side is libtpu's vmem_report of the Pallas custom call
(the default compile if it fitted, else the one at full VMEM: `at_capacity`): its windows
(`in0`, `out0`, ...), scratch operands, `SPILL` and anything else.

  python3 bench/tpu/naive_vs_compiler.py tests/data/tpu/corpus.jsonl.gz            # summary
  python3 bench/tpu/naive_vs_compiler.py tests/data/tpu/corpus.jsonl.gz --csv rows.csv

No jax needed (plain Python 3).
"""
import argparse
import collections
import csv
import gzip
import json
import re
import statistics
import sys

BITS = {"f32": 32, "i32": 32, "u32": 32, "f64": 64, "bf16": 16, "f16": 16, "i16": 16, "u16": 16,
        "i8": 8, "u8": 8, "f8e4m3fn": 8, "f8e5m2": 8, "i4": 4, "i1": 32}


def parse_graph(text):
  """The pallas message of a generated graph: grid, in_specs, out_specs, scratch_shapes."""
  g = {"grid": [], "in_specs": [], "out_specs": [], "scratch_shapes": [], "scalar_prefetch": []}
  cur = None
  for line in text.splitlines():
    s = line.strip()
    if s.startswith("#") or not s:
      continue
    m = re.match(r"(in_specs|out_specs|scratch_shapes|scalar_prefetch) \{$", s)
    if m:
      cur = {"block_shape": [], "shape": [], "array_shape": [], "index_map_axes": []}
      g[m.group(1)].append(cur)
      continue
    if s == "}":
      cur = None
      continue
    m = re.match(r'(\w+): "?([^"]*)"?$', s)
    if not m:
      continue
    k, v = m.groups()
    if cur is None:
      if k == "grid":
        g["grid"].append(int(v))
      continue
    if k in ("block_shape", "shape", "array_shape"):
      cur[k].append(int(v))
    elif k == "index_map_axes":
      cur[k].append(int(v))
    elif k in ("buffer_count",):
      cur[k] = int(v)
    elif k == "constant_index_map":
      cur[k] = v == "true"
    else:
      cur[k] = v
  return g


def _round_up(x, m):
  return -(-x // m) * m


def padded_bytes(shape, dtype, gen):
  """Bytes of one block in VMEM with Mosaic's (sublane, lane) tiling (docs/tpu.md)."""
  bits = BITS[dtype]
  packing = max(1, 32 // bits)
  if not shape:
    shape = [1]
  if len(shape) == 1:
    n = _round_up(shape[0], packing * 128)
    return n * bits // 8
  rows_tile = {32: 8, 64: 8, 16: 16 if gen == "v7x" else 8, 8: 32, 4: 64}[bits]
  *lead, r, c = shape
  if r < rows_tile:  # the compact tile: packing rows, doubled until it covers the dim
    t = packing
    while t < r:
      t *= 2
    rows_tile = min(t, rows_tile)
  n = _round_up(r, rows_tile) * _round_up(c, 128)
  for d in lead:
    n *= d
  return n * bits // 8


def copies(spec, grid):
  if "buffer_count" in spec:
    return spec["buffer_count"]
  if not grid or spec.get("constant_index_map"):
    return 1
  if spec["index_map_axes"] and all(grid[a] == 1 for a in spec["index_map_axes"]):
    return 1
  return 2


def naive(graph_text, gen):
  g = parse_graph(graph_text)
  out = {"windows": 0, "scratch": 0, "per_operand": []}
  for field in ("in_specs", "out_specs"):
    for i, sp in enumerate(g[field]):
      space = sp.get("memory_space", "vmem")
      if space != "vmem":
        continue
      b = padded_bytes(sp["block_shape"], sp["dtype"], gen)
      c = copies(sp, g["grid"])
      out["windows"] += b * c
      out["per_operand"].append((("in" if field == "in_specs" else "out") + str(i), b, c))
  for sp in g["scratch_shapes"]:
    if sp.get("memory_space", "vmem") == "vmem":
      out["scratch"] += padded_bytes(sp["shape"], sp["dtype"], gen)
  out["total"] = out["windows"] + out["scratch"]
  return out


def compiler_side(row):
  """(source, allocations of the Pallas call) from the fitting compile, else at capacity."""
  for src in ("result", "at_capacity"):
    res = row.get(src) or {}
    if res.get("verdict") != "fits":
      continue
    rep, pal = res.get("report") or {}, res.get("pallas") or {}
    ks = [rep.get("kernels", {}).get(k) for k in pal.get("kernels", [])]
    ks = [k for k in ks if k]
    if ks:
      k = max(ks, key=lambda k: k["total_bytes"] or 0)
      return src, k
  return None, None


def split(k):
  win = sum(a["size"] for a in k["allocations"] if re.match(r"(in|out)\d+$", a["what"]))
  scr = sum(a["size"] for a in k["allocations"] if a["what"] == "scratch operand")
  spill = sum(a["size"] for a in k["allocations"] if a["what"] == "SPILL")
  other = k["total_bytes"] - win - scr - spill
  return win, scr, spill, other


def intermediate_bytes(kind, p):
  """f32 bytes of the largest value the kernel body materialises (a guess at what spills):
  the dot result of a matmul block, the score tile of flash attention, the f32 copy of a
  row block. None where the body holds nothing beyond its blocks."""
  if kind in ("matmul_acc", "matmul_buffered"):
    return p["bm"] * p["bn"] * 4
  if kind == "matmul_noacc":
    return p["bm"] * p["bn"] * 4
  if kind == "flash_fwd":
    return p.get("block_b", 1) * p["block_q"] * p["block_k_major"] * 4
  if kind == "flash_bwd_dkv":
    return p["block_q"] * p["block_k_major"] * 4
  if kind == "flash_bwd_dq":
    return p["block_q_major"] * p["block_k"] * 4
  if kind in ("softmax", "layernorm"):
    return p["br"] * _round_up(p["d"], 128) * 4
  return None


def rows_of(path):
  op = gzip.open if path.endswith(".gz") else open
  with op(path, "rt") as f:
    for line in f:
      r = json.loads(line)
      if not r.get("header"):
        yield r


def analyse(path):
  out = []
  for r in rows_of(path):
    if "graph" not in r:
      continue
    nv = naive(r["graph"], r["gen"])
    src, k = compiler_side(r)
    res = r["result"]
    rec = {"id": r["id"], "gen": r["gen"], "kind": r["kind"], "verdict": res["verdict"],
           "limit": r.get("vmem_limit_bytes") or r["default_limit_bytes"],
           "naive_windows": nv["windows"], "naive_scratch": nv["scratch"], "naive_total": nv["total"],
           "error_size": res.get("size_bytes"), "source": src, "compile_s": res.get("compile_s"),
           "verify_ok": (r.get("verify") or {}).get("ok"),
           "intermediate": intermediate_bytes(r["kind"], r["params"])}
    if k:
      win, scr, spill, other = split(k)
      tags = collections.Counter()
      for al in k["allocations"]:
        if not re.match(r"(in|out)\d+$|scratch operand$|SPILL$", al["what"] or ""):
          tags[al["what"]] += al["size"] or 0
      rec.update(c_windows=win, c_scratch=scr, c_spill=spill, c_other=other, c_total=k["total_bytes"],
                 other_tags=";".join(f"{t}={b}" for t, b in sorted(tags.items())),
                 levels=";".join(f"{a['what']}:{a['levels']}" for a in k["allocations"]
                                 if re.match(r"(in|out)\d+$", a["what"])))
    out.append(rec)
  return out


def _q(xs, p):
  xs = sorted(xs)
  return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))] if xs else None


def summary(recs):
  lines = []
  by = collections.defaultdict(list)
  for r in recs:
    by[(r["gen"], r["kind"])].append(r)
  lines.append("gen  kind              n  with_report  windows==naive  scratch==naive  spill>0  "
               "spill_median  spill_max  spill/total_max  other!=0")
  for (gen, kind), rs in sorted(by.items()):
    w = [r for r in rs if "c_total" in r]
    we = sum(r["c_windows"] == r["naive_windows"] for r in w)
    se = sum(r["c_scratch"] == r["naive_scratch"] for r in w)
    sp = [r["c_spill"] for r in w]
    frac = [r["c_spill"] / r["c_total"] for r in w if r["c_total"]]
    oth = sum(r["c_other"] != 0 for r in w)
    lines.append(f"{gen:4} {kind:16} {len(rs):3}  {len(w):11}  {we:14}  {se:14}  "
                 f"{sum(s > 0 for s in sp):7}  {(_q(sp, .5) or 0):12}  {(max(sp) if sp else 0):9}  "
                 f"{(max(frac) if frac else 0):15.3f}  {oth:8}")
  # failing kernels: the error's "Scoped allocation with size X" against naive and the full need
  lines.append("")
  lines.append("failing kernels (scoped-limit error): X = the error's size")
  lines.append("gen  kind              n  X==naive(±0.5%)  X==full(±0.5%)  X<naive  median X/naive")
  byf = collections.defaultdict(list)
  for r in recs:
    if r["verdict"] == "vmem_scoped" and r["error_size"]:
      byf[(r["gen"], r["kind"])].append(r)
  for (gen, kind), rs in sorted(byf.items()):
    near = lambda a, b: b and abs(a - b) <= 0.005 * b + 5200
    xn = sum(bool(near(r["error_size"], r["naive_total"])) for r in rs)
    xf = sum(bool(near(r["error_size"], r.get("c_total"))) for r in rs)
    lt = sum(r["error_size"] < r["naive_total"] * 0.995 for r in rs)
    ratio = [r["error_size"] / r["naive_total"] for r in rs if r["naive_total"]]
    lines.append(f"{gen:4} {kind:16} {len(rs):3}  {xn:15}  {xf:14}  {lt:7}  "
                 f"{statistics.median(ratio) if ratio else 0:.3f}")
  # which figure the scoped-limit error gives: blocks + scratch when they alone exceed the limit
  # (checked before Mosaic's register allocation), else the total with spills
  lines.append("")
  lines.append("scoped-limit errors: naive > limit -> X == naive?  naive <= limit -> X == full (with spill)?")
  pre = [r for r in recs if r["verdict"] == "vmem_scoped" and r["error_size"] and r["naive_total"] > r["limit"]]
  post = [r for r in recs if r["verdict"] == "vmem_scoped" and r["error_size"] and r["naive_total"] <= r["limit"]]
  near = lambda a, b: b is not None and abs(a - b) <= 0.005 * b + 5200
  lines.append(f"  naive > limit: {len(pre)} rows, X == naive on {sum(near(r['error_size'], r['naive_total']) for r in pre)}")
  lines.append(f"  naive <= limit: {len(post)} rows, X == full on {sum(near(r['error_size'], r.get('c_total')) for r in post)}"
               f" (full known on {sum(r.get('c_total') is not None for r in post)})")
  # the windows, scratch and other allocations summed over all rows
  w = [r for r in recs if "c_total" in r]
  lines.append("")
  lines.append(f"rows with a compiler report: {len(w)}; windows == naive on {sum(r['c_windows'] == r['naive_windows'] for r in w)}; "
               f"scratch == naive on {sum(r['c_scratch'] == r['naive_scratch'] for r in w)}; "
               f"spill > 0 on {sum(r['c_spill'] > 0 for r in w)}; other != 0 on {sum(r['c_other'] != 0 for r in w)}")
  tags = collections.Counter()
  for r in w:
    for t in filter(None, (r.get("other_tags") or "").split(";")):
      tags[(r["gen"], t.split("=")[0])] += 1
  for (gen, t), n in sorted(tags.items()):
    lines.append(f"  other allocation {t!r} on {gen}: {n} rows")
  lines.append("")
  lines.append("spill / f32 intermediate (intermediate_bytes) where spill > 0: quantiles per kind and generation")
  lines.append("kind              gen   n(spill>0)/n   p10    median  p90")
  byk = collections.defaultdict(list)
  for r in w:
    if r.get("intermediate"):
      byk[(r["kind"], r["gen"])].append(r)
  for (kind, gen), rs in sorted(byk.items()):
    ratios = [r["c_spill"] / r["intermediate"] for r in rs if r["c_spill"] > 0]
    lines.append(f"{kind:17} {gen:4}  {len(ratios):4}/{len(rs):<4}    "
                 f"{_q(ratios, .1) or 0:5.2f}  {_q(ratios, .5) or 0:5.2f}  {_q(ratios, .9) or 0:5.2f}")
  v = [r for r in recs if r.get("verify_ok") is not None]
  lines.append(f"verified requirement (fits at it, fails 1 B below): {sum(bool(r['verify_ok']) for r in v)} of {len(v)}")
  return "\n".join(lines)


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("corpus")
  p.add_argument("--csv", help="write one line per row here")
  a = p.parse_args(argv)
  recs = analyse(a.corpus)
  if a.csv:
    keys = sorted({k for r in recs for k in r})
    with open(a.csv, "w", newline="") as f:
      w = csv.DictWriter(f, fieldnames=keys)
      w.writeheader()
      w.writerows(recs)
  print(summary(recs))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
