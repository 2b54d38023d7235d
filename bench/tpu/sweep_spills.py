#!/usr/bin/env python3
"""Mosaic's register spill slots over a grid of block shapes of one kernel family, compiled by
libtpu with the scoped limit raised so that every kernel compiles and its report gives the spill
slots exactly: an out-of-sample check of the spill estimate's band (backends/tpu/spill_model.cc;
tests: backends/tpu/tpu_corpus_test.cc, *SweepSpills*), fit data for the classes the corpus has
few kernels of (fit_spill_model.py --fit-sweep: ragged, transpose, flash, flash_backward_d256),
rows that bound a band without moving its central (--bound-sweep: reduction, reduction_odd,
kernels_odd, misc_odd), and two holdouts kept out of both (holdout, holdout2).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/sweep_spills.py \\
      --family F tests/data/tpu/F_spill_sweep.jsonl.gz --gens v4,v5e,v5p,v6e,v7x

for each family F below (flash_wide was appended to flash_spill_sweep.jsonl.gz, and the ragged,
flash_backward and reduction files were compiled a few generations at a time and concatenated, as
their headers say).

Families:
  flash      JAX's flash attention forward: batch 1, 2 heads, sequence 8192, head_dim 128, bf16;
             block_q 256-2048, block_k 128-2048, block_k_major = block_k x 1, 2, 4 or 8 (at most
             4096), the score tiles of one grid step (block_q x block_k_major x 4 B x iterations) at
             most 48 MiB (68 shapes; the corpus's flash kernels have sequence 4096).
  flash_wide the flash family's 8 shapes of block_k = 2048 alone (added to it later).
  flash_head_dim  the same at head_dim 64 and 256: block_q 512-2048, block_k 256-1024, 1, 2 or 4
             inner iterations, the score tiles of a grid step at most 32 MiB (54 shapes; the
             corpus's d = 256 kernels are all in the half the fit does not see).
  flash_causal  JAX's flash attention forward at sequence 4096, head_dim 128: causal in bf16, and
             non-causal in f32, over block_q 512-2048, block_k 256-1024, 1, 2 or 4 inner
             iterations, the score tiles of a grid step at most 16 MiB (2 x 21 shapes).
  flash_backward  JAX's flash attention backward kernels, sequence 4096, head_dim 128, bf16: dq at
             block_q_major and block_k_major 512-2048 with block_k 256 and 512 (18 shapes), dkv at
             block_q_major 512-2048, block_q 256 and 512, block_k_major 512 and 1024, block_k 256
             and 512 (24 shapes; the corpus's have block_q_major = block_k_major).
  flash_backward_d256  the same 42 shapes at head_dim 256 (the corpus's d = 256 backward kernels
             have block_q_major = block_k_major).
  reduction  softmax and layer norm over 8192 rows (tpu_kernels.softmax, .layernorm), f32 and
             bf16: d 256-8192, block rows 128-2048, the f32 row block at most 16 MiB (the corpus
             has d 768-8192 with 128-1024 rows; this adds the narrow rows and the tall blocks).
  reduction_odd  the same at row widths that are not whole lane tiles: d 200, 520, 1000, 3000 by
             128-1024 rows, f32 and bf16 (64 shapes).
  ragged     JAX's ragged paged attention (tpu_kernels.ragged_paged), bf16, d 128, 1024 tokens, 16
             sequences of 128 pages: query/kv heads 8/1, 16/4, 32/8; 256, 1024 or 2048 kv tokens a
             block at page sizes 16 and 64; 32, 128 or 256 queries a block; every head's scores
             (queries x query heads x kv tokens x 4 B) at most 32 MiB (52 shapes, 26 distinct;
             tests/data/tpu/ragged_spill_sweep.jsonl.gz has v4 too).
  unaligned8 int8 copies (tpu_kernels.copy, body "copy") whose minor dim is not a multiple of 128:
             64-4096 rows by 129-1000 columns (the block at most 2 MiB), leading dims 2 and 4, and
             three aligned controls (88 shapes): v4 widens them to 32 bits.
  matmul_odd bf16 matmuls with an f32 accumulator (tpu_kernels.matmul_acc) over blocks of 384, 768
             and 1536 rows and columns and k 384 and 1536, the accumulator at most 4.5 MiB (16 shapes).
  kernels_odd  f32, int8 and fp8 matmuls over blocks of 384-1536 (18 shapes), megablox gmm over
             tiles of 384-1536 (5) and paged attention at head counts, head dims and pages per
             block the corpus does not have (6).
  misc_odd   flash attention's backward kernels causal (bf16) and in f32 (8 shapes), and transposes
             of 384-1152 blocks in bf16 and int8 (12).
  holdout    every kind at shapes no other sweep or corpus row has (26 shapes: causal flash at
             head_dim 64 and 256, its backward kernels, bf16 and f32 matmuls over 256-1280 blocks,
             layer norm and softmax of odd widths, f32 gmm, transposes, ragged paged attention),
             kept out of every fit and bound.
  holdout2   a second holdout (20 shapes of every kind), kept out of every fit and bound.
  transpose_batched  bf16 blocks of (lead, rows, cols) with lead 1, 2 and 4 whose two minor dims
             are swapped: 512 x 1024, 256 x 2048 and 1024 x 1024 (9 shapes).
  transpose  a block transposed whole (tpu_kernels.transpose), bf16 and int8: rows 128-2048 by
             columns 256-4096, at most 8 MiB; f32 with 1024 rows (72 shapes; the corpus has eight
             bf16 and f32 blocks).
The limit: 100 MiB on v5e and v6e (128 MiB of VMEM), 60 MiB on v5p and v7x (64 MiB), and on v4
its whole 16 MiB VMEM, which holds few of them: there a failing compile's capacity error lists the
spill slots among its largest allocations when they are large (spill_listed_bytes, four digits). One row per compile, after a header line: id, gen, kind, params,
vmem_limit_bytes, graph (the tracer's, with its body), result (the verdict, the report's
total and its spill slots). Versions: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1 (flash: about 4
minutes a generation on two cores; reduction: about 2; ragged: about 4 on v6e and v7x, 10 on v5e
and v5p; transpose: under 1). Rows are written as they compile, so a sweep stopped part way keeps what it has.
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)
import fit_spill_model  # noqa: E402
import make_corpus  # noqa: E402
from product import pallas_trace  # noqa: E402
import tpu_kernels  # noqa: E402

# v4's limit is its whole VMEM (16 MiB): most blocks fail there, with a capacity error that lists
# the spill slots among the largest allocations (to four digits; result.spill_listed_bytes)
LIMITS = {"v4": 16 << 20, "v5e": 100 << 20, "v6e": 100 << 20, "v5p": 60 << 20, "v7x": 60 << 20}


def flash_shapes():
  out = []
  for block_q in (256, 512, 1024, 2048):
    for block_k in (128, 256, 512, 1024, 2048):
      for iterations in (1, 2, 4, 8):
        major = block_k * iterations
        if major <= 4096 and iterations * block_q * block_k * 4 <= (48 << 20):
          out.append(("flash_fwd", {"b": 1, "h": 2, "s": 8192, "d": 128, "block_q": block_q,
                                    "block_k_major": major, "block_k": block_k}))
  return sorted(out, key=lambda kp: kp[1]["block_q"] * kp[1]["block_k_major"])


def flash_wide_shapes():
  """The flash family's block_k = 2048 shapes (appended to its file after the rest)."""
  return [kp for kp in flash_shapes() if kp[1]["block_k"] == 2048]


