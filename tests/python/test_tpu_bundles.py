"""libtpu's static schedule as the oracle of a Pallas kernel's compute per grid step
(backends/tpu/tpu_aot.py parse_bundles, bench/tpu/compute_oracle.py; docs/tpu.md, "Compute per grid
step"). Runs everywhere: it reads recorded compiler output, no libtpu needed."""
import gzip
import json
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "backends", "tpu"))
# No dump folder: only parse_bundles is used. Set for this import only: left in the environment,
# it would reach the libtpu processes other tests start (test_pallas.py), whose reports need it.
_dump_setting = os.environ.get("TPU_AOT_NO_DUMP")
os.environ["TPU_AOT_NO_DUMP"] = "1"
import tpu_aot  # noqa: E402  (no jax at import)
if _dump_setting is None:
  del os.environ["TPU_AOT_NO_DUMP"]
else:
  os.environ["TPU_AOT_NO_DUMP"] = _dump_setting

DATA = os.path.join(REPO, "tests", "data", "tpu")
# MXU edge and count per TensorCore (models/devices/tpu_*.textproto, from JAX tpu_info.py)
MXU = {"v5e": (128, 4), "v6e": (256, 2)}


def _recorded():
  with gzip.open(os.path.join(DATA, "bundles.jsonl.gz"), "rt") as f:
    rows = [json.loads(line) for line in f]
  with gzip.open(os.path.join(DATA, "corpus_bodies.jsonl.gz"), "rt") as f:
    bodies = {o["id"]: o["summary"] for o in map(json.loads, f)}
  return rows[0], rows[1:], bodies


def _mxu_cycles(body, gen):
  """m x weight tiles / MXUs over the body's dots: one left-operand row per cycle per MXU."""
  edge, mxus = MXU[gen]
  return sum(int(d.get("count") or 1) * d["m"] * -(-d["k"] // edge) * -(-d["n"] // edge) / mxus
             for d in body.get("dots") or [])


def test_the_grid_loop_of_a_final_schedule_is_its_step():
  with open(os.path.join(DATA, "final_bundles_softmax_v5e.txt")) as f:
    parsed = tpu_aot.parse_bundles(f.read())
  # the loop body runs from bundle 0x5 (LB) to the backward branch at 0x2aa
  assert parsed["grid_loop"] and parsed["step"] == 0x2aa - 0x5 + 1


def test_a_schedule_without_a_loop_is_one_step():
  parsed = tpu_aot.parse_bundles("     0   :  { %1 = vsyncpa }\n   0x1   :  { %2 = shalt }\n")
  assert parsed == {"total": 2, "step": 2, "grid_loop": False}


def test_recorded_kernels_with_a_grid_have_a_grid_loop():
  # One Pallas kernel per row; its grid is one unrolled loop, except megablox gmm (whose grid is
  # driven by its group metadata) and copies of a single block (grid 1: no loop).
  header, rows, _ = _recorded()
  assert header["versions"]["libtpu"] == "0.0.42.1"
  assert len(rows) == 567
  for r in rows:
    (kernel,) = r["bundles"].values()
    if r["kind"] == "gmm" or r["params"].get("grid") == 1:
      continue
    assert kernel["grid_loop"] and 0 < kernel["step"] <= kernel["total"], r["id"]


def test_bf16_matmul_steps_take_the_mxu_cycles_of_their_weight_tiles():
  # On v5e the schedule of a 16-bit matmul step is 0.94-1.58 x the MXU cycle count (median 1.06):
  # the MXU term of the planner (flops at the bf16 peak, scaled by the weight tiles' fill) is
  # the step's compute to within the accumulator's read-modify-write on small k.
  _, rows, bodies = _recorded()
  ratios = [list(r["bundles"].values())[0]["step"] / _mxu_cycles(bodies[r["id"]], "v5e")
            for r in rows if r["gen"] == "v5e" and r["kind"] == "matmul_grid" and r["params"]["dtype"] == "bf16"]
  assert len(ratios) == 21
  assert 1.0 <= statistics.median(ratios) <= 1.1
  assert min(ratios) >= 0.9 and max(ratios) <= 1.6


def _graph_vector(graph_file):
  """The `vector { ... }` expressions of a shipped Pallas graph, as Python (integer) functions."""
  import re
  with open(os.path.join(REPO, "models", "graphs", graph_file)) as f:
    text = re.sub(r"#[^\n]*", "", f.read())
  block = re.search(r"vector\s*\{(.*?)\}", text, re.S).group(1)
  out = {}
  for name, expr in re.findall(r'(\w+):\s*"([^"]*)"', block):
    out[name] = eval("lambda **p: " + re.sub(r"\b([A-Z]\w*)\b", r"p['\1']", expr.replace("/", "//")))  # noqa: S307
  return out


def _recorded_vector(kind, keep):
  """(params, vector figures) of the corpus rows of `kind` whose params pass `keep`, as the
  tracer (scratchsim/_pallas_body.py) recorded them in corpus_bodies.jsonl.gz."""
  with gzip.open(os.path.join(DATA, "corpus.jsonl.gz"), "rt") as f:
    params = {r["id"]: r["params"] for r in map(json.loads, f) if r.get("kind") == kind}
  with gzip.open(os.path.join(DATA, "corpus_bodies.jsonl.gz"), "rt") as f:
    return [(params[o["id"]], o["summary"]["vector"]) for o in map(json.loads, f)
            if o["id"] in params and keep(params[o["id"]])]


# The corpus kernels a shipped graph's vector expressions describe, and its parameters of theirs.
_FLASH = lambda p: (p["d"] <= 128 and not p.get("causal") and p.get("block_b", 1) == 1  # noqa: E731
                    and p.get("dtype", "bf16") == "bf16")
_BF16 = lambda p: p.get("dtype", "bf16") == "bf16"  # noqa: E731


def _check_graph(graph_file, kind, keep, params_of, at_least):
  figures = _graph_vector(graph_file)
  rows = _recorded_vector(kind, keep)
  assert len(rows) >= at_least
  for p, traced in rows:
    for name, f in figures.items():
      assert f(**params_of(p)) == traced[name], (graph_file, p, name)


def test_the_flash_attention_graphs_vector_work_is_the_tracers():
  # models/graphs/tpu_flash_attention.pbtxt states its vector work for head_dim up to 128
  _check_graph("tpu_flash_attention.pbtxt", "flash_fwd", _FLASH,
               lambda p: {"BQ": p["block_q"], "BK": p["block_k_major"], "BKI": p["block_k"]}, 20)


def test_the_matmul_graphs_vector_work_is_the_tracers():
  _check_graph("tpu_matmul_big.pbtxt", "matmul_acc", _BF16, lambda p: {"BM": p["bm"], "BN": p["bn"], "BK": p["bk"]}, 20)


def test_the_portable_pallas_graphs_vector_work_is_the_tracers():
  # pallas_attention.pbtxt: one inner step (block_k = block_k_major); pallas_matmul.pbtxt: as
  # tpu_matmul_big.pbtxt
  _check_graph("pallas_attention.pbtxt", "flash_fwd", lambda p: _FLASH(p) and p["block_k"] == p["block_k_major"],
               lambda p: {"BQ": p["block_q"], "BK": p["block_k"]}, 5)
  _check_graph("pallas_matmul.pbtxt", "matmul_acc", _BF16, lambda p: {"BM": p["bm"], "BN": p["bn"], "BK": p["bk"]}, 20)
