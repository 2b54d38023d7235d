#!/usr/bin/env python3
"""Fits the TPU lowering's estimate of Mosaic's register spills on half of the oracle corpus and
judges it on the other half (docs/tpu.md, "What the compiler adds").

  python3 bench/tpu/fit_spill_model.py tests/data/tpu/corpus.jsonl.gz \
      --bodies tests/data/tpu/corpus_bodies.jsonl.gz --pooled --margin 0.10 \
      --fit-sweep tests/data/tpu/ragged_spill_sweep.jsonl.gz \
      --fit-sweep tests/data/tpu/transpose_spill_sweep.jsonl.gz \
      --fit-sweep tests/data/tpu/flash_spill_sweep.jsonl.gz \
      --fit-sweep tests/data/tpu/flash_backward_d256_spill_sweep.jsonl.gz \
      --bound-sweep tests/data/tpu/reduction_spill_sweep.jsonl.gz \
      --bound-sweep tests/data/tpu/reduction_odd_spill_sweep.jsonl.gz \
      --bound-sweep tests/data/tpu/kernels_odd_spill_sweep.jsonl.gz \
      --bound-sweep tests/data/tpu/misc_odd_spill_sweep.jsonl.gz [--cc]

The model (backends/tpu/spill_model.cc holds the coefficients this prints with --cc): a kernel
body falls in one class by what it keeps in vector registers (PallasBody, scratchsim._pallas_body),
and its spill slots are a multiple of one figure of the body, with a low, a central and a high
multiple per class and generation:

  reduction   live_across_reduction_bytes > 0, no dot      (softmax, layer norm)
              figure: it plus row_broadcast_bytes
  attention   live_across_reduction_bytes > 0 and a dot    (flash attention forward)
              figure: the larger of it and reduction_input_bytes / 2, plus what every dot holds,
              once per run (an unrolled loop's iterations interleave); fitted on the corpus's fit
              half and the flash sweep (--fit-sweep), its high bound per generation
  looped      the same inside a loop Mosaic does not unroll (paged / ragged paged attention)
              figure: the larger of the two plus reduction_output_bytes (every head's statistics);
              fitted on the corpus's fit half and the ragged sweep (--fit-sweep)
  matmul      one 16-bit dot per grid step, nothing live across a reduction (matmuls, MoE gmm)
              figure: what the dot holds in vector registers (held_bytes: the left operand
              reused across MXU columns, one column of f32 partials across k passes)
  matmul8     the same with 8-bit operands
  matmul32    the same with 32-bit operands (figure: the partials only; the MXU re-reads a
              32-bit left operand from VMEM for each of its 16-bit passes)
  dot         several dots, nothing live across a reduction (flash backward)
              figure: the largest dot's f32 result, what it holds and its right operand
              (largest_dot_bytes); high per generation, fitted with the head_dim 256 backward sweep
  dot32       several dots of 32-bit operands (none in the corpus: the dot band)
  transpose   only a transpose of the two minor dims of 16/8/4-bit values
              figure: what the transpose holds (transpose_held_bytes: a 128-row strip of 16-bit
              values; v4: an 8-bit operand widened to 16 bits); fitted on the corpus's fit half
              and the transpose sweep (--fit-sweep), additive like matmul32
  streaming   none of these: no spill (copies, elementwise, reductions into the output)

Low is the smallest ratio spill / figure seen on the fit half, high the largest times
(1 + --margin) (per generation for the matmul and transpose classes: low = figure - the most the
registers absorbed, plus the margin, or 0 where a block of 1 MiB or more spilled less than half
its figure; for the attention class the high per generation; for 16- and 32-bit matmuls high from the blocks of 1 MiB or more, plus an offset for
smaller ones; the 32-bit central is the figure less the median absorbed; blocks of at most
small_rows rows, the most of any fit-half block that spilled with a figure of 0, add the most
such blocks spilled to the high bound), central the median over the fit rows whose figure is at least 1 MiB (the ones
whose spill can decide a verdict). Kernels are split by a hash of (kind, params), so a kernel is
in the same half on every generation. Plain Python 3; no jax.
"""
import argparse
import collections
import gzip
import hashlib
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import naive_vs_compiler as nv  # noqa: E402