def flash_head_dim_shapes():
  out = []
  for d in (64, 256):
    for block_q in (512, 1024, 2048):
      for block_k in (256, 512, 1024):
        for iterations in (1, 2, 4):
          major = block_k * iterations
          if major <= 4096 and iterations * block_q * block_k * 4 <= (32 << 20):
            out.append(("flash_fwd", {"b": 1, "h": 2, "s": 8192, "d": d, "block_q": block_q,
                                      "block_k_major": major, "block_k": block_k}))
  return sorted(out, key=lambda kp: (kp[1]["d"], kp[1]["block_q"] * kp[1]["block_k_major"]))


def flash_causal_shapes():
  """Causal flash attention forward at head_dim 128, bf16, and the same blocks in f32 (the flash
  family is non-causal bf16)."""
  out = []
  for dtype, causal in (("bf16", True), ("f32", False)):
    for block_q in (512, 1024, 2048):
      for block_k in (256, 512, 1024):
        for iterations in (1, 2, 4):
          major = block_k * iterations
          if iterations * block_q * block_k * 4 <= (16 << 20):
            params = {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q": block_q, "block_k_major": major,
                      "block_k": block_k}
            params.update({"causal": True} if causal else {"dtype": dtype})
            out.append(("flash_fwd", params))
  return out


