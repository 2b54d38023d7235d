#!/usr/bin/env python3
"""Per compile of a family file, libtpu's figures beside simulate's: the row a per-family table in
docs/tpu.md summarizes (TpuCorpusTest prints the tables, not the rows).

  python3 bench/tpu/compare_rows.py build/simulate tests/data/tpu/heldout8_families.jsonl.gz \\
      [--kinds w8a8_matmul,mla_decode] [--gens v5e,v7x]

Each line: generation, id, the family's parameters, simulate's verdict at the default scoped limit,
libtpu's requirement (its total at the raised limit) and spill slots, simulate's scoped bytes, the
estimated part of them and their range with every estimate at its bounds, and the bytes' error
against the requirement. Plain Python 3.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

DEVICES = {"v4": "tpu_v4", "v5e": "tpu_v5e", "v5p": "tpu_v5p", "v6e": "tpu_v6e", "v7x": "tpu_v7x"}


def judge(simulate, gen, graph_text):
  """simulate's JSON report of a row's graph at the generation's default scoped limit."""
  text = re.sub(r"vmem_limit_bytes:\s*\d+", "", graph_text)
  with tempfile.NamedTemporaryFile("w", suffix=".pbtxt", delete=False) as f:
    f.write(text)
  try:
    out = subprocess.run([simulate, "--device", DEVICES[gen], "--graph", f.name, "--format", "json"],
                         capture_output=True, text=True, check=False).stdout
  finally:
    os.unlink(f.name)
  return json.loads(out) if out else None


def describe(row, report):
  result = row.get("result") or {}
  requirement, slots = result.get("total_bytes"), result.get("spill_bytes")
  if report is None:
    return f"{row['gen']} {row['id']}: simulate gave no report"
  vmem = report["spaces"][0]
  band = (f"estimated {vmem['estimated_bytes']}, scoped {vmem['peak_bytes_low']} to {vmem['peak_bytes_high']}"
          if vmem.get("has_estimates") else "no estimate")
  error = f"{100.0 * (vmem['peak_bytes'] - requirement) / requirement:+.1f}%" if requirement else "no requirement"
  params = json.dumps(row.get("params"), separators=(",", ":"))
  return (f"{row['gen']} {row['id'].split('/')[-1]} {params} {report['verdict']} libtpu {requirement} "
          f"(slots {slots}) model {vmem['peak_bytes']} {band} {error}")


def main(argv):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("simulate")
  ap.add_argument("family_file")
  ap.add_argument("--kinds", default="", help="only these families (comma-separated)")
  ap.add_argument("--gens", default="", help="only these generations (comma-separated)")
  a = ap.parse_args(argv)
  kinds, gens = set(filter(None, a.kinds.split(","))), set(filter(None, a.gens.split(",")))
  for path in (a.simulate, a.family_file):
    if not os.path.isfile(path):
      sys.exit(f"compare_rows.py: {path}: no such file")
  with gzip.open(a.family_file, "rt") as f:
    for line in f:
      row = json.loads(line)
      if row.get("header") or (kinds and row["kind"] not in kinds) or (gens and row["gen"] not in gens):
        continue
      print(describe(row, judge(a.simulate, row["gen"], row["graph"])), flush=True)


if __name__ == "__main__":
  main(sys.argv[1:])
