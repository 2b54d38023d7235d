#!/usr/bin/env python3
"""Confirms `simulate plan` on the shipped Pallas families with the real TPU compiler: for each
generation, the top configurations the plan ranks are compiled by libtpu (ahead of time, on the
CPU) at the default scoped limit (they are ranked because we say they fit: libtpu must agree) and
at the plan's `vmem_limit_bytes_needed` (the limit the plan suggests: libtpu must compile there
too). Records libtpu's verdicts and the scoped VMEM it reports (the smallest limit that compiles
the kernel) in tests/data/tpu/plan_confirm.jsonl.gz, which tests/tpu_plan_test.cc judges today's
plan against everywhere (no libtpu needed).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 /work/venvs/tpu/bin/python bench/tpu/confirm_plans.py build/simulate \\
      tests/data/tpu/plan_confirm.jsonl.gz [--top 10] [--gens v4,v5e,...]

The families and the real kernels they describe:
  models/graphs/pallas_matmul.pbtxt     (BM, BN, BK; M = N = K = 8192)  tpu_kernels.matmul_acc
  models/graphs/pallas_attention.pbtxt  (BQ, BK; B 4, H 16, S 8192, D 128) tpu_kernels.flash_fwd
                                        with block_k = block_k_major = BK (the graph's body)
  models/graphs/tpu_matmul_big.pbtxt    (BM, BN, BK up to 8192; 8192-cubed)  tpu_kernels.matmul_acc
Versions: jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42.1 (about 8 minutes on two cores).
"""
import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from product import tpu_aot  # noqa: E402  (first: sets the environment libtpu needs)
import make_corpus  # noqa: E402
import tpu_kernels  # noqa: E402


def _matmul(p):
  return "matmul_acc", {"bm": p["BM"], "bn": p["BN"], "bk": p["BK"], "dtype": "bf16", "m": 8192, "n": 8192, "k": 8192}


def _attention(p):
  return "flash_fwd", {"b": 4, "h": 16, "s": 8192, "d": 128, "block_q": p["BQ"], "block_k_major": p["BK"],
                       "block_k": p["BK"]}


# family -> the corpus kind and builder parameters of the kernel a configuration describes
FAMILIES = {"pallas_matmul": _matmul, "pallas_attention": _attention, "tpu_matmul_big": _matmul}


def plan(simulate, gen, family, top):
  out = subprocess.run([simulate, "plan", "--device", f"tpu_{gen}", "--graph",
                        os.path.join(ROOT, "models", "graphs", family + ".pbtxt"), "--top", str(top), "--format", "json"],
                       capture_output=True, text=True, check=True)
  return json.loads(out.stdout)["configs"]


def compile_at(family, params, gen, limit):
  """libtpu's compile of a configuration at the default limit (None) or at `limit` (as the corpus
  sets one: make_corpus.compile_with_limit)."""
  kind, kernel_params = FAMILIES[family](params)
  if limit is None:
    fn, args = tpu_kernels.build(kind, kernel_params)
    r = tpu_aot.compile_kernel(fn, args, gen)
  else:
    r = make_corpus.compile_with_limit(kind, kernel_params, gen, limit)
  return {"verdict": r["verdict"], "scoped_vmem_bytes": (r.get("pallas") or {}).get("total_bytes"),
          "size_bytes": r.get("size_bytes"), "compile_s": r.get("compile_s")}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("simulate")
  ap.add_argument("out")
  ap.add_argument("--top", type=int, default=10)
  ap.add_argument("--gens", default=",".join(tpu_aot.GENERATIONS))
  a = ap.parse_args()
  commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
  rows = [{"header": True, "versions": tpu_aot.versions(), "date": datetime.date.today().isoformat(),
           "commit": commit, "command": " ".join(["bench/tpu/confirm_plans.py"] + sys.argv[1:]), "top": a.top,
           "families": list(FAMILIES)}]
  for gen in a.gens.split(","):
    for family in FAMILIES:
      for c in plan(a.simulate, gen, family, a.top):
        row = {"gen": gen, "family": family, "rank": c["rank"], "params": c["params"],
               "vmem_limit_bytes_needed": c["vmem_limit_bytes_needed"], "peak_bytes": c["peak_bytes"]["vmem"]}
        row["at_default"] = compile_at(family, c["params"], gen, None)
        row["at_needed"] = compile_at(family, c["params"], gen, c["vmem_limit_bytes_needed"])
        rows.append(row)
        print(gen, family, c["rank"], c["params"], row["at_default"]["verdict"], row["at_default"]["scoped_vmem_bytes"],
              "needed", c["vmem_limit_bytes_needed"], row["at_needed"]["verdict"], flush=True)
  with gzip.open(a.out, "wt", compresslevel=9) as f:
    for r in rows:
      f.write(json.dumps(r, sort_keys=True) + "\n")


if __name__ == "__main__":
  main()