def flash_backward_shapes():
  out = []
  for block_q_major in (512, 1024, 2048):
    for block_k_major in (512, 1024, 2048):
      for block_k in (256, 512):
        out.append(("flash_bwd_dq", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": block_q_major,
                                     "block_k_major": block_k_major, "block_k": block_k}))
    for block_q in (256, 512):
      for block_k_major in (512, 1024):
        for block_k in (256, 512):
          out.append(("flash_bwd_dkv", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": block_q_major,
                                        "block_q": block_q, "block_k_major": block_k_major, "block_k": block_k}))
  return out


def flash_backward_d256_shapes():
  """The flash_backward family's shapes at head_dim 256 (the corpus's d = 256 backward kernels
  have equal q and k blocks)."""
  return [(kind, dict(params, d=256)) for kind, params in flash_backward_shapes()]


def reduction_shapes():
  out = []
  for kind in ("softmax", "layernorm"):
    for dtype in ("f32", "bf16"):
      for d in (256, 512, 1024, 2048, 3072, 4096, 8192):
        for br in (128, 256, 512, 1024, 2048):
          if br * d * 4 <= (16 << 20):
            out.append((kind, {"rows": 8192, "d": d, "br": br, "dtype": dtype}))
  return out


def reduction_odd_shapes():
  """Softmax and layer norm whose row width is not a multiple of 128 lanes (the reduction family
  has whole lane tiles only)."""
  out = []
  for kind in ("softmax", "layernorm"):
    for dtype in ("f32", "bf16"):
      for d in (200, 520, 1000, 3000):
        for br in (128, 256, 512, 1024):
          out.append((kind, {"rows": 8192, "d": d, "br": br, "dtype": dtype}))
  return out


def ragged_shapes():
  out = []
  for q_heads, kv_heads in ((8, 1), (16, 4), (32, 8)):
    for page_size in (16, 64):
      for kv_tokens in (256, 1024, 2048):
        for queries in (32, 128, 256):
          if queries * q_heads * kv_tokens * 4 <= (32 << 20):
            out.append(("ragged_paged", {"tokens": 1024, "q_heads": q_heads, "kv_heads": kv_heads, "d": 128,
                                         "page_size": page_size, "pages_per_seq": 128, "max_seqs": 16,
                                         "kv_pages_per_block": kv_tokens // page_size,
                                         "queries_per_block": queries}))
  return sorted(out, key=lambda kp: kp[1]["queries_per_block"] * kp[1]["q_heads"] * kp[1]["kv_pages_per_block"]
                * kp[1]["page_size"])


def matmul_odd_shapes():
  """bf16 matmuls with an f32 accumulator whose blocks are not powers of two (the corpus's matmul
  grid has 128-1024 by powers of two)."""
  out = []
  for bm in (384, 768, 1536):
    for bn in (384, 768, 1536):
      for bk in (384, 1536):
        if bm * bn * 4 <= (9 << 19):
          out.append(("matmul_acc", {"bm": bm, "bn": bn, "bk": bk, "dtype": "bf16"}))
  return out


