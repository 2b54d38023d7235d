#!/usr/bin/env python3
"""Kernel families the TPU spill/VMEM model was never fitted on (issue 35), compiled by libtpu ahead
of time on a CPU-only host, each shape twice: at a raised scoped limit (sweep_spills.LIMITS: 100 MiB
on v5e and v6e, 60 MiB on v5p and v7x, v4's whole 16 MiB), where the report gives the exact total
and the spill slots, and at the generation's default scoped limit (no vmem_limit_bytes: 16 MiB on
v4/v5e/v5p, 32 MiB on v6e/v7x), whose verdict is what a user would meet.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-bench/bin/python \\
      bench/tpu/sweep_heldout.py --set heldout tests/data/tpu/heldout_families.jsonl.gz \\
      --gens v4,v5e,v5p,v6e,v7x

Sets (bench/tpu/heldout_kernels.py lists every family, its shapes and the public kernel whose
structure it follows):
  dev      15 families of the failure report (fused SwiGLU MLP and its Buffered(1) variant, RMSNorm +
           matmul, depthwise conv1d over odd lengths, running argmax, transpose + add, int8 x bf16
           dequant matmul, online log-sum-exp, layer norm backward, carried cumsum, block-sparse
           matmul with scalar prefetch, manual double-buffered DMA, GELU with squeezed dims,
           add + RMSNorm with aliased outputs, decode attention): 134 shapes per generation.
  heldout  14 other families (RoPE, GQA decode attention, iterative top-k, per-group int8/int4
           dequant matmul, matmul + bias + GELU, MoE top-2 router, cross-entropy over vocab
           blocks, sliding-window attention, RMSNorm backward, fused AdamW with aliased outputs,
           absmax int8 quantization, soft-capped attention, one-hot segment sums, im2col conv2d):
           128 shapes per generation. Never fitted on or tuned against.
  heldout2 5 families written after the replicated-layout rule (greedy argmax, ALiBi attention,
           causal masked softmax, label-smoothed cross-entropy, gated RMSNorm): 30 shapes per
           generation. Never fitted on or tuned against.
  heldout3 8 families written after the second held-out set was judged (layer norm forward, chunked
           linear attention with a carried state, QK-norm + RoPE, cross-entropy backward, int8 x
           int8 matmul, Mamba's selective scan in a rolled loop, QKV projection + RoPE epilogue,
           LoRA matmul): 56 shapes per generation. Never fitted on or tuned against.
  heldout4 7 families written after the third held-out set was judged (flash attention backward for
           dK/dV, paged decode attention with a scalar-prefetched page table, group norm,
           scalar-prefetch embedding gather, 2x2 / 3x3 max pooling, RMSNorm + int8 quantization,
           RoPE + in-place KV cache update): 42 shapes per generation. Never fitted on or tuned
           against.
  heldout5 6 families written after the fourth held-out set was judged (megablox-style grouped matmul
           with a scalar-prefetched tile-to-group map, causal GQA flash attention forward, 3x3
           depthwise conv2d, int8 KV-cache decode attention, VQ codebook argmin, Welford column
           statistics): 36 shapes per generation. Never fitted on or tuned against.
  heldout6 6 families written after the fifth held-out set was judged (weight-only int8/int4 linear in
           the (out, in) layout with per-channel zero points, fp8 x fp8 matmul converted in the body
           with per-token / per-channel scales, fused linear cross-entropy with z-loss, top-p /
           min-p sampling mask by bisection, flash attention with a streamed bias block, splash-style
           block-sparse attention with scalar-prefetched block and mask-kind tables): 36 shapes per
           generation. Compiled before any judgement; never fitted on or tuned against.
  heldout7 6 families written after the sixth held-out set was compiled (chunked-prefill attention
           over an int8 KV cache converted for both dots with per-head scales on the scores and
           output, w4a16 / w8a16 MoE expert gate + up projections with per-group scales after the
           dots and a scalar-prefetched tile-to-expert map, RMSNorm + int8 QKV projection, attention
           with axial 2-D RoPE fused in, a top-k MoE router with a carried expert capacity, the dx
           half of a SwiGLU MLP backward): 36 shapes per generation. Compiled before any judgement;
           never fitted on or tuned against.
  heldout8 6 families written after the seventh held-out set was compiled (multi-head latent
           attention decode over a compressed KV cache with absorbed queries, an int8 x int8 W8A8
           matmul into int32 with per-row / per-column scales and a bias, a Mamba-2 SSD chunk with its
           segsum decay mask and a carried state, a layer norm backward recomputing its statistics
           with dgamma / dbeta in f32 scratch, a LoRA matmul whose shrink is held across the n axis,
           a lane cumsum (triangular dot or log-step rolls) with an MoE capacity mask): 36 shapes per
           generation. Compiled before any judgement; never fitted on or tuned against.
  heldout9 5 families that concatenate, written after the tile-aligned concatenation rule (a U-Net
           decoder's skip concatenation + 1x1 conv, RoPE by rotate_half, speculative-decoding
           attention appending the new tokens' K and V to the cached block, multi-head attention
           with its heads concatenated into the output projection, a gate + up projection over
           concatenated weight blocks): 30 shapes per generation. Compiled before any judgement;
           never fitted on or tuned against.
  heldout10 3 families written after the part-tile concatenation rule, each concatenating part tiles
           (partial rotary embeddings of GPT-NeoX / GPT-J / Phi-2, DeepSeek MLA prefill attention
           over concatenated nope + rope head parts, NeRF's positional encoding into its first
           layer): 18 shapes per generation. Compiled before any judgement; never fitted on or
           tuned against.
  heldout11 3 families written after the slice rule, each slicing values in its body (Mamba's
           causal depthwise conv1d by shifted row slices of a padded block, a GLU over a fused gate
           + up projection split by lane slices, attention over a fused QKV block split per
           head): 18 shapes per generation. Compiled before any judgement; never fitted on or
           tuned against.
  heldout12 3 families written after the MXU-pass rule, each feeding a dot a left operand computed
           in the body, its right operand one MXU tile wide or several (a SwiGLU's down projection
           fused after the gating, a LayerNorm fused before its linear, attention at Gemma's
           256-lane head dim): 18 shapes per generation. Compiled before any judgement; never
           fitted on or tuned against.
  heldout13 3 families written after a validated band's central was made at least what the
           replay holds across a barrier, each softmax-ing a whole score block in one grid step
           (Whisper's decoder cross-attention over 1,500 encoder frames, ViT's self-attention over
           197 tokens, multi-query decode attention): 18 shapes per generation. Compiled before any
           judgement; never fitted on or tuned against.

--per-family N keeps at most N shapes of each family, spread over its list from the smallest
blocks to the largest (the way a sweep is cut down when compiles run slow; the header records
it); --kinds keeps some families; --gens picks and orders the generations.

Rows go to OUT.partial.jsonl as they are compiled (flushed one by one, so a stopped sweep keeps
them; --resume skips the ids it already has); a worker process compiles and this process
restarts it past a row that runs over --row-timeout (verdict "timeout") or kills it ("crash"), as
make_corpus.py does. At the end OUT (gzip, level 9) gets a header line (versions, date, command,
set, limits, wall time) and the rows. A row, as sweep_spills.py's plus three fields:
  id, gen, kind, params, vmem_limit_bytes (the raised limit), default_limit_bytes, set,
  graph (the tracer's KernelGraph with its body, traced from heldout_kernels.build(kind, params)
  with no limit; trace_error instead where tracing failed),
  result {verdict, compile_s, total_bytes, spill_bytes, spill_listed_bytes; for a failing
          compile also size_bytes, limit_bytes and message (cut at 2000 characters)}: the
          compile at the raised limit,
  result_default {verdict, compile_s, total_bytes (fits), size_bytes, limit_bytes (parsed from
          an E1001 or capacity error), message (cut at 2000)}: the compile at the default limit
          (on v4, whose raised limit is its default 16 MiB, the raised compile's figures, marked
          same_compile_as_result: true, rather than a second identical compile).
The tracer is this tree's sim/python/scratchsim (not an installed copy).
"""
import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_corpus  # noqa: E402  (its row ids and partial-file reader)