GENS = ["v4", "v5e", "v5p", "v6e", "v7x"]
CLASSES = ["reduction", "attention", "looped", "matmul", "matmul8", "matmul32", "dot", "dot32", "transpose"]
# the classes' BodyClass enumerators in backends/tpu/spill_model.h
ENUMERATORS = {c: "k" + c.capitalize() for c in CLASSES}
# MXU edge and count per TensorCore (JAX tpu_info.py; models/devices/tpu_*.textproto)
MXU = {"v4": (128, 4), "v5e": (128, 4), "v5p": (128, 4), "v6e": (256, 2), "v7x": (256, 2)}
DOT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4, "i8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "i4": 1}
# generations whose Mosaic turns an 8-bit transpose without widening it (the transpose sweep: v4
# spills the operand widened to 16 bits less 8-11 vregs; v5e-v7x nothing), as spill_model.cc's
# kTurnsEightBitTransposeUnwidened
TURNS_8BIT_TRANSPOSE_UNWIDENED = {"v5e", "v5p", "v6e", "v7x"}
# generations whose Mosaic keeps an 8-bit value loaded from a block of unaligned width packed;
# v4 widens it to 32 bits and spills it less about 23 vregs (spill_model.cc
# kKeepsUnalignedNarrowLoadsPacked, tests/data/tpu/unaligned8_spill_sweep.jsonl.gz)
KEEPS_UNALIGNED_NARROW_LOADS_PACKED = {"v5e", "v5p", "v6e", "v7x"}
WIDENED_LOAD_KEPT_BYTES = 23 * 4096
MiB = 1 << 20
# generations whose Mosaic re-reads a 16-bit left operand from VMEM for each MXU column while k
# fits the MXUs at once (the corpus: no 16-bit block with k <= 512 spills its left operand there)
REREAD_LHS = {"v6e", "v7x"}
# generations on which a dot merged under a mask (masked_merge: megablox gmm) keeps one column of
# f32 partials, not two (spill_model.cc kMaskedMergeCountsOneColumn)
MASKED_MERGE_ONCE = {"v6e", "v7x"}
# classes whose high bound is taken over the whole corpus, not the fit half alone: the looped
# class's fit half holds one ragged paged kernel (spilling 0.5-0.6 x its figure) against two in
# the holdout that spill 0.9-1.7 x, beyond a fit-half band; a band that misses them could say FITS
# where libtpu fails.
WHOLE_CORPUS_HIGH = {"looped"}
# classes whose band is fitted per generation even with --pooled: the MXU's shape differs
PER_GENERATION = {"matmul", "matmul8", "matmul32"}
# multiplicative classes whose high bound (not only the central) is per generation with --pooled:
# flash attention spills up to 0.74 x its figure on v6e, 0.81 x on v5e and v5p and 0.87 x on v7x
# (the corpus's fit half and the flash sweep, fitted on both); the low bound stays pooled
BAND_PER_GENERATION = {"attention", "dot"}
# classes whose spill is the figure less what the vector registers keep of it, a number of
# registers nearly independent of the block (docs/tpu.md): fitted per generation as the figure less
# an offset, the central less the median kept, the high less the fewest kept (with the margin),
# the low less the most
ADDITIVE = {"matmul32", "reduction", "transpose"}
# additive classes whose band is [0, figure]: a softmax or layer norm spills at most what it keeps
# whole (the block, the broadcast rows, the per-row statistics; the reduction sweep, out of sample,
# keeps 20-60 vregs fewer than the fit half's fewest, more than a margin covers), and tall blocks of
# 1024-3072 lanes spill as little as a fifth of it (the sweep: Mosaic stops spilling more beyond
# 512-1024 rows), so no verdict rests on a low bound
BAND_TO_FIGURE = {"reduction"}


