#!/usr/bin/env python3
"""Re-counts `result.spill_bytes` of a held-out or dev family file (bench/tpu/sweep_heldout.py's
rows) as the Pallas kernels' own spill slots: files swept before sweep_spills.kernel_spill_bytes
counted every HLO of libtpu's report, XLA's copies beside the kernel included
(tests/data/tpu/README.md). Each row that fit at its raised limit is compiled again there with the
libtpu installed; its total must equal the recorded one (the same compile), and the field the row
had is kept as `spill_bytes_all_hlos`. The header gets `respilled`: when, the command, the libtpu,
how many rows changed.

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /work/venvs/tpu/bin/python \\
      bench/tpu/respill.py tests/data/tpu/heldout_families.jsonl.gz [--jobs 2]

(IN is rewritten through a temporary file.) A row whose compile now differs in verdict or total is
left as it was and counted as `mismatched`.
"""
import argparse
import concurrent.futures
import datetime
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from retrace import read_file, write_file  # noqa: E402


def recount(row):
  """(id, kernel spill bytes, total bytes) of the row's compile at its raised limit."""
  from product import tpu_aot
  import heldout_kernels
  import sweep_spills
  fn, args = heldout_kernels.build(row["kind"], dict(row["params"], limit=row["vmem_limit_bytes"]))
  r = tpu_aot.compile_kernel(fn, args, row["gen"])
  total = (r.get("pallas") or {}).get("total_bytes") if r["verdict"] == "fits" else None
  return row["id"], sweep_spills.kernel_spill_bytes(r), total


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("file")
  ap.add_argument("--jobs", type=int, default=1)
  a = ap.parse_args()
  header, rows = read_file(a.file)
  todo = [r for r in rows if (r.get("result") or {}).get("verdict") == "fits"]
  t0 = time.time()
  found = {}
  with concurrent.futures.ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
    for i, (rid, spill, total) in enumerate(ex.map(recount, todo, chunksize=4)):
      found[rid] = (spill, total)
      if i % 50 == 0:
        print(f"{i}/{len(todo)} {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
  changed = mismatched = 0
  for r in rows:
    if r["id"] not in found:
      continue
    spill, total = found[r["id"]]
    res = r["result"]
    if total != res.get("total_bytes"):
      mismatched += 1
      continue
    if spill != res.get("spill_bytes"):
      changed += 1
      res["spill_bytes_all_hlos"] = res.get("spill_bytes")
      res["spill_bytes"] = spill
  from product import tpu_aot
  write_file(a.file, header, rows, "respilled", {
      "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
      "command": f"bench/tpu/respill.py {a.file}", "versions": tpu_aot.versions(), "rows": len(todo),
      "changed": changed, "mismatched": mismatched, "wall_s": round(time.time() - t0, 1)})
  print(f"{a.file}: {len(todo)} rows compiled, {changed} spill figures changed, {mismatched} mismatched")


if __name__ == "__main__":
  main()
