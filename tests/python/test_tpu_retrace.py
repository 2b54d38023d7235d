"""Re-tracing a recorded file keeps the libtpu that made its results (bench/tpu/retrace.py): the
graph's traced_with block is the row's recorded one, whatever libtpu the re-tracing host has.
Runs everywhere: no jax is imported."""
import gzip
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "tpu"))
import retrace  # noqa: E402  (imports jax only when it re-traces)

BLOCK = 'traced_with {\n    jax: "0.10.2"\n    libtpu: "%s"\n  }'


def _graph(libtpu, body="values: \"f32[8,128]\""):
  return "pallas {\n  body { %s }\n  %s\n}\n" % (body, BLOCK % libtpu)


def test_a_retraced_graph_keeps_the_recorded_traced_with():
  new = _graph("0.0.42.1", body='values: "f32[8,128]{sublanes replicated}"')
  kept = retrace.keep_traced_with(new, _graph("0.0.52"))
  assert 'libtpu: "0.0.52"' in kept and "0.0.42.1" not in kept
  assert "{sublanes replicated}" in kept  # the new body stays


def test_a_graph_recorded_without_traced_with_takes_the_new_one():
  old = "pallas {\n  body { }\n}\n"
  new = _graph("0.0.42.1")
  assert retrace.keep_traced_with(new, old) == new


@pytest.mark.parametrize("name, rows", [("heldout_families_libtpu0052.jsonl.gz", 200),
                                         ("heldout2_families_libtpu0052.jsonl.gz", 150),
                                         ("dev_families_libtpu0052.jsonl.gz", 300),
                                         ("heldout3_families_libtpu0052.jsonl.gz", 260),
                                         ("heldout4_families_libtpu0052.jsonl.gz", 200),
                                         ("heldout5_families_libtpu0052.jsonl.gz", 170),
                                         ("heldout6_families_libtpu0052.jsonl.gz", 170),
                                         ("heldout7_families_libtpu0052.jsonl.gz", 170),
                                         ("heldout8_families_libtpu0052.jsonl.gz", 170)])
def test_the_libtpu_0052_files_name_their_libtpu(name, rows):
  path = os.path.join(REPO, "tests", "data", "tpu", name)
  with gzip.open(path, "rt") as f:
    graphs = [json.loads(line).get("graph") for line in f if line.strip()]
  graphs = [g for g in graphs if g]
  assert len(graphs) >= rows
  assert all('libtpu: "0.0.52"' in g for g in graphs)


def test_with_op_keeps_the_rows_whose_graph_lacks_the_op(tmp_path):
  # No row has a slice: none is re-traced (so no jax is needed), every one is kept as it was.
  path = str(tmp_path / "rows.jsonl.gz")
  rows = [{"id": "v4/k/1", "kind": "k", "params": {}, "graph": _graph("0.0.42.1")}]
  with gzip.open(path, "wt") as f:
    f.write(json.dumps({"header": True}) + "\n" + json.dumps(rows[0]) + "\n")
  assert retrace.main([path, path, "--with-op", "slice"]) == 0
  header, kept = retrace.read_file(path)
  assert kept == rows
  assert header["retraced"][-1]["kept_without_op"] == 1 and header["retraced"][-1]["retraced"] == 0