def kernels_odd_shapes():
  """Kernels of the corpus's kinds at shapes it does not have: f32, int8 and fp8 matmuls over
  blocks of 384-1536 (int8 is refused on v4, fp8 off v6e and v7x: those rows record the error),
  megablox gmm over tiles of 384-1536, and paged attention at other head counts, head dims and
  pages per block."""
  out = []
  for dtype in ("f32", "i8", "f8"):
    for bm, bn, bk in ((384, 384, 384), (768, 384, 384), (768, 768, 1536), (1536, 384, 1536),
                       (1536, 768, 384), (384, 1536, 1536)):
      out.append(("matmul_acc", {"bm": bm, "bn": bn, "bk": bk, "dtype": dtype}))
  for tm, tk, tn in ((384, 384, 384), (768, 768, 768), (384, 1536, 768), (1536, 384, 768), (768, 1536, 1536)):
    out.append(("gmm", {"m": 3072, "k": 3072, "n": 3072, "groups": 8, "tm": tm, "tk": tk, "tn": tn}))
  for qh, kvh, d, ps, ppb in ((16, 1, 128, 32, 16), (64, 8, 128, 16, 32), (16, 16, 128, 32, 8),
                              (32, 4, 256, 16, 16), (8, 2, 64, 32, 32), (32, 32, 128, 16, 8)):
    out.append(("paged_attention", {"batch": 8, "q_heads": qh, "kv_heads": kvh, "d": d, "page_size": ps,
                                    "pages_per_seq": 128, "pages_per_block": ppb}))
  return out


def misc_odd_shapes():
  """Flash attention's backward kernels causal (bf16) and in f32, and transposes of blocks that are
  not powers of two (384-1152, bf16 and int8): shapes the corpus and the other sweeps lack."""
  out = []
  for bqm, bkm, bk in ((1024, 1024, 512), (2048, 1024, 256), (512, 2048, 512)):
    out.append(("flash_bwd_dq", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": bqm, "block_k_major": bkm,
                                 "block_k": bk, "causal": True}))
  out.append(("flash_bwd_dq", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": 1024, "block_k_major": 1024,
                               "block_k": 512, "dtype": "f32"}))
  for bqm, bq, bkm, bk in ((1024, 512, 1024, 512), (2048, 256, 512, 256), (512, 256, 1024, 512)):
    out.append(("flash_bwd_dkv", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": bqm, "block_q": bq,
                                  "block_k_major": bkm, "block_k": bk, "causal": True}))
  out.append(("flash_bwd_dkv", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": 1024, "block_q": 512,
                                "block_k_major": 1024, "block_k": 512, "dtype": "f32"}))
  for dtype in ("bf16", "i8"):
    for bm, bn in ((384, 384), (384, 1152), (640, 640), (1152, 384), (1152, 1152), (640, 1152)):
      out.append(("transpose", {"bm": bm, "bn": bn, "dtype": dtype}))
  return out


def holdout_shapes():
  """A mix of every kind at shapes no sweep or corpus row has, kept out of every fit and bound: the
  check of how far the bands reach beyond what they were drawn from."""
  fa = {"b": 1, "h": 2, "s": 4096}
  out = []
  for d in (64, 256):
    for bq, bk, bkm in ((1024, 512, 1024), (512, 256, 1024), (2048, 1024, 2048)):
      out.append(("flash_fwd", dict(fa, d=d, block_q=bq, block_k=bk, block_k_major=bkm, causal=True)))
  for bqm, bkm, bk in ((1024, 1024, 512), (512, 1024, 256)):
    out.append(("flash_bwd_dq", dict(fa, d=64, block_q_major=bqm, block_k_major=bkm, block_k=bk, causal=True)))
  for bqm, bq, bkm, bk in ((1024, 512, 1024, 512), (512, 256, 512, 256)):
    out.append(("flash_bwd_dkv", dict(fa, d=256, block_q_major=bqm, block_q=bq, block_k_major=bkm, block_k=bk,
                                      causal=True)))
  for bm, bn, bk in ((512, 640, 640), (640, 512, 896), (896, 896, 512), (1280, 256, 640)):
    out.append(("matmul_acc", {"bm": bm, "bn": bn, "bk": bk, "dtype": "bf16"}))
  for bm, bn, bk in ((640, 640, 640), (256, 896, 512)):
    out.append(("matmul_acc", {"bm": bm, "bn": bn, "bk": bk, "dtype": "f32"}))
  for kind, d, br, dtype in (("layernorm", 1500, 256, "bf16"), ("layernorm", 700, 512, "bf16"),
                             ("softmax", 2500, 256, "f32"), ("softmax", 333, 1024, "f32")):
    out.append((kind, {"rows": 8192, "d": d, "br": br, "dtype": dtype}))
  for tm, tk, tn in ((384, 768, 384), (768, 384, 768)):
    out.append(("gmm", {"m": 3072, "k": 3072, "n": 3072, "groups": 8, "tm": tm, "tk": tk, "tn": tn, "dtype": "f32"}))
  for bm, bn in ((896, 640), (1408, 384)):
    out.append(("transpose", {"bm": bm, "bn": bn, "dtype": "bf16"}))
  for qh, kvh, ps, kvpb, qpb in ((24, 8, 32, 32, 64), (16, 2, 16, 64, 128)):
    out.append(("ragged_paged", {"tokens": 1024, "q_heads": qh, "kv_heads": kvh, "d": 128, "page_size": ps,
                                 "pages_per_seq": 128, "max_seqs": 16, "kv_pages_per_block": kvpb,
                                 "queries_per_block": qpb}))
  return out


