#!/usr/bin/env python3
"""Builds the TPU oracle corpus: every kernel of tpu_kernels.catalogue(gen) compiled by libtpu
for each TPU generation, with the compiler's verdict and VMEM figures and the kernel's
scratchsim graph.

  /work/venvs/tpu/bin/python bench/tpu/make_corpus.py --out tests/data/tpu/corpus.jsonl.gz

(the venv of bench/tpu/README.md; about 40-60 minutes on 1 core; run it under `nice`.) Rows
go to OUT.partial.jsonl as they are made; a rerun resumes from it, and a worker that dies
(libtpu aborts the process on some inputs) is restarted past the row that killed it. At the
end the rows are sorted, a header row is put first, and OUT is written (gzip).

Per kernel and generation, one row (JSON), fields:
  id, gen, topology, kind, params          what was compiled (tpu_kernels.build(kind, params))
  default_limit_bytes                      the generation's default scoped VMEM limit
  vmem_limit_bytes                         the kernel's own CompilerParams.vmem_limit_bytes
  graph                                    the tracer's (scratchsim._pallas_trace) KernelGraph textproto of its
                                           pallas_call (graphs: all of them if several),
                                           without its exported call (the model does not read it)
  trace_error                              why no graph, if tracing failed
  result                                   tpu_aot.compile_kernel(): verdict (fits |
                                           vmem_scoped | vmem_capacity | vmem_alloc | error;
                                           crash / timeout: the worker died / was stopped),
                                           compile_s, message (raw text), size/limit/over
                                           bytes and strings parsed from it, report (the
                                           vmem_report.html summary: allocations and total)
  requirement_bytes                        the scoped VMEM the kernel needs: report total of
                                           the compile that fitted (the default one or the
                                           one at full capacity below), else None
  at_capacity                              for a kernel that failed on VMEM: the same kernel
                                           compiled with its scoped limit at the TensorCore's
                                           VMEM (its full report, spills included); only
                                           when the first compile took under 8 s
  verify                                   on every --verify-every'th kernel with a
                                           requirement whose builder takes limit=: compiles
                                           with vmem_limit_bytes = requirement (must fit) and
                                           requirement - 1 (must fail)
  compile_options                          XLA options of the compile (xla_msa_enable=False:
                                           operands stay in HBM; see tpu_aot.py)
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def row_id(gen, kind, params):
  h = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
  return f"{gen}/{kind}/{h}"


# kinds whose builder takes limit= (CompilerParams.vmem_limit_bytes of the Pallas call alone)
LIMIT_KINDS = {"matmul_acc", "matmul_noacc", "matmul_buffered", "matmul_grid", "gather_prefetch", "layernorm",
               "softmax", "transpose", "reduce_acc", "rowsum", "copy", "ragged_paged"}


def compile_with_limit(kind, params, gen, limit_bytes):
  """The kernel compiled under another scoped limit: its own vmem_limit_bytes where the builder
  takes one, else --xla_tpu_scoped_vmem_limit_kib (which binds every XLA op of the module)."""
  from product import tpu_aot
  import tpu_kernels
  p = dict(params)
  opts = dict(tpu_aot.DEFAULT_OPTIONS)
  if kind in LIMIT_KINDS:
    p["limit"] = int(limit_bytes)
  else:
    p.pop("limit", None)
    opts["xla_tpu_scoped_vmem_limit_kib"] = int(limit_bytes) // 1024
  fn, args = tpu_kernels.build(kind, p)
  r = tpu_aot.compile_kernel(fn, args, gen, options=opts, keep_message=3000)
  r.pop("memory_analysis", None)
  return r


def make_row(gen, kind, params, verify):
  from product import tpu_aot
  import tpu_kernels
  from product import pallas_trace as p2g
  row = {"id": row_id(gen, kind, params), "gen": gen, "topology": tpu_aot.TOPOLOGIES[gen],
         "kind": kind, "params": params,
         "default_limit_bytes": tpu_kernels.DEFAULT_LIMIT[gen],
         "vmem_limit_bytes": params.get("limit"),
         "compile_options": tpu_aot.DEFAULT_OPTIONS}
  try:
    fn, args = tpu_kernels.build(kind, params)
  except Exception as e:
    row["result"] = {"verdict": "build_error", "message": f"{type(e).__name__}: {e}"[:3000]}
    return row
  try:
    graphs = p2g.graphs_from_function(fn, args, row["id"].replace("/", "_"), export=False)
    row["graph"] = graphs[0]
    if len(graphs) > 1:
      row["graphs"] = graphs
  except Exception as e:
    row["trace_error"] = f"{type(e).__name__}: {e}"[:2000]
  res = tpu_aot.compile_kernel(fn, args, gen)
  row["result"] = res
  req = None
  if res["verdict"] == "fits" and res.get("pallas"):
    req = res["pallas"]["total_bytes"]
  elif (res["verdict"].startswith("vmem") and gen in tpu_aot.VMEM_CAPACITY
        and (res.get("size_bytes") or 0) <= tpu_aot.VMEM_CAPACITY[gen] and res["compile_s"] < 8):
    # the at-capacity retry sets the scoped limit to the TensorCore's whole VMEM
    cap = compile_with_limit(kind, params, gen, tpu_aot.VMEM_CAPACITY[gen])
    row["at_capacity"] = cap
    if cap["verdict"] == "fits" and cap.get("pallas"):
      req = cap["pallas"]["total_bytes"]
  row["requirement_bytes"] = req
  if verify and req and kind in LIMIT_KINDS:
    a = compile_with_limit(kind, params, gen, req)
    b = compile_with_limit(kind, params, gen, req - 1)
    row["verify"] = {"limit_bytes": req, "at": a["verdict"], "below": b["verdict"],
                     "below_size_str": b.get("size_str"),
                     "ok": a["verdict"] == "fits" and b["verdict"] != "fits",
                     "compile_s": round(a["compile_s"] + b["compile_s"], 4)}
  return row


def worker(partial, gens, kinds, verify_every, skip_ids):
  import tpu_kernels
  done = set(skip_ids)
  n = 0
  if os.path.exists(partial) and os.path.getsize(partial):
    with open(partial, "rb") as f:
      f.seek(-1, 2)
      if f.read(1) != b"\n":  # a line cut by a killed run: end it, read_rows skips it
        with open(partial, "a") as g:
          g.write("\n")
  with open(partial, "a") as f:
    # round robin over the generations, so that a cut-short run still covers each of them
    cats = {g: tpu_kernels.catalogue(g) for g in gens}
    todo = [(i, g) for i in range(max(len(c) for c in cats.values())) for g in gens if i < len(cats[g])]
    for i, gen in todo:
      kind, params = cats[gen][i]
      if True:
        if kinds and kind not in kinds:
          continue
        rid = row_id(gen, kind, params)
        if rid in done:
          continue
        # mark the attempt so that a row which kills the process is skipped on restart
        with open(partial + ".attempt", "w") as af:
          af.write(json.dumps({"id": rid, "gen": gen, "kind": kind, "params": params}))
        verify = verify_every > 0 and (i % verify_every == 0)
        row = make_row(gen, kind, params, verify)
        f.write(json.dumps(row, sort_keys=True) + "\n")
        f.flush()
        done.add(rid)
        n += 1
        r = row["result"]
        fig = row.get("requirement_bytes") or r.get("size_bytes")
        print(f"[{gen}] {kind:16} {r['verdict']:12} {fig}  {r.get('compile_s', 0):.2f}s  "
              f"{json.dumps(params)}", flush=True)
  if os.path.exists(partial + ".attempt"):
    os.remove(partial + ".attempt")
  return n


def read_rows(path):
  rows = []
  if os.path.exists(path):
    with open(path) as f:
      for line in f:
        line = line.strip()
        if line:
          try:
            rows.append(json.loads(line))
          except json.JSONDecodeError:
            pass  # a line cut by a crash
  return rows


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "data", "tpu", "corpus.jsonl.gz"))
  p.add_argument("--gens", default="v4,v5e,v5p,v6e,v7x")
  p.add_argument("--kinds", default="", help="comma-separated kinds (default: all)")
  p.add_argument("--verify-every", type=int, default=8,
                 help="verify the requirement by two extra compiles on every N-th kernel (0: never)")
  p.add_argument("--row-timeout", type=int, default=150,
                 help="stop a row whose compiles take longer than this (s); 0: no limit")
  p.add_argument("--finalize", action="store_true",
                 help="only write OUT from the rows already in OUT.partial.jsonl")
  p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  a = p.parse_args(argv)
  gens = [g for g in a.gens.split(",") if g]
  kinds = [k for k in a.kinds.split(",") if k]
  partial = a.out + ".partial.jsonl"

  if a.worker:
    skip = [r["id"] for r in read_rows(partial)]
    worker(partial, gens, kinds, a.verify_every, skip)
    return 0

  t0 = time.time()
  if a.finalize:
    return finalize(a, argv, partial, t0)
  cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--out", a.out, "--gens", a.gens,
         "--kinds", a.kinds, "--verify-every", str(a.verify_every)]
  att = partial + ".attempt"
  for attempt in range(200):
    proc = subprocess.Popen(cmd)
    timed_out = False
    while proc.poll() is None:
      time.sleep(2)
      # a row (its compiles together) running past --row-timeout is killed and recorded
      if a.row_timeout and os.path.exists(att) and time.time() - os.path.getmtime(att) > a.row_timeout:
        proc.kill()
        proc.wait()
        timed_out = True
    rc = proc.returncode
    if rc == 0:
      break
    # the worker died or was stopped: record the row it was on and go on past it
    if os.path.exists(att):
      info = json.load(open(att))
      verdict, msg = (("timeout", f"the row's compiles took more than {a.row_timeout} s; stopped")
                      if timed_out else ("crash", f"the compiling process died (exit {rc})"))
      row = dict(info, id=info["id"], topology=None, result={"verdict": verdict, "message": msg})
      with open(partial, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
      os.remove(att)
      print(f"worker stopped (exit {rc}) on {info['id']}: {verdict}; restarting", flush=True)
    else:
      print(f"worker failed (exit {rc}) outside a row; stopping", flush=True)
      return 1
  return finalize(a, argv, partial, t0)


def finalize(a, argv, partial, t0):
  from product import tpu_aot
  rows = read_rows(partial)
  order = {g: i for i, g in enumerate(tpu_aot.GENERATIONS)}
  rows.sort(key=lambda r: (order.get(r["gen"], 9), r["kind"], json.dumps(r["params"], sort_keys=True)))
  header = {"header": True, "versions": tpu_aot.versions(),
            "python": sys.version.split()[0],
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "command": "python bench/tpu/make_corpus.py " + " ".join(x for x in argv if x != "--finalize"),
            "environment": {"TPU_SKIP_MDS_QUERY": "1", "JAX_PLATFORMS": "cpu",
                            "LIBTPU_INIT_ARGS": "--xla_jf_dump_to=<tmp> --xla_jf_dump_llo_text=false "
                                                "--xla_jf_dump_hlo_text=false "
                                                "--xla_jf_dump_category_filter=memory-report"},
            "topologies": tpu_aot.TOPOLOGIES, "capacity_bytes": tpu_aot.VMEM_CAPACITY,
            "rows": len(rows), "wall_s_this_run": round(time.time() - t0, 1)}
  os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
  with gzip.open(a.out, "wt", compresslevel=9) as f:
    f.write(json.dumps(header, sort_keys=True) + "\n")
    for r in rows:
      f.write(json.dumps(r, sort_keys=True) + "\n")
  print(f"wrote {a.out}: {len(rows)} rows ({os.path.getsize(a.out)} bytes)")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