def packed_row_tile(width):
  """Rows of one vector register tile for operands `width` bytes wide: 8 sublanes of 32 bits
  (spill_model.cc PackedRowTile)."""
  return 8 * max(1, 4 // width)


def dot_held_bytes(d, width, gen):
  """What Mosaic keeps in vector registers across one dot's MXU passes (docs/tpu.md): nothing
  when the dot's weight tiles (k and n in MXU edges) fit the MXUs at once; otherwise the left
  operand when more than one column of MXU tiles reuses it (on REREAD_LHS generations only when
  k also takes more passes than there are MXUs), plus one MXU column of f32 partial results when
  k's passes do not fill the MXUs evenly. width: the operands' bytes."""
  size, count = MXU[gen]
  rows = packed_row_tile(width)
  m, n, k = d["m"], d["n"], d["k"]
  k_tiles, n_tiles = -(-k // size), -(-n // size)
  if k_tiles * n_tiles <= count:
    return 0
  # 32-bit operands: the MXU takes them in several 16-bit passes from VMEM; only the partials stay
  lhs = -(-m // rows) * rows * (-(-k // 128) * 128) * width if width < 4 else 0
  partial = -(-m // 8) * 8 * (min(size, -(-n // 128) * 128) if width == 4 else size) * 4
  # v6e and v7x re-read a 16-bit left operand from VMEM while k fits the MXUs at once
  lhs_reused = n_tiles > 1 and (gen not in REREAD_LHS or k_tiles > count)
  columns = 2 if d.get("masked_merge") and gen not in MASKED_MERGE_ONCE else 1
  # the partials' column is kept where k's passes do not fill the MXUs evenly (more passes than
  # MXUs, fewer that do not divide them: k = 384 on four 128-edge MXUs, or several whose last is
  # partial: k = 384 on 256-edge MXUs)
  uneven = k_tiles > count or count % k_tiles != 0 or (k_tiles > 1 and k % size != 0)
  return lhs * lhs_reused + columns * partial * uneven


def operand_width(f):
  """The widest dot operand of a body summary in bytes (4 where none is given)."""
  return max(DOT_BYTES.get(d, 4) for d in f.get("dot_dtypes") or ["f32"])


def held_bytes(f, gen):
  """The most any one of the body's dots holds (dot_held_bytes)."""
  return max([dot_held_bytes(d, operand_width(f), gen) for d in f.get("dots", ())] or [0])


def largest_dot_bytes(f, gen):
  """What the largest of several dots keeps: its f32 result (the logits block of attention's
  backward pass), what it holds in vector registers across its MXU passes, and its right operand
  (k x n: without it the backward dkv at head_dim 256 spills up to 2.4 x the rest,
  tests/data/tpu/flash_backward_d256_spill_sweep.jsonl.gz)."""
  width = operand_width(f)
  row_tile = packed_row_tile(width)
  return max([-(-d["m"] // 8) * 8 * (-(-d["n"] // 128) * 128) * 4 + dot_held_bytes(d, width, gen)
              + -(-d["k"] // row_tile) * row_tile * (-(-d["n"] // 128) * 128) * width
              for d in f.get("dots", ())] or [0])


def body_class(f, gen="v5e"):
  """(class, figure) of a body summary (pallas_body.summarize)."""
  red = f.get("reduction_live_bytes", 0)
  if red > 0 and f.get("dot_bytes", 0) == 0:
    # plus the row vectors broadcast against the block (a layer norm's weight and bias) and the
    # per-row results of the reductions (a softmax's max and sum, a vreg per 8 rows)
    return "reduction", red + f.get("row_broadcast_bytes", 0) + f.get("reduction_output_bytes", 0)
  if red > 0:
    red = max(red, f.get("reduction_input_bytes", 0) // 2)
    if f.get("rolled_loops", 0):
      # plus the per-row statistics (the running max and sum of every head): without them, blocks
      # of few kv tokens spill up to 2.45 x (tests/data/tpu/ragged_spill_sweep.jsonl.gz)
      return "looped", red + f.get("reduction_output_bytes", 0)
    # plus what every dot holds across its MXU passes, once per run: the scheduler interleaves an
    # unrolled loop's iterations, whose dots each hold their left operand (flash forward with
    # d = 256 on v4-v5p: q for q k^T, p for p v)
    return "attention", red + sum(dot_held_bytes(d, operand_width(f), gen) * d.get("count", 1)
                                  for d in f.get("dots", ()))
  dots = f.get("dots") or []
  if f.get("packed_dot_bytes", 0) > 0 and len(dots) == 1 and dots[0].get("count", 1) == 1:
    eight_bit = all(DOT_BYTES.get(d, 4) == 1 for d in f.get("dot_dtypes") or ["f32"])
    return ("matmul8" if eight_bit else "matmul"), held_bytes(f, gen)
  if f.get("dot_bytes", 0) > 0 and len(dots) == 1 and dots[0].get("count", 1) == 1:
    return "matmul32", held_bytes(f, gen)
  if f.get("packed_dot_bytes", 0) > 0:
    return "dot", largest_dot_bytes(f, gen) if dots else f["packed_dot_bytes"]
  if f.get("dot_bytes", 0) > 0:
    return "dot32", largest_dot_bytes(f, gen) if dots else f["dot_bytes"]
  if f.get("packed_transpose_bytes", 0) > 0:
    if "transposes" not in f:  # a body summarised before transposes existed: its operand's bytes
      return "transpose", f["packed_transpose_bytes"]
    return "transpose", max([transpose_held_bytes(t, gen) for t in f["transposes"]] or [0])
  return "streaming", 0


def widened_load_bytes(f, gen):
  """The largest of the body's unaligned narrow loads widened to 32 bits on generations that widen
  them (the streaming band is 0 to it, central it less WIDENED_LOAD_KEPT_BYTES); 0 elsewhere."""
  if gen in KEEPS_UNALIGNED_NARROW_LOADS_PACKED:
    return 0
  return max([l.get("count", 1) * -(-l["rows"] // 8) * 8 * -(-l["cols"] // 128) * 128 * 4
              for l in f.get("unaligned_narrow_loads", ()) if nv.BITS.get(l["dtype"], 32) < 16] or [0])


def transpose_held_bytes(t, gen):
  """What Mosaic keeps in vector registers to transpose one rows x cols operand (the transpose
  sweep, tests/data/tpu/transpose_spill_sweep.jsonl.gz): 16-bit values turn in strips of 128
  rows, all columns at once (none where the operand has at most 128 rows); 8-bit values are
  widened to 16 bits and held whole except on TURNS_8BIT_TRANSPOSE_UNWIDENED generations, which
  turn them without holding; 32-bit values hold nothing."""
  bits = nv.BITS.get(t["dtype"], 32)
  cols = -(-t["cols"] // 128) * 128
  if bits == 16:
    return 128 * cols * 2 if t["rows"] > 128 else 0
  if bits < 16 and gen not in TURNS_8BIT_TRANSPOSE_UNWIDENED:
    return -(-t["rows"] // 16) * 16 * cols * 2
  return 0


def in_fit_half(row):
  key = row["kind"] + json.dumps(row["params"], sort_keys=True)
  return int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0


def listed_spill_bytes(result):
  """The spill slots a failing compile's error lists among its largest allocations (v4's capacity
  errors, four digits), or None where they are not among them."""
  listed = [a["size_bytes"] for a in (result or {}).get("largest_allocations") or []
            if a.get("tag", "").startswith("register allocator spill slots")]
  return listed[0] if listed else None


def record(row, summary, spill, fit, sweep=False):
  """A row to fit or judge: its body's class and figure, and (the matmul classes) the one dot and
  its block rows, the dot's m (small blocks spill a few registers)."""
  cls, fig = body_class(summary, row["gen"])
  dot = summary["dots"][0] if cls in PER_GENERATION else None
  return {"row": row, "gen": row["gen"], "kind": row["kind"], "spill": spill, "cls": cls, "fig": fig,
          "fit": fit, "rows": dot["m"] if dot else None, "dot": dot, "sweep": sweep, "widened": widened_load_bytes(summary, row["gen"])}


def in_half(r, half):
  """Whether record r is in `half`: True (the corpus's fit half), False (its holdout), None (the
  whole corpus) or "sweep" (the sweeps fitted on)."""
  if half == "sweep":
    return r["sweep"]
  return not r["sweep"] and half in (None, r["fit"])


def load(corpus, bodies):
  with gzip.open(bodies, "rt") as f:
    by_id = {}
    for line in f:
      o = json.loads(line)
      by_id[o["id"]] = o["summary"]
  out = []
  with gzip.open(corpus, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header") or "graph" not in r or r["id"] not in by_id:
        continue
      src, k = nv.compiler_side(r)
      # no compile fits (v4: the scoped limit is the capacity): the error may list the spill slots
      spill = sum(a["size"] for a in k["allocations"] if a["what"] == "SPILL") if k else listed_spill_bytes(r.get("result"))
      if spill is None:
        spill = scoped_error_spill_bytes(r, by_id[r["id"]])
      out.append(record(r, by_id[r["id"]], spill, in_fit_half(r)))
  return out


def scoped_error_spill_bytes(row, summary):
  """The spill slots of a kernel that fails the scoped limit at every limit the corpus compiled it
  at (no report): E1001's size less the windows and scratch, where the size exceeds them (then it
  is the whole requirement, spills included). To the error's two decimals of a MiB, and with any
  scratch Mosaic adds for the body counted as spill (at most 36 KiB); None otherwise."""
  result = row.get("result") or {}
  size = result.get("size_bytes")
  if result.get("verdict") != "vmem_scoped" or not size:
    return None
  invalid, exact, _ = lowered(row, summary, row["gen"])
  return size - exact if invalid is None and size > exact + 8192 else None


def summary_from_graph(graph):
  """The body figures of a graph written by the tracer (scratchsim._pallas_body.body_textproto's
  lines, read back where they are numbers: a traced kernel's are), as pallas_body.summarize's dict."""
  body = graph[graph.index("body {"):]
  f = {}
  for key, value in re.findall(r'^\s*(\w+_bytes): "(\d+)"', body, re.M):
    f[key] = int(value)
  loops = re.search(r"^\s*rolled_loops: (\d+)", body, re.M)
  f["rolled_loops"] = int(loops.group(1)) if loops else 0
  f["dot_dtypes"] = re.findall(r'^\s*dot_dtypes: "(\w+)"', body, re.M)
  f["transposes"] = [{"rows": int(r), "cols": int(c), "dtype": dt, "count": int(n)} for r, c, dt, n in re.findall(
      r'transposes \{ rows: "(\d+)" cols: "(\d+)" dtype: "(\w+)" count: "(\d+)" \}', body)]
  f["dots"] = [dict({"m": int(m), "n": int(n), "k": int(k), "count": int(c)}, **({"masked_merge": True} if masked else {}))
               for m, n, k, c, masked in re.findall(
                   r'dots \{ m: "(\d+)" n: "(\d+)" k: "(\d+)" count: "(\d+)"( masked_merge: true)? \}', body)]
  return f


def load_sweep(path, bound_only=False):
  """The rows of a spill sweep (sweep_spills.py) with a spill figure, as fit rows: the report's
  SPILL allocations where the kernel compiled at the raised limit (exact), else the spill slots a
  capacity error lists among its largest allocations (v4, four digits), as load() reads the
  corpus's."""
  out = []
  with gzip.open(path, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header"):
        continue
      result = r["result"]
      spill = result["spill_bytes"] if result["verdict"] == "fits" else result.get("spill_listed_bytes")
      if spill is not None:
        out.append(dict(record(r, summary_from_graph(r["graph"]), spill, fit=True, sweep=True), bound_only=bound_only))
  return out


def absorbed_low(rs, margin):
  """(low, low_offset) of an additive class: the figure less the most the vector registers
  absorbed of it (with the margin); 0 where a block holding 1 MiB or more spilled less than half of
  it, since there what the registers absorb is not bounded by a few hundred KiB (v6e's 16-bit
  matmuls spill down to 0.22 x, v7x's nothing; v4-v5p's at least 0.79 x)."""
  if any(r["fig"] >= MiB and r["spill"] < r["fig"] / 2 for r in rs):
    return 0.0, 0.0
  return 1.0, float(max(r["fig"] - r["spill"] for r in rs)) * (1 + margin)


def fit(recs, margin, pooled=False):
  coef = {}
  has_big = set()  # (gen, cls) whose fit half has a row of figure >= 1 MiB
  for gen in GENS:
    for cls in CLASSES:
      rs = [r for r in recs if r["fit"] and r["gen"] == gen and r["cls"] == cls and r["spill"] is not None
            and r["fig"] > 0]
      if not rs:
        continue
      ratios = [r["spill"] / r["fig"] for r in rs]
      # the central from the corpus and the sweeps fitted on, not from the sweeps that only bound
      # the band (--bound-sweep); a class those alone have is not fitted (it takes a fallback below)
      central_rs = [r for r in rs if not r.get("bound_only")]
      if not central_rs:
        continue
      big = [r for r in central_rs if r["fig"] >= MiB] or central_rs
      if big[0]["fig"] >= MiB:
        has_big.add((gen, cls))
      # central: spill = slope x figure - offset, least squares over the rows whose figure is at
      # least 1 MiB (the offset: what the vector registers keep of the value)
      slope, offset = statistics.median(r["spill"] / r["fig"] for r in big), 0.0
      if len(big) >= 3 and len({r["fig"] for r in big}) >= 2:
        xs = [r["fig"] for r in big]
        ys = [r["spill"] for r in big]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
        # a line that would add bytes at figure 0 (a positive intercept) is not one the table can
        # hold (an offset is subtracted): such a class keeps the median ratio
        if b > 0 and b * mx >= my:
          slope, offset = b, b * mx - my
      low, low_offset = min(ratios), 0.0
      high, high_offset = max(ratios) * (1 + margin), 0.0
      if cls in PER_GENERATION:
        # additive: the vector registers absorb at most low_offset bytes of what the body holds
        # (16-bit matmuls:) the high multiple from the blocks of 1 MiB or more, and what small
        # blocks spill beyond it as an offset (a few vector registers would otherwise widen every
        # block's band); 8-bit matmuls spill little on large blocks and more on small ones
        low, low_offset = absorbed_low(rs, margin)
      if cls in ("matmul", "matmul32"):
        high = max(r["spill"] / r["fig"] for r in big) * (1 + margin)
        high_offset = max(0.0, max(r["spill"] - high * r["fig"] for r in rs)) * (1 + margin)
      if cls in ADDITIVE:
        # what the f32 partials of a 32-bit matmul, or the f32 row block a softmax keeps across
        # its reductions, spills is the figure less what the registers keep of it, about the same
        # number of registers on every block (docs/tpu.md): slope 1, the median kept; the high
        # bound is the figure less the least kept (less 10% of it; where a block spilled more than
        # its figure, plus the most it spilled beyond, plus 10%), the low less the most kept
        held = [r for r in central_rs if r["spill"] > 0]
        slope, offset = 1.0, float(statistics.median(r["fig"] - r["spill"] for r in held)) if held else 0.0
        if cls in BAND_TO_FIGURE:
          # up to the figure, plus the most any block spilled beyond it (v4: bf16 layer norms and
          # softmaxes, 10-44 vregs; tests/data/tpu/reduction*_spill_sweep.jsonl.gz), with the margin
          beyond = max([r["spill"] - r["fig"] for r in rs] + [0])
          low, low_offset, high, high_offset = 0.0, 0.0, 1.0, beyond * (1 + margin)
        else:
          low, low_offset = absorbed_low(rs, margin)
          spilled = [r for r in rs if r["spill"] > 0]  # the bound-only rows too
          if spilled:
            kept = min(r["fig"] - r["spill"] for r in spilled)
            high, high_offset = 1.0, -kept * (1 - margin) if kept > 0 else -kept * (1 + margin)
      small_offset, small_rows = 0.0, 0
      if cls in PER_GENERATION:
        # small blocks whose dot holds nothing (figure 0) spill a few registers all the same,
        # alike on every generation, and no block of more rows than the largest of them does: the
        # high bound adds the most they spilled for blocks of at most that many rows, over the
        # whole corpus (the fit half's most, 100 KiB, is exceeded by a v6e 512-row block of the
        # holdout spilling 164 KiB: a bound that misses it could say FITS where libtpu fails)
        zero = [r for r in recs if in_half(r, None) and r["cls"] == cls and r["spill"] and r["fig"] == 0]
        if zero:
          small_offset = max(r["spill"] for r in zero) * (1 + margin)
          small_rows = max(r["rows"] for r in zero)
      coef[(gen, cls)] = (low, slope, high, len(rs), offset, low_offset, high_offset, small_offset, small_rows)
  # a central fitted on small figures only (spills of a few registers) says nothing of the blocks
  # whose spill decides a verdict: such a generation takes the central of the nearest one that has
  # large figures (the newest not newer, else the oldest newer), as vector_cost.cc does
  for (gen, cls), v in list(coef.items()):
    if (gen, cls) in has_big or cls in PER_GENERATION or cls in ADDITIVE:
      continue
    i = GENS.index(gen)
    donors = [g for g in reversed(GENS[:i]) if (g, cls) in has_big] + [g for g in GENS[i + 1:] if (g, cls) in has_big]
    if donors:
      d = coef[(donors[0], cls)]
      coef[(gen, cls)] = (v[0], d[1], v[2], v[3], d[4]) + tuple(v[5:])
  if pooled:
    # one band per class over every generation (more kernels per class); central stays per generation
    for cls in CLASSES:
      have = [v for (g, c), v in coef.items() if c == cls]
      if not have or cls in PER_GENERATION or cls in ADDITIVE:
        continue
      lo, hi = min(v[0] for v in have), max(v[2] for v in have)
      if cls in BAND_PER_GENERATION:
        # the low bound pooled (a generation's fit half may lack the blocks that spill least), the
        # high per generation
        for gen in GENS:
          if (gen, cls) in coef:
            coef[(gen, cls)] = (lo,) + coef[(gen, cls)][1:5] + (0.0, 0.0, 0.0, 0)
        continue
      if cls in WHOLE_CORPUS_HIGH:
        # the band's high over both halves (see WHOLE_CORPUS_HIGH)
        every = [r["spill"] / r["fig"] for r in recs if r["cls"] == cls and r["spill"] is not None and r["fig"] > 0]
        hi = max(hi, max(every) * (1 + margin))
      for gen in GENS:
        if (gen, cls) in coef:
          _, mid, _, n, off, _, _, _, _ = coef[(gen, cls)]
          coef[(gen, cls)] = (lo, mid, hi, n, off, 0.0, 0.0, 0.0, 0)
  # several dots of 32-bit operands (no kernel of the corpus has them) take the band of several
  # dots of narrower ones: a body of that shape, not a fitted one
  if not any(c == "dot32" for _, c in coef):
    for gen in GENS:
      if (gen, "dot") in coef:
        coef[(gen, "dot32")] = coef[(gen, "dot")]
  # a class a generation's fit half lacks takes the widest band of the other generations
  for cls in CLASSES:
    have = [v for (g, c), v in coef.items() if c == cls]
    for gen in GENS:
      if (gen, cls) not in coef and have:
        coef[(gen, cls)] = (min(v[0] for v in have), statistics.median([v[1] for v in have]),
                            max(v[2] for v in have), 0, 0.0, max(v[5] for v in have), max(v[6] for v in have),
                            max(v[7] for v in have), max(v[8] for v in have))
  return coef


def low_of(c, fig):
  """The low bound of a class's band at figure fig: low x fig - low_offset, at least 0."""
  return max(0.0, c[0] * fig - c[5])


def high_of(c, r):
  """The high bound of row r: high x figure + high_offset (a positive offset only where the figure
  is not 0: the offsets are fitted on such rows), plus small_offset where a matmul block has at
  most small_rows rows."""
  small = r["rows"] is not None and r["rows"] <= c[8]
  offset = c[6] if c[6] < 0 or r["fig"] > 0 else 0.0
  return max(0.0, c[2] * r["fig"] + offset) + c[7] * small


def judge(recs, coef, half):
  """Per generation: rows with spill known, how many lie within [low, high] x figure."""
  lines = []
  for gen in GENS:
    rs = [r for r in recs if r["gen"] == gen and r["spill"] is not None and r["cls"] != "streaming" and in_half(r, half)]
    inside = sum(1 for r in rs if low_of(coef[(gen, r["cls"])], r["fig"]) <= r["spill"] <= high_of(coef[(gen, r["cls"])], r) + 1)
    above = [r for r in rs if r["spill"] > high_of(coef[(gen, r["cls"])], r) + 1]
    lines.append(f"  {gen}: {inside} of {len(rs)} spills within [low, high]; above high: "
                 + ", ".join(f"{r['kind']} {r['spill']}>{high_of(coef[(gen, r['cls'])], r):.0f}" for r in above))
  stream = [r for r in recs if r["cls"] == "streaming" and r["spill"] and in_half(r, half)]
  lines.append(f"  streaming bodies with spill > 0: {len(stream)} " +
               ", ".join(f"{r['gen']} {r['kind']} {r['spill']}" for r in stream))
  return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The whole verdict, as backends/tpu lowers a row's graph (for choosing the model; the C++ test
# backends/tpu/tpu_corpus_test.cc is what measures the shipped model).

BITS = nv.BITS
FULL_ROWS = {32: 8, 64: 8, 8: 32, 4: 64}


def full_rows(bits, gen):
  if bits == 16:
    return 16 if gen == "v7x" else 8
  return FULL_ROWS.get(bits, 8)


def tile_rows(r, bits, gen):
  packing = max(1, 32 // bits)
  full = full_rows(bits, gen)
  if r >= 8 and r % full != 0:
    return 8  # XLA's 8-row tile for an unaligned whole dimension (docs/tpu-oracle.md)
  t = 1
  while t < r:
    t *= 2
  return min(full, max(packing, t))


def padded_bytes(shape, dtype, gen):
  bits = BITS[dtype]
  packing = max(1, 32 // bits)
  if len(shape) == 1:
    n = -(-shape[0] // (packing * 128)) * packing * 128
    return n * bits // 8
  *lead, r, c = shape
  t = tile_rows(r, bits, gen)
  n = -(-r // t) * t * (-(-c // 128) * 128)
  for d in lead:
    n *= d
  return n * bits // 8


def lowered(row, summary, gen):
  """(invalid reason or None, windows + scratch, [window totals])."""
  g = nv.parse_graph(row["graph"])
  allocs = []
  for field in ("in_specs", "out_specs"):
    for sp in g[field]:
      if sp.get("memory_space", "vmem") != "vmem":
        continue
      bits = BITS[sp["dtype"]]
      bc = sp.get("buffer_count")
      if bc is not None and bc > 2:
        return "buffered", 0, []
      shape = sp["block_shape"]
      arr = sp["array_shape"]
      if len(shape) >= 2 and len(arr) == len(shape) and shape[-2] != arr[-2]:
        mult = 8 if bits >= 16 else 8 * 32 // bits
        if shape[-2] % mult:
          return "misaligned", 0, []
      allocs.append(padded_bytes(shape, sp["dtype"], gen) * nv.copies(sp, g["grid"]))
  temporary = set(summary.get("temporary_scratch", []))
  for i, sp in enumerate(g["scratch_shapes"]):
    if sp.get("memory_space", "vmem") == "vmem" and f"scratch{i}" not in temporary:
      allocs.append(padded_bytes(sp["shape"], sp["dtype"], gen))
  if set(summary.get("arithmetic_dtypes", [])) & {"i8", "u8", "i4", "f8e4m3fn", "f8e5m2"}:
    return "arith8", 0, []
  peaks = {"v4": {"bf16", "f32", "f16"}, "v5e": {"bf16", "f32", "i8"}, "v5p": {"bf16", "f32", "i8"},
           "v6e": {"bf16", "f32", "i8", "f8e4m3fn"}, "v7x": {"bf16", "f32", "f8e4m3fn"}}
  if set(summary.get("dot_dtypes", [])) - peaks[gen] - {"i32", "f16"}:
    return "dot_dtype", 0, []
  return None, sum(allocs), allocs


def evaluate(recs, coef, bodies, half=None, verbose=False):
  out = collections.defaultdict(collections.Counter)
  for r in recs:
    if not in_half(r, half):
      continue
    row = r["row"]
    gen = r["gen"]
    v = row["result"]["verdict"]
    if v in ("timeout", "crash", "build_error"):
      continue
    s = bodies[row["id"]]
    invalid, exact, allocs = lowered(row, s, gen)
    st = out[gen]
    if invalid or v == "error":
      st["invalid_rows"] += v == "error"
      st["invalid_agree"] += bool(invalid) and v == "error"
      if bool(invalid) != (v == "error") and verbose:
        print("INVALID MISMATCH", gen, r["kind"], row["params"], invalid, v)
      continue
    limit = row.get("vmem_limit_bytes") or row["default_limit_bytes"]
    cap = {"v4": 16, "v5e": 128, "v5p": 64, "v6e": 128, "v7x": 64}[gen] << 20
    if r["cls"] == "streaming":
      lo, hi = 0, r["widened"]
      mid = max(0, hi - WIDENED_LOAD_KEPT_BYTES)
    else:
      c = coef[(gen, r["cls"])]
      cmid, off = c[1], c[4]
      lo, hi = int(low_of(c, r["fig"])), int(high_of(c, r))
      mid = min(max(int(cmid * r["fig"] - off), lo), hi)
    bad = lambda total: total > limit or total > cap
    if bad(exact + lo):
      pred = "no"
    elif bad(exact + hi):
      pred = "risk"
    else:
      pred = "fits"
    truth = "fits" if v == "fits" else "no"
    st["rows"] += 1
    st["truth_" + truth] += 1
    st["pred_" + pred] += 1
    st["agree"] += (pred == "fits") == (truth == "fits")
    st["false_fits"] += pred == "fits" and truth == "no"
    st["false_fail"] += pred != "fits" and truth == "fits"
    st["risk_on_fitting"] += pred == "risk" and truth == "fits"
    if verbose and (pred == "fits") != (truth == "fits"):
      print(f"MISMATCH {gen} {r['kind']} {row['params']} truth={v} pred={pred} exact={exact} lo={lo} hi={hi} "
            f"limit={limit} spill={r['spill']} req={row.get('requirement_bytes')} X={row['result'].get('size_bytes')}")
    if truth == "no":
      # the compiler's figure
      X = row["result"].get("size_bytes")
      req = row.get("requirement_bytes")
      if v == "vmem_scoped":
        fig, ours = (X, exact) if exact > limit else ((req or X), exact + mid)
      elif v == "vmem_capacity":
        fig, ours = X, exact + mid
      else:  # vmem_alloc: one allocation
        fig, ours = X, max(allocs) if allocs else 0
      if fig:
        st["fail_with_figure"] += 1
        ok = abs(ours - fig) <= 0.01 * fig
        st["within_1pct"] += ok
        if verbose and not ok and verbose > 1:
          print(f"BYTES {gen} {r['kind']} {row['params']} {v} fig={fig} ours={ours} exact={exact} mid={mid}")
  return out


def print_eval(out, title):
  print(title)
  print("gen  rows  agree  false_FITS  fitting_not_FITS  at_risk(all/fitting)  failing  within1%  invalid(agree/rows)")
  for gen in GENS:
    st = out[gen]
    print(f"{gen:4} {st['rows']:5} {st['agree']:6} {st['false_fits']:10} {st['false_fail']:17} "
          f"{st['pred_risk']:10}/{st['risk_on_fitting']:<10} {st['fail_with_figure']:8} {st['within_1pct']:8}   "
          f"{st['invalid_agree']}/{st['invalid_rows']}")


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("corpus")
  p.add_argument("--bodies", required=True)
  p.add_argument("--margin", type=float, default=0.10)
  p.add_argument("--cc", action="store_true", help="print the coefficient table as C++")
  p.add_argument("--verbose", type=int, default=0)
  p.add_argument("--pooled", action="store_true", help="one low/high band per class over all generations")
  p.add_argument("--fit-sweep", action="append", default=[],
                 help="a sweep_spills.py file whose compiled rows join the fit half (repeatable)")
  p.add_argument("--bound-sweep", action="append", default=[],
                 help="a sweep_spills.py file whose compiled rows join the fit half for the bands' bounds "
                      "only, not the centrals (repeatable)")
  a = p.parse_args(argv)
  recs = load(a.corpus, a.bodies)
  for path in a.fit_sweep:
    recs += load_sweep(path)
  for path in a.bound_sweep:
    recs += load_sweep(path, bound_only=True)
  coef = fit(recs, a.margin, a.pooled)
  print(f"rows: {len(recs)} ({sum(r['fit'] for r in recs)} in the fit half)")
  print("class      gen   n(fit)  low-offset       central-offset    high+offset")
  for cls in CLASSES:
    for gen in GENS:
      if (gen, cls) not in coef:
        continue
      lo, mid, hi, n, off, lo_off, hi_off, small_off, small_rows = coef[(gen, cls)]
      print(f"{cls:10} {gen:4} {n:6}  {lo:6.3f}-{lo_off:8.0f}  {mid:6.3f}-{off:8.0f}   {hi:6.3f}+{hi_off:8.0f}"
            + (f" (+{small_off:.0f} to {small_rows} rows)" if small_rows else ""))
  print("fit half:")
  print(judge(recs, coef, True))
  print("holdout half:")
  print(judge(recs, coef, False))
  if a.fit_sweep or a.bound_sweep:
    print("sweeps fitted on:")
    print(judge(recs, coef, "sweep"))
  bodies = {}
  with gzip.open(a.bodies, "rt") as f:
    for line in f:
      o = json.loads(line)
      bodies[o["id"]] = o["summary"]
  print_eval(evaluate(recs, coef, bodies, True), "fit half:")
  print_eval(evaluate(recs, coef, bodies, False, verbose=a.verbose), "holdout half:")
  print_eval(evaluate(recs, coef, bodies, None), "whole corpus:")
  if a.cc:
    print("\n// generated by bench/tpu/fit_spill_model.py (margin %.2f): {class, gen, low, central, high} in 1/1000"
          % a.margin)
    for cls in CLASSES:
      for gen in GENS:
        if (gen, cls) not in coef:
          continue
        lo, mid, hi, n, off, lo_off, hi_off, small_off, small_rows = coef[(gen, cls)]
        print(f'    {{"{cls}", "{gen}", {int(lo * 1000)}, {int(round(lo_off))}, {int(round(mid * 1000))}, {int(round(off))}, '
              f'{int(hi * 1000) + 1}, {int(hi_off) + (1 if hi_off else 0)}, {int(small_off) + (1 if small_off else 0)}, '
              f'{small_rows}}},')
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