def holdout2_shapes():
  """A second holdout of every kind at shapes no other sweep or corpus row has (the first's
  included), kept out of every fit and bound like it."""
  out = [("flash_fwd", {"b": 2, "h": 2, "s": 2048, "d": 128, "block_b": 2, "block_q": 512, "block_k": 512,
                        "block_k_major": 1024}),
         ("flash_fwd", {"b": 1, "h": 2, "s": 4096, "d": 64, "block_q": 1024, "block_k": 512, "block_k_major": 1024,
                        "dtype": "f32", "causal": True}),
         ("flash_fwd", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q": 256, "block_k": 1024, "block_k_major": 2048,
                        "causal": True}),
         ("flash_bwd_dq", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q_major": 512, "block_k_major": 512,
                           "block_k": 256, "dtype": "f32", "causal": True}),
         ("flash_bwd_dkv", {"b": 1, "h": 2, "s": 4096, "d": 64, "block_q_major": 1024, "block_q": 512,
                            "block_k_major": 1024, "block_k": 256})]
  for bm, bn, bk, dtype in ((1152, 384, 768, "bf16"), (384, 1152, 1280, "bf16"), (640, 1408, 256, "bf16"),
                            (640, 640, 640, "i8"), (1152, 384, 384, "f32")):
    out.append(("matmul_acc", {"bm": bm, "bn": bn, "bk": bk, "dtype": dtype}))
  for tm, tk, tn in ((640, 640, 640), (1280, 640, 384)):
    out.append(("gmm", {"m": 3840, "k": 3840, "n": 3840, "groups": 8, "tm": tm, "tk": tk, "tn": tn}))
  for kind, d, br, dtype in (("layernorm", 1800, 384, "f32"), ("softmax", 6000, 128, "bf16"),
                             ("softmax", 150, 2048, "bf16")):
    out.append((kind, {"rows": 8192, "d": d, "br": br, "dtype": dtype}))
  out += [("transpose", {"bm": 1408, "bn": 640, "dtype": "i8"}), ("transpose", {"bm": 768, "bn": 1408, "dtype": "bf16"}),
          ("ragged_paged", {"tokens": 1024, "q_heads": 48, "kv_heads": 8, "d": 128, "page_size": 16,
                            "pages_per_seq": 128, "max_seqs": 16, "kv_pages_per_block": 128, "queries_per_block": 32}),
          ("paged_attention", {"batch": 8, "q_heads": 24, "kv_heads": 3, "d": 128, "page_size": 32,
                               "pages_per_seq": 128, "pages_per_block": 32}),
          ("copy", {"lead": 3, "br": 640, "d": 333, "dtype": "i8", "grid": 1, "body": "copy"})]
  return out


def transpose_shapes():
  out = []
  for dtype in ("bf16", "i8", "f32"):
    for bm in (128, 256, 512, 1024, 2048):
      for bn in (256, 512, 768, 1024, 1536, 2048, 4096):
        if bm * bn * fit_spill_model.DOT_BYTES[dtype] <= (8 << 20) and (dtype != "f32" or bm == 1024):
          out.append(("transpose", {"bm": bm, "bn": bn, "dtype": dtype}))
  return out


def transpose_batched_shapes():
  return [("transpose", {"bm": bm, "bn": bn, "dtype": "bf16", "lead": lead})
          for (bm, bn) in ((512, 1024), (256, 2048), (1024, 1024)) for lead in (1, 2, 4)]


