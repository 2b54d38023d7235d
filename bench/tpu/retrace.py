#!/usr/bin/env python3
"""Re-traces the stored graph of every row of a sweep or corpus file (jsonl.gz with a header line:
tests/data/tpu/*_spill_sweep.jsonl.gz, corpus.jsonl.gz, heldout_families*.jsonl.gz,
dev_families*.jsonl.gz) with this tree's tracer (sim/python/scratchsim/_pallas_trace.py and its
body reader, not an installed copy), keeping every other field (libtpu's results included), and
writes a new file. No libtpu compile runs: the results stay those of the libtpu that made them.

  JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-bench/bin/python bench/tpu/retrace.py \\
      tests/data/tpu/transpose_batched_spill_sweep.jsonl.gz /tmp/retraced.jsonl.gz

(IN and OUT may be the same path: OUT is written to a temporary file and moved over it at the end.
--with-op slice re-traces only the rows whose graph has a slice, after a change only slices see.)
Each row is rebuilt as it was made: heldout_kernels.build(kind, params) for the kinds of
bench/tpu/heldout_kernels.py (sweep_heldout.py's rows), else tpu_kernels.build(kind, params)
(make_corpus.py and sweep_spills.py), and traced under the name id with "/" as "_", as those
scripts name it; `graph` is replaced (and `graphs` where the kernel makes several pallas_calls).
A row whose build or trace fails keeps its old graph and gets `retrace_error`; a row that had no
graph (a build_error, a timeout) is left as it is. The header gets `retraced`: the date and time,
the command, the tracer's path, and how many rows were re-traced, changed and failed.
"""
import argparse
import datetime
import gzip
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def builder_for(kind):
  import heldout_kernels
  import tpu_kernels
  if kind in heldout_kernels.BUILDERS:
    return heldout_kernels.build
  return tpu_kernels.build


def read_file(path):
  """(header, rows) of a sweep or corpus file: its header line (a fresh one where it has none)
  and every other row."""
  with gzip.open(path, "rt") as f:
    lines = [json.loads(x) for x in f if x.strip()]
  header = lines[0] if lines and lines[0].get("header") else None
  return dict(header or {"header": True}), lines[1:] if header else lines


def write_file(path, header, rows, key, note):
  """Writes `header`, with `note` appended to its list `key` (one note per pass over the file),
  and `rows` to `path` through a temporary file: sorted keys, gzip -9."""
  prev = header.get(key)
  header[key] = (prev if isinstance(prev, list) else [prev] if prev else []) + [note]
  tmp = path + ".tmp"
  with gzip.open(tmp, "wt", compresslevel=9) as f:
    f.write(json.dumps(header, sort_keys=True) + "\n")
    for r in rows:
      f.write(json.dumps(r, sort_keys=True) + "\n")
  os.replace(tmp, path)


def keep_traced_with(new_graph, old_graph):
  """`new_graph` with the traced_with block of `old_graph`, where that has one: the row's results
  are those of the libtpu that made them (a file compiled under libtpu 0.0.52 stays marked so when
  re-traced beside 0.0.42.1)."""
  def block(g):
    i = g.find("traced_with {")
    return (i, g.find("}", i) + 1) if i >= 0 else None
  old, new = block(old_graph), block(new_graph)
  if old is None or new is None:
    return new_graph
  return new_graph[:new[0]] + old_graph[old[0]:old[1]] + new_graph[new[1]:]


def retrace_row(row, pallas_trace):
  """(new row, status): status "same", "changed", "error" or "skipped"."""
  if "graph" not in row or "kind" not in row or "params" not in row:
    return row, "skipped"
  try:
    fn, args = builder_for(row["kind"])(row["kind"], row["params"])
    graphs = pallas_trace.graphs_from_function(fn, args, row["id"].replace("/", "_"), export=False)
  except Exception as e:
    out = dict(row, retrace_error=f"{type(e).__name__}: {e}"[:2000])
    return out, "error"
  out = dict(row)
  out.pop("retrace_error", None)
  out["graph"] = keep_traced_with(graphs[0], row["graph"])
  if len(graphs) > 1 or "graphs" in row:
    out["graphs"] = [keep_traced_with(g, old) for g, old in zip(graphs, row.get("graphs", [row["graph"]] * len(graphs)))]
  changed = out["graph"] != row["graph"] or out.get("graphs") != row.get("graphs")
  return out, "changed" if changed else "same"


def main(argv):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("inp")
  ap.add_argument("out")
  ap.add_argument("--with-op", metavar="PRIMITIVE",
                  help="re-trace only the rows whose stored graph has an op of this primitive (\"slice\"): "
                       "after a tracer change that only such ops see; the others are kept and counted kept")
  a = ap.parse_args(argv)
  from product import pallas_trace
  t0 = time.time()
  header, rows = read_file(a.inp)
  counts = {"same": 0, "changed": 0, "error": 0, "skipped": 0, "kept": 0}
  out_rows = []
  marker = f'op: "{a.with_op}"' if a.with_op else None
  for r in rows:
    if marker and not any(marker in g for g in [r.get("graph") or ""] + list(r.get("graphs") or [])):
      counts["kept"] += 1
      out_rows.append(r)
      continue
    nr, status = retrace_row(r, pallas_trace)
    counts[status] += 1
    out_rows.append(nr)
  note = {"at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
          "command": " ".join(["bench/tpu/retrace.py"] + argv),
          "tracer": "sim/python/scratchsim of this tree", "rows": len(rows), "retraced": counts["same"] + counts["changed"],
          "changed": counts["changed"], "errors": counts["error"], "no_graph": counts["skipped"],
          "kept_without_op": counts["kept"],
          "wall_s": round(time.time() - t0, 1)}
  write_file(a.out, header, out_rows, "retraced", note)
  print(json.dumps(note, sort_keys=True))
  return 1 if counts["error"] else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
