"""How much of a dot's computed left operand libtpu keeps, by the MXU passes its right operand
takes (bench/tpu/probe_left_operand_passes.py, tests/data/tpu/left_operand_passes_probe.txt; the
replay's rule: RightOperandSpansSeveralMxuTiles in backends/tpu/tpu_tiling.h). Runs everywhere:
it reads recorded compiler output, no libtpu needed."""
import json
import math
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(REPO, "tests", "data", "tpu", "left_operand_passes_probe.txt")
OPERAND_BYTES = {"bf16": 2, "f32": 4}


def _mxu_width(gen):
  with open(os.path.join(REPO, "models", "devices", f"tpu_{gen}.textproto")) as f:
    return int(re.search(r"^\s*mxu_size:\s*(\d+)", f.read(), re.M).group(1))


def _rows():
  with open(PROBE) as f:
    lines = f.read().splitlines()
  assert lines[0].startswith("# ") and '"libtpu": "0.0.42.1"' in lines[0], lines[0]
  return [json.loads(line) for line in lines if not line.startswith("#")]


def _fitting(several_tiles):
  """The rows libtpu compiled whose right operand spans several MXU tiles (or one)."""
  rows = [r for r in _rows() if r["verdict"] == "fits" and (r["passes"] > 1) == several_tiles]
  assert rows
  return rows


def test_the_recorded_passes_are_the_right_operands_tiles_of_the_mxu():
  for r in _rows():
    assert r["passes"] == math.ceil(r["n"] / _mxu_width(r["gen"])), r


def test_through_one_mxu_tile_the_left_operand_is_not_kept():
  # What spills is at most the f32 result the K loop accumulates, never the left operand.
  for r in _fitting(several_tiles=False):
    assert r["spill_bytes"] <= r["result_bytes"], r


def test_across_several_tiles_the_left_operand_is_kept_packed():
  # At least most of the left block at its dot width (a bf16 block packed, m x k x 2), at most
  # that and the result; v7x keeps less where its two MXUs take the right tiles side by side
  # (the rule's figure is its upper side there).
  for r in _fitting(several_tiles=True):
    left = r["m"] * r["k"] * OPERAND_BYTES[r["dtype"]]
    assert r["spill_bytes"] <= left + r["result_bytes"], r
    if r["gen"] != "v7x":
      assert r["spill_bytes"] >= 0.8 * left, r


def test_v7x_keeps_nothing_across_as_many_tiles_as_it_has_mxus_below_a_thousand_rows():
  v7x = [r for r in _fitting(several_tiles=True) if r["gen"] == "v7x" and r["passes"] == 2 and r["m"] <= 1024]
  assert v7x and all(r["spill_bytes"] == 0 for r in v7x)