def unaligned8_shapes():
  out = []
  for rows in (64, 128, 192, 256, 384, 512, 1024, 2048, 4096):
    for cols in (129, 130, 160, 192, 200, 255, 300, 520, 1000):
      if rows * -(-cols // 128) * 128 <= (2 << 20):
        out.append(("copy", {"br": rows, "d": cols, "dtype": "i8", "grid": 1, "body": "copy"}))
  for lead in (2, 4):
    for (rows, cols) in ((256, 130), (512, 200), (1024, 130)):
      out.append(("copy", {"lead": lead, "br": rows, "d": cols, "dtype": "i8", "grid": 1, "body": "copy"}))
  for (rows, cols) in ((1024, 256), (1024, 512), (4096, 128)):  # aligned: the control
    out.append(("copy", {"br": rows, "d": cols, "dtype": "i8", "grid": 1, "body": "copy"}))
  return out


def kernel_spill_bytes(r):
  """The SPILL allocations of the Pallas kernels of a compile_kernel result: not those of XLA's
  own fusions beside them (the copy XLA makes of an aliased operand spills too: 929792 B beside
  add_rmsnorm_alias's 348160 on v4, tests/data/tpu/README.md). Every HLO's where the Pallas
  kernels are not named (a compile that failed before naming them)."""
  kernels = (r.get("report") or {}).get("kernels") or {}
  names = set((r.get("pallas") or {}).get("kernels") or []) or set(kernels)
  return sum(a["size"] or 0 for name, k in kernels.items() if name in names for a in k["allocations"]
             if a["what"] == "SPILL")


FAMILIES = {"flash": flash_shapes, "flash_wide": flash_wide_shapes, "flash_backward": flash_backward_shapes,
            "flash_backward_d256": flash_backward_d256_shapes,
            "flash_head_dim": flash_head_dim_shapes,
            "flash_causal": flash_causal_shapes, "reduction": reduction_shapes,
            "reduction_odd": reduction_odd_shapes, "ragged": ragged_shapes,
            "transpose": transpose_shapes, "matmul_odd": matmul_odd_shapes,
            "kernels_odd": kernels_odd_shapes, "misc_odd": misc_odd_shapes,
            "holdout": holdout_shapes, "holdout2": holdout2_shapes, "transpose_batched": transpose_batched_shapes,
            "unaligned8": unaligned8_shapes}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("out")
  ap.add_argument("--family", choices=sorted(FAMILIES), required=True)
  ap.add_argument("--gens", default="v5e,v5p,v6e,v7x")
  a = ap.parse_args()
  header = {"header": True, "versions": tpu_aot.versions(), "date": datetime.date.today().isoformat(),
            "command": " ".join(["bench/tpu/sweep_spills.py"] + sys.argv[1:])}
  # Written row by row, so that a sweep stopped part way keeps what it compiled.
  with gzip.open(a.out, "wt", compresslevel=9) as out:
    out.write(json.dumps(header, sort_keys=True) + "\n")
    for gen in a.gens.split(","):
      limit = LIMITS[gen]
      for kind, params in FAMILIES[a.family]():
        fn, args = tpu_kernels.build(kind, params)
        key = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
        graph = pallas_trace.graphs_from_function(fn, args, f"{gen}_{kind}_{key}", export=False)[0]
        r = make_corpus.compile_with_limit(kind, params, gen, limit)
        result = {"verdict": r["verdict"], "compile_s": r.get("compile_s"),
                  "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
                  "spill_bytes": kernel_spill_bytes(r),
                  "spill_listed_bytes": fit_spill_model.listed_spill_bytes(r)}
        row = {"id": f"{gen}/{kind}/{key}", "gen": gen, "kind": kind, "params": params,
               "vmem_limit_bytes": limit, "graph": graph, "result": result}
        out.write(json.dumps(row, sort_keys=True) + "\n")
        out.flush()
        print(gen, kind, json.dumps(params, sort_keys=True), result["verdict"], result["spill_bytes"],
              result["compile_s"], flush=True)

if __name__ == "__main__":
  main()