def _cut(msg):
  return None if msg is None else msg[:2000]


def make_row(set_name, gen, kind, params):
  from product import tpu_aot, pallas_trace
  import fit_spill_model
  import heldout_kernels
  import sweep_spills
  import tpu_kernels
  limit = sweep_spills.LIMITS[gen]
  rid = make_corpus.row_id(gen, kind, params)
  row = {"id": rid, "gen": gen, "kind": kind, "params": params, "set": set_name, "vmem_limit_bytes": limit,
         "default_limit_bytes": tpu_kernels.DEFAULT_LIMIT[gen]}
  try:
    fn, args = heldout_kernels.build(kind, params)
    row["graph"] = pallas_trace.graphs_from_function(fn, args, rid.replace("/", "_"), export=False)[0]
  except Exception as e:
    row["trace_error"] = f"{type(e).__name__}: {e}"[:2000]
  # at the raised limit: the report's total and spill slots
  try:
    fn, args = heldout_kernels.build(kind, dict(params, limit=limit))
    r = tpu_aot.compile_kernel(fn, args, gen, keep_message=3000)
  except Exception as e:
    r = {"verdict": "error", "message": f"{type(e).__name__}: {e}"}
  result = {"verdict": r["verdict"], "compile_s": r.get("compile_s"),
            "total_bytes": (r.get("pallas") or {}).get("total_bytes"),
            "spill_bytes": sweep_spills.kernel_spill_bytes(r),
            "spill_listed_bytes": fit_spill_model.listed_spill_bytes(r)}
  if r["verdict"] != "fits":
    result.update(size_bytes=r.get("size_bytes"), limit_bytes=r.get("limit_bytes"), message=_cut(r.get("message")))
  row["result"] = result
  # at the generation's default scoped limit (v4's raised limit is its default: the same compile)
  if limit == tpu_kernels.DEFAULT_LIMIT[gen]:
    rd = {k: v for k, v in result.items() if k in ("verdict", "compile_s", "total_bytes", "size_bytes",
                                                    "limit_bytes", "message")}
    rd["same_compile_as_result"] = True
    row["result_default"] = rd
    return row
  try:
    fn, args = heldout_kernels.build(kind, params)
    d = tpu_aot.compile_kernel(fn, args, gen, keep_message=3000)
  except Exception as e:
    d = {"verdict": "error", "message": f"{type(e).__name__}: {e}"}
  rd = {"verdict": d["verdict"], "compile_s": d.get("compile_s")}
  if d["verdict"] == "fits":
    rd["total_bytes"] = (d.get("pallas") or {}).get("total_bytes")
  else:
    rd.update(size_bytes=d.get("size_bytes"), limit_bytes=d.get("limit_bytes"), message=_cut(d.get("message")))
  row["result_default"] = rd
  return row


