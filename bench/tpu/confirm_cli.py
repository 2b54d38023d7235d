#!/usr/bin/env python3
"""Checks `simulate --confirm` against the oracle corpus: libtpu on the exported kernel says what it
said of the traced function.

For a sample of the corpus's compiles (up to --per-kind of each kernel kind on each generation,
in corpus order), rebuilds the kernel (tpu_kernels.build), traces it into a graph with its
`pallas.jax_export` (the tracer, scratchsim._pallas_trace; under the generation's TPU device, as tpu_aot compiles,
so that kernels whose lowering asks the device kind export too), runs

  simulate --device tpu_GEN --graph G --confirm always --format json

(with --all-at-risk also every other row through `--confirm at-risk`, recorded where the model
says AT RISK and libtpu was run; with --failing every compile that ran out of VMEM, through
`--confirm always`, and no sample)
and records the confirmation beside the corpus's result: the confirmed verdict against libtpu's
verdict on the traced function, the bytes (the kernel's scoped VMEM where it fits, the error's
figure where not) against the corpus's, and for a kernel out of VMEM what the confirmation says
it needs (requirement_bytes, or exceeds_capacity) beside the corpus's requirement_bytes.

  JAX_PLATFORMS=cpu python3 bench/tpu/confirm_cli.py tests/data/tpu/corpus.jsonl.gz \\
      tests/data/tpu/export_confirm.jsonl.gz --simulate build/simulate --per-kind 3 --all-at-risk
  JAX_PLATFORMS=cpu python3 bench/tpu/confirm_cli.py tests/data/tpu/corpus.jsonl.gz \\
      tests/data/tpu/confirm_failing.jsonl.gz --simulate build/simulate --failing

With --families the input is a family file of bench/tpu/sweep_heldout.py instead: every row is
rebuilt from heldout_kernels.build, traced at the generation's default scoped limit and run through
`--confirm at-risk`, as a user with libtpu installed would check it, and every row is recorded:
the verdict the report ends with (libtpu's where it compiled, the model's where the model settled
it) against libtpu's at the default limit (the row's result_default).

  JAX_PLATFORMS=cpu python3 bench/tpu/confirm_cli.py tests/data/tpu/heldout3_families.jsonl.gz \\
      tests/data/tpu/confirm_heldout3.jsonl.gz --simulate build/simulate --families

SCRATCHSIM_PYTHON (the interpreter `simulate` runs libtpu with) defaults to this one.
"""
import argparse
import concurrent.futures
import datetime
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Importing tpu_aot points libtpu's dumps (LIBTPU_INIT_ARGS) at a folder of this process; the
# simulate runs get the environment as it was before.
_SIMULATE_ENV = dict(os.environ)
_SIMULATE_ENV.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")  # this process holds libtpu too
from product import tpu_aot  # noqa: E402

CONFIRMED = tpu_aot.CONFIRMED_VERDICTS


def corpus_figure(result):
  """The bytes libtpu gave the traced function: its scoped VMEM where it fits, else the error's."""
  if result["verdict"] == "fits":
    return (result.get("pallas") or {}).get("total_bytes")
  return result.get("size_bytes")


