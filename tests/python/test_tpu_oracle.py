"""The TPU backend against the real TPU compiler, live: a few Pallas kernels are compiled by libtpu
(XLA:TPU + Mosaic, ahead of time for a TPU topology, no TPU needed: backends/tpu/tpu_aot.py) and
judged by `simulate`; no FITS may be one libtpu rejects, and `simulate --confirm` (libtpu on the
graph's exported call) says what libtpu says of the traced function. The recorded corpus
(backends/tpu/tpu_corpus_test.cc) checks every generation everywhere; this test checks that the
recording still holds where libtpu is installed, and is skipped, with the reason, where it is not.

  /work/venvs/tpu/bin/python -m pytest tests/python/test_tpu_oracle.py    # jax[tpu]==0.10.2
  /work/venvs/tpu/bin/python tests/python/test_tpu_oracle.py              # the same without pytest

`simulate` is $SCRATCHSIM_SIMULATE, else the first build*/simulate of the repository. libtpu takes
one process at a time (/tmp/libtpu_lockfile): the test is skipped while another holds it.
"""
import glob
import json
import os
import subprocess
import sys

try:
  import pytest
except ImportError:  # run as a script (below): the venv with libtpu need not have pytest
  pytest = None

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench", "tpu")


def _simulate_binary():
  path = os.environ.get("SCRATCHSIM_SIMULATE")
  if path:
    return path if os.access(path, os.X_OK) else None
  # build/ first (the README's build), then the others: "build-cuda" sorts before "build" by name
  candidates = glob.glob(os.path.join(REPO, "build*", "simulate"))
  for candidate in sorted(candidates, key=lambda p: (os.path.basename(os.path.dirname(p)) != "build", p)):
    if os.access(candidate, os.X_OK):
      return candidate
  return None


def _libtpu_busy():
  """Whether another process holds libtpu's lock (libtpu refuses a second one)."""
  lock = "/tmp/libtpu_lockfile"
  if not os.path.exists(lock):
    return False
  try:
    import fcntl
    with open(lock, "a") as f:
      fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
      fcntl.lockf(f, fcntl.LOCK_UN)
    return False
  except OSError:
    return True


SIMULATE = _simulate_binary()


def skip_reason():
  """Why the oracle cannot run here, or None."""
  if SIMULATE is None:
    return "no simulate binary (build the repository or set SCRATCHSIM_SIMULATE)"
  try:
    import libtpu  # noqa: F401
  except ImportError:
    return "libtpu is not installed (pip install 'jax[tpu]==0.10.2', bench/tpu/README.md)"
  if _libtpu_busy():
    return "another process holds libtpu (/tmp/libtpu_lockfile): libtpu runs one process at a time"
  return None


def load_oracle():
  sys.path.insert(0, BENCH)
  from product import tpu_aot  # (first: it sets the environment libtpu needs)
  from product import pallas_trace
  import tpu_kernels
  return tpu_aot, pallas_trace, tpu_kernels

# (kind, params, generation): kernels on both sides of the default scoped limit whose verdict
# turns on the blocks (matmul), on the spills (softmax: blocks exactly at the limit) or on the
# body's legality (int8 arithmetic).
CASES = [
    ("matmul_acc", {"bm": 512, "bn": 512, "bk": 512}, "v5e"),
    ("matmul_acc", {"bm": 1024, "bn": 1024, "bk": 1024}, "v5e"),
    ("softmax", {"rows": 8192, "d": 4096, "br": 128, "dtype": "f32"}, "v5e"),
    ("softmax", {"rows": 8192, "d": 4096, "br": 256, "dtype": "f32"}, "v5e"),
    ("flash_fwd", {"b": 1, "h": 2, "s": 4096, "d": 128, "block_q": 1024, "block_k_major": 1024, "block_k": 512}, "v6e"),
    ("copy", {"br": 17, "d": 4096, "dtype": "i8", "grid": 1}, "v6e"),
]


def _simulate(graph_text, gen, tmp_path, *extra):
  path = tmp_path / "kernel.pbtxt"
  path.write_text(graph_text)
  # --confirm runs libtpu with this interpreter (the one that has it)
  env = dict(os.environ, SCRATCHSIM_PYTHON=sys.executable)
  out = subprocess.run([SIMULATE, "--device", f"tpu_{gen}", "--graph", str(path), "--format", "json", *extra],
                       capture_output=True, text=True, env=env)
  if out.returncode == 2:
    return {"verdict": "INVALID", "stderr": out.stderr}
  report = json.loads(out.stdout)
  report["exit"] = out.returncode
  return report


def check_case(oracle, kind, params, gen, tmp_path):
  """Compiles one kernel with libtpu and judges it with simulate; asserts the verdicts agree
  where the contract says they must (no FITS libtpu rejects; refused kernels refused)."""
  tpu_aot, p2g, kernels = oracle
  fn, args = kernels.build(kind, params)
  graph = p2g.graphs_from_function(fn, args, f"{gen}_{kind}")[0]
  assert "body {" in graph, "pallas_to_graph.py no longer fills pallas.body"
  ours = _simulate(graph, gen, tmp_path)
  truth = tpu_aot.compile_kernel(fn, args, gen)["verdict"]
  if ours["verdict"] == "FITS":
    assert truth == "fits", f"simulate says FITS, libtpu says {truth}"
    assert ours["exit"] == 0
  else:
    assert ours.get("exit", 2) != 0
  if truth == "error":
    assert ours["verdict"] == "INVALID", f"libtpu refuses the kernel, simulate says {ours['verdict']}"
  if truth.startswith("vmem"):
    assert ours["verdict"] in ("DOES_NOT_FIT", "AT_RISK")
  # simulate --confirm compiles the graph's exported call: libtpu says what it said of the function
  # (a kernel the model refuses is refused before anything is compiled)
  if ours["verdict"] != "INVALID":
    assert "jax_export" in graph, "pallas_to_graph.py wrote no pallas.jax_export"
    confirmed = _simulate(graph, gen, tmp_path, "--confirm", "always")["confirmation"]
    assert not confirmed.get("error"), confirmed
    assert confirmed["outcome"] == truth, f"simulate --confirm: libtpu says {confirmed['outcome']}, directly {truth}"
    if truth.startswith("vmem"):  # out of VMEM: what it needs, or that the whole VMEM is too small
      assert confirmed.get("requirement_bytes", 0) > confirmed.get("limit_bytes", 0) or confirmed.get("exceeds_capacity"), confirmed
  return ours["verdict"], truth


if pytest is not None:
  @pytest.fixture(scope="module")
  def oracle():
    reason = skip_reason()
    if reason:
      pytest.skip(reason)
    return load_oracle()

  @pytest.mark.parametrize("kind,params,gen", CASES, ids=[f"{c[2]}-{c[0]}-{i}" for i, c in enumerate(CASES)])
  def test_no_false_fits_against_libtpu(oracle, kind, params, gen, tmp_path):
    check_case(oracle, kind, params, gen, tmp_path)


if __name__ == "__main__":
  import pathlib
  import tempfile
  reason = skip_reason()
  if reason:
    print(f"SKIPPED: {reason}")
    sys.exit(0)
  loaded = load_oracle()
  failures = 0
  for kind, params, gen in CASES:
    with tempfile.TemporaryDirectory() as d:
      try:
        ours, truth = check_case(loaded, kind, params, gen, pathlib.Path(d))
        print(f"ok   {gen} {kind} {params}: simulate {ours}, libtpu {truth}")
      except AssertionError as e:
        failures += 1
        print(f"FAIL {gen} {kind} {params}: {e}")
  sys.exit(1 if failures else 0)