def spread(shapes, per_family):
  """At most per_family shapes of each family, spread over its list (first and last kept; with
  per_family 1 the middle one), in the list's order: a cut-down sweep that still runs from the
  smallest blocks to the largest."""
  if not per_family:
    return shapes
  by = {}
  for kind, p in shapes:
    by.setdefault(kind, []).append(p)
  keep = set()
  for kind, ps in by.items():
    n = len(ps)
    if n <= per_family:
      idx = range(n)
    elif per_family == 1:
      idx = [n // 2]
    else:
      idx = sorted({round(i * (n - 1) / (per_family - 1)) for i in range(per_family)})
    keep |= {(kind, json.dumps(ps[i], sort_keys=True)) for i in idx}
  return [(k, p) for k, p in shapes if (k, json.dumps(p, sort_keys=True)) in keep]


def worker(a, partial):
  import heldout_kernels
  done = {r["id"] for r in make_corpus.read_rows(partial)}
  if os.path.exists(partial) and os.path.getsize(partial):
    with open(partial, "rb") as f:
      f.seek(-1, 2)
      cut = f.read(1) != b"\n"
    if cut:
      with open(partial, "a") as g:
        g.write("\n")
  att = partial + ".attempt"
  with open(partial, "a") as out:
    for gen in a.gens.split(","):
      for kind, params in spread(heldout_kernels.shapes(a.set), a.per_family):
        if a.kinds and kind not in a.kinds.split(","):
          continue
        rid = make_corpus.row_id(gen, kind, params)
        if rid in done:
          continue
        with open(att, "w") as f:
          json.dump({"id": rid, "gen": gen, "kind": kind, "params": params, "set": a.set}, f)
        row = make_row(a.set, gen, kind, params)
        out.write(json.dumps(row, sort_keys=True) + "\n")
        out.flush()
        done.add(rid)
        r, d = row["result"], row["result_default"]
        print(gen, kind, json.dumps(params, sort_keys=True), r["verdict"], d["verdict"],
              r["compile_s"], d["compile_s"], flush=True)
  if os.path.exists(att):
    os.remove(att)


def finalize(a, partial, t0, argv):
  from product import tpu_aot
  import sweep_spills
  import tpu_kernels
  rows = make_corpus.read_rows(partial)
  header = {"header": True, "versions": tpu_aot.versions(), "python": sys.version.split()[0],
            "date": datetime.date.today().isoformat(), "set": a.set, "gens": a.gens.split(","),
            "command": " ".join(["bench/tpu/sweep_heldout.py"] + argv),
            "limits_bytes": sweep_spills.LIMITS, "default_limits_bytes": tpu_kernels.DEFAULT_LIMIT,
            "row_timeout_s": a.row_timeout, "per_family": a.per_family or None, "tracer": "sim/python/scratchsim of this tree",
            "rows": len(rows), "wall_s_this_run": round(time.time() - t0, 1)}
  with gzip.open(a.out, "wt", compresslevel=9) as f:
    f.write(json.dumps(header, sort_keys=True) + "\n")
    for r in rows:
      f.write(json.dumps(r, sort_keys=True) + "\n")
  print(f"wrote {a.out}: {len(rows)} rows", flush=True)


def main(argv):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("out")
  ap.add_argument("--set", choices=("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5",
                                    "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11",
                                    "heldout12", "heldout13"),
                  required=True)
  ap.add_argument("--gens", default="v4,v5e,v5p,v6e,v7x")
  ap.add_argument("--kinds", default="", help="only these families (comma-separated; default all)")
  ap.add_argument("--per-family", type=int, default=0,
                  help="at most this many shapes a family, spread over its list (0: all)")
  ap.add_argument("--row-timeout", type=int, default=240, help="seconds a row's two compiles may take")
  ap.add_argument("--resume", action="store_true", help="keep OUT.partial.jsonl and skip its ids")
  ap.add_argument("--finalize", action="store_true", help="only write OUT from OUT.partial.jsonl")
  ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  a = ap.parse_args(argv)
  partial = a.out + ".partial.jsonl"
  if a.worker:
    from product import tpu_aot  # noqa: F401  (first: libtpu's environment)
    worker(a, partial)
    return 0
  t0 = time.time()
  if a.finalize:
    finalize(a, partial, t0, [x for x in argv if x != "--finalize"])
    return 0
  if not a.resume and os.path.exists(partial):
    os.remove(partial)
  att = partial + ".attempt"
  if os.path.exists(att):
    os.remove(att)
  cmd = [sys.executable, os.path.abspath(__file__), a.out, "--worker", "--set", a.set, "--gens", a.gens, "--kinds", a.kinds,
         "--per-family", str(a.per_family)]
  for _ in range(500):
    proc = subprocess.Popen(cmd)
    timed_out = False
    while proc.poll() is None:
      time.sleep(1)
      if a.row_timeout and os.path.exists(att) and time.time() - os.path.getmtime(att) > a.row_timeout:
        proc.kill()
        proc.wait()
        timed_out = True
    if proc.returncode == 0:
      break
    if not os.path.exists(att):
      print(f"worker failed (exit {proc.returncode}) outside a row; stopping", flush=True)
      return 1
    info = json.load(open(att))
    verdict, msg = (("timeout", f"the row's compiles took more than {a.row_timeout} s; stopped") if timed_out
                    else ("crash", f"the compiling process died (exit {proc.returncode})"))
    import sweep_spills
    import tpu_kernels
    gen = info["gen"]
    row = dict(info, vmem_limit_bytes=sweep_spills.LIMITS[gen], default_limit_bytes=tpu_kernels.DEFAULT_LIMIT[gen],
               result={"verdict": verdict, "message": msg}, result_default={"verdict": verdict, "message": msg})
    with open(partial, "a") as f:
      f.write(json.dumps(row, sort_keys=True) + "\n")
    os.remove(att)
    print(f"worker stopped (exit {proc.returncode}) on {info['id']}: {verdict}; restarting", flush=True)
  finalize(a, partial, t0, argv)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