def sample_families(path, gens):
  """(row, "at-risk") for every row of a family file libtpu compiled or refused for VMEM at the
  default limit, its result_default standing in for the corpus's result."""
  out = []
  with gzip.open(path, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header") or r.get("gen") not in gens:
        continue
      default = r.get("result_default") or {}
      if default.get("verdict") not in CONFIRMED or default["verdict"] == "error":
        continue
      out.append((dict(r, result=dict(default, pallas={"total_bytes": default.get("total_bytes")})), "at-risk"))
  return out


def sample(corpus, gens, per_kind, all_at_risk, failing=False):
  """(row, mode): up to per_kind rows of each (generation, kind) in corpus order, confirmed
  "always"; with all_at_risk every other row too, confirmed "at-risk" (compiled where the model
  says AT RISK, as `--confirm at-risk` does, and left out of the record elsewhere). With failing,
  every row that ran out of VMEM, confirmed "always", and nothing else."""
  taken, out = {}, []
  with gzip.open(corpus, "rt") as f:
    for line in f:
      r = json.loads(line)
      if r.get("header") or r.get("gen") not in gens or "graphs" in r:
        continue  # one pallas_call per function, so that the exported call is the whole compile
      if (r.get("result") or {}).get("verdict") not in CONFIRMED:
        continue
      if failing:
        if r["result"]["verdict"].startswith("vmem"):
          out.append((r, "always"))
        continue
      key = (r["gen"], r["kind"])
      if taken.get(key, 0) < per_kind:
        taken[key] = taken.get(key, 0) + 1
        out.append((r, "always"))
      elif all_at_risk:
        out.append((r, "at-risk"))
  return out


def confirm(row, graph, simulate, workdir, mode, family_file=False):
  """simulate --confirm on one row's graph, recorded beside the row's libtpu result. With
  family_file (a sweep_heldout.py row) a verdict the model settles is recorded too, and a failing
  figure is judged as libtpu printed it (same_failing_figure)."""
  path = os.path.join(workdir, row["id"].replace("/", "_") + ".pbtxt")
  with open(path, "w") as f:
    f.write(graph)
  t0 = time.perf_counter()
  p = subprocess.run([simulate, "--device", f"tpu_{row['gen']}", "--graph", path, "--confirm", mode,
                      "--format", "json"], capture_output=True, text=True, env=_SIMULATE_ENV)
  wall = time.perf_counter() - t0
  os.remove(path)
  out = {"id": row["id"], "gen": row["gen"], "kind": row["kind"], "params": row["params"], "mode": mode,
         "corpus_verdict": CONFIRMED[row["result"]["verdict"]], "corpus_bytes": corpus_figure(row["result"]),
         "exit_code": p.returncode, "wall_s": round(wall, 3)}
  try:
    report = json.loads(p.stdout)
  except ValueError:
    # in at-risk mode simulate asks for the exported call only of an AT RISK kernel: a kernel the
    # tracer could not export is recorded; any other refusal compiled nothing
    if mode == "at-risk" and "pallas.jax_export" not in p.stderr:
      return None
    out["error"] = (p.stderr or p.stdout)[-600:]
    # a kernel Mosaic cannot compile is refused by the model before anything is compiled (exit 2,
    # naming the requirement it breaks): that agrees with libtpu's refusal
    out["refused_by_model"] = p.returncode == 2 and "requirements[" in out["error"]
    out["agree"] = out["refused_by_model"] and out["corpus_verdict"] == "NOT_COMPILABLE"
    return out
  c = report.get("confirmation") or {}
  if not c:
    if not family_file:
      return None  # --confirm at-risk on a verdict that is not AT RISK: nothing compiled
    out["verdict"] = out["model_verdict"] = report.get("verdict")
    out["agree"] = out["verdict"] == out["corpus_verdict"]
    return out
  out["model_verdict"] = c.get("model_verdict")
  out["verdict"] = report.get("verdict")
  if c.get("error"):
    out["error"] = c["error"]
    return out
  out["confirmed_verdict"] = c.get("confirmed_verdict")
  # An error libtpu words in rounded sizes only ("32.75M") leaves size_bytes unset; what the kernel
  # needs, measured by the second compile, is then the exact figure.
  out["confirmed_bytes"] = (c.get("scoped_vmem_bytes") if c.get("confirmed_verdict") == "FITS"
                            else c.get("size_bytes") or c.get("requirement_bytes"))
  out["compile_s"] = c.get("compile_s")
  if out["confirmed_verdict"] == "DOES_NOT_FIT":
    out.update({k: c[k] for k in ("size_bytes", "size_text", "limit_bytes", "requirement_bytes", "capacity_bytes",
                                  "exceeds_capacity") if c.get(k)})
    out["corpus_requirement_bytes"] = row.get("requirement_bytes")
  out["agree"] = out["confirmed_verdict"] == out["corpus_verdict"] and (
      out["corpus_verdict"] == "NOT_COMPILABLE" or out["confirmed_bytes"] == out["corpus_bytes"]
      or family_file and same_failing_figure(out["confirmed_bytes"], out["corpus_bytes"], c))
  return out


def same_failing_figure(confirmed, recorded, confirmation):
  """A failing compile's figure in a family file is libtpu's error text parsed ("18.06M", MiB to
  two places), the confirmation's what the kernel measures it needs: they agree where both print
  as that text. A kernel beyond the whole VMEM (v4, whose default limit is all of it) has no
  figure to measure."""
  if confirmation.get("exceeds_capacity") and confirmed is None:
    return True
  text = confirmation.get("size_text")
  return (confirmed is not None and recorded is not None and tpu_aot.rounding_matches(text, confirmed)
          and tpu_aot.rounding_matches(text, recorded))


def main(argv):
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("corpus")
  p.add_argument("out")
  p.add_argument("--simulate", default="build/simulate")
  p.add_argument("--gens", default="v4,v5e,v5p,v6e,v7x")
  p.add_argument("--per-kind", type=int, default=3)
  p.add_argument("--jobs", type=int, default=2)
  p.add_argument("--all-at-risk", action="store_true", help="also every other row through --confirm at-risk")
  p.add_argument("--failing", action="store_true", help="every row that ran out of VMEM, and no other")
  p.add_argument("--max-rows", type=int, default=0, help="the first N rows of the selection only (a smoke test)")
  p.add_argument("--families", action="store_true",
                 help="the input is a sweep_heldout.py family file: every row through --confirm at-risk")
  a = p.parse_args(argv)
  _SIMULATE_ENV.setdefault("SCRATCHSIM_PYTHON", sys.executable)
  import jax
  from product import pallas_trace as p2g
  import heldout_kernels
  import tpu_kernels
  from importlib.metadata import version
  builder = heldout_kernels if a.families else tpu_kernels
  rows = (sample_families(a.corpus, a.gens.split(",")) if a.families
          else sample(a.corpus, a.gens.split(","), a.per_kind, a.all_at_risk, a.failing))
  if a.max_rows:
    rows = rows[:a.max_rows]
  header = {"header": True, "command": "python3 bench/tpu/confirm_cli.py " + " ".join(argv),
            "date": datetime.date.today().isoformat(),
            "versions": {"jax": jax.__version__, "libtpu": version("libtpu")}}
  t0 = time.time()
  results = []
  with tempfile.TemporaryDirectory() as work, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
    futures = []
    for r, mode in rows:
      fn, args = builder.build(r["kind"], r["params"])
      with jax.default_device(tpu_aot.device(r["gen"])):
        graph = p2g.graphs_from_function(fn, args, r["id"].replace("/", "_"))[0]
      futures.append(pool.submit(confirm, r, graph, a.simulate, work, mode, a.families))
    for i, f in enumerate(futures):
      res = f.result()
      if res is None:
        continue
      results.append(res)
      print(f"[{i + 1}/{len(rows)}] {res['id']} ({res['mode']}): "
            f"{res.get('confirmed_verdict') or res.get('error', '')[:120]} {res.get('confirmed_bytes')} "
            f"(corpus {res['corpus_verdict']} {res['corpus_bytes']})", flush=True)
  header["wall_s"] = round(time.time() - t0, 1)
  header["rows"] = len(results)
  with gzip.open(a.out, "wt") as f:
    for o in [header] + results:
      f.write(json.dumps(o, sort_keys=True) + "\n")
  agree = sum(1 for r in results if r.get("agree"))
  compiled = [r for r in results if r.get("confirmed_verdict")]
  if a.families:
    seconds = sorted(r["wall_s"] for r in compiled)
    print(f"{len(results)} checked: {len(compiled)} compiled by libtpu (the model's AT RISK or unsettled FITS), "
          f"{len(results) - len(compiled)} settled by the model; the verdict agrees with libtpu's at the "
          f"default limit on {agree}; AT RISK left: {sum(1 for r in results if r.get('verdict') == 'AT_RISK')}"
          + (f"; a compiled check took {seconds[len(seconds) // 2]:.1f} s (median), at most {seconds[-1]:.1f} s"
             if seconds else ""), flush=True)
  print(f"{len(compiled)} of {len(results)} compiled by simulate --confirm, "
        f"{sum(1 for r in compiled if r['agree'])} of them as the corpus says; "
        f"{sum(1 for r in results if r.get('refused_by_model'))} refused by the model before compiling; "
        f"{agree} of {len(results)} agree with the corpus", flush=True)
  measured = [r for r in compiled if r.get("requirement_bytes") and r.get("corpus_requirement_bytes")]
  print(f"what a kernel out of VMEM needs: {sum(1 for r in compiled if r.get('requirement_bytes'))} measured, "
        f"{sum(1 for r in compiled if r.get('exceeds_capacity'))} beyond the whole VMEM; "
        f"{sum(1 for r in measured if r['requirement_bytes'] == r['corpus_requirement_bytes'])} of the "
        f"{len(measured)} the corpus measured too are its figure to the byte", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
