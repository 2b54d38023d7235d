"""The shapes each TPU spill band was drawn from (backends/tpu/spill_coverage.inc, which
spill_model.cc's ShapesOutsideTheFit reads) are what bench/tpu/spill_coverage.py derives from the
recorded compiles the bands were fitted on or are tested to contain. Plain Python; no jax or libtpu.

  python -m pytest tests/python/test_tpu_spill_coverage.py
"""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_coverage_table_is_the_fit_data():
  result = subprocess.run([sys.executable, os.path.join(REPO, "bench", "tpu", "spill_coverage.py"), "--check",
                           os.path.join(REPO, "backends", "tpu", "spill_coverage.inc")],
                          capture_output=True, text=True)
  assert result.returncode == 0, result.stdout + result.stderr
