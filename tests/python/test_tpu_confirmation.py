"""The runner's confirmation of a compile (backends/tpu/tpu_aot.py, what `simulate --confirm`
reads): libtpu prints the figures of its VMEM errors rounded ("18.03M"), so they go out as text,
and as bytes only where exact. Plain Python plus JAX's version numbers; no libtpu.

  python -m pytest tests/python/test_tpu_confirmation.py
"""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "backends", "tpu"))
pytest.importorskip("jax", reason="confirmation() records JAX's versions")
import tpu_aot  # noqa: E402

SCOPED = ("Scoped allocation with size 18.03M and limit 16.00M exceeded scoped vmem limit by 2.03M. "
          "It should not be possible to run out of scoped vmem")


def _failed(message):
  r = {"verdict": "error", "compile_s": 1.0, "message": message}
  r.update(tpu_aot.parse_error(message))
  return r


def test_rounded_figures_go_out_as_text_not_bytes():
  out = tpu_aot.confirmation(_failed(SCOPED), "v5e")
  assert out["size_text"] == "18.03M" and out["limit_text"] == "16.00M"
  assert "size_bytes" not in out and "limit_bytes" not in out


def test_the_limit_the_kernel_states_is_the_exact_limit():
  out = tpu_aot.confirmation(_failed(SCOPED), "v5e", stated_limits=[16 << 20])
  assert out["limit_bytes"] == 16 << 20
  assert "size_bytes" not in out


def test_a_stated_limit_the_text_does_not_show_is_not_taken():
  out = tpu_aot.confirmation(_failed(SCOPED), "v5e", stated_limits=[20 << 20])
  assert "limit_bytes" not in out


def test_two_kernels_stating_limits_the_text_cannot_tell_apart_give_none():
  out = tpu_aot.confirmation(_failed(SCOPED), "v5e", stated_limits=[16 << 20, (16 << 20) + 1024])
  assert "limit_bytes" not in out


def test_a_one_allocation_error_keeps_its_exact_integers():
  out = tpu_aot.confirmation(_failed("Allocation (size=20000000) would exceed memory (size=16777216)"), "v4")
  assert out["size_bytes"] == 20000000 and out["limit_bytes"] == 16777216


@pytest.mark.parametrize("text,value,matches", [
    ("16.00M", 16 << 20, True),
    ("16.00M", (16 << 20) + 5000, True),     # within half of 0.01M
    ("16.00M", (16 << 20) + 6000, False),
    ("32.38M", 33947648, True),              # 32.375M exactly: halfway, it prints as either neighbour
    ("32.37M", 33947648, True),
    ("32.38M", 33947647, False),
    ("147.1K", 150630, True),
    ("512B", 512, True),
    ("512B", 513, False),
    ("nonsense", 1, False),
])
def test_rounding_matches_at_the_texts_precision(text, value, matches):
  assert tpu_aot.rounding_matches(text, value) is matches
