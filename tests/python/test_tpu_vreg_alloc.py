"""How libtpu allocates a Pallas kernel's spill slots, as its LLO dump shows it
(bench/tpu/probe_vreg_alloc.py, tests/data/tpu/vreg_alloc_probe.txt; docs/tpu.md, "How libtpu
allocates spill slots"). Runs everywhere: it reads recorded compiler output, no libtpu needed."""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "tpu"))
import probe_vreg_alloc  # noqa: E402  (no jax at import)

PROBE = os.path.join(REPO, "tests", "data", "tpu", "vreg_alloc_probe.txt")
# Vector registers per generation: the physical registers the allocated LLO names.
REGISTER_FILE = {"v4": 32, "v5e": 64, "v5p": 64, "v6e": 64, "v7x": 64}


def _recorded():
  with open(PROBE) as f:
    lines = f.read().splitlines()
  header = [line for line in lines if line.startswith("#")]
  return header, [json.loads(line) for line in lines if not line.startswith("#")]


def _slot(n):
  return f"        #allocation{n}_spill [shape = 'u32[8,128]{{1,0}}', space=vmem, size = 0x1000, scoped, tag = 'spilled vreg/vmreg']"


def _store(n, v):
  return f"      %{100 + v} = vst [vmem:[#allocation{n}_spill] sm:$0xff] /*vst_source=*/%v{v}_v3"


def _fill(n, v):
  return f"      %v{200 + v}_v4 = vld [vmem:[#allocation{n}_spill] sm:$0xff]"


def test_register_pressure_is_read_from_the_dump_header():
  text = "Register pressure for vregs is 424\nlen=1930 lr=[737, 2667) wt=136 users=3  :: %v1437 = vmul.f32\n"
  assert probe_vreg_alloc.register_pressure(text) == 424
  assert probe_vreg_alloc.register_pressure("") is None


def test_spilled_values_whose_spans_do_not_overlap_count_once():
  # value 1 is stored and filled before value 2 is stored: one slot's worth held at a time
  text = "\n".join([_slot(1), _slot(2), _store(1, 1), _fill(1, 1), _store(2, 2), _fill(2, 2)])
  facts = probe_vreg_alloc.post_ra_facts(text)
  assert facts["slots"] == 2 and facts["spill_stores"] == 2 and facts["spilled_peak"] == 1


def test_spilled_values_whose_spans_overlap_count_each():
  text = "\n".join([_slot(1), _slot(2), _store(1, 1), _store(2, 2), _fill(1, 1), _fill(2, 2)])
  assert probe_vreg_alloc.post_ra_facts(text)["spilled_peak"] == 2


def test_a_slot_stored_again_holds_its_new_value_from_then():
  # slot 1 holds value 1 to its fill, then value 3 to its fill; slot 2 overlaps only value 3
  text = "\n".join([_slot(1), _slot(2), _store(1, 1), _fill(1, 1), _store(1, 3), _store(2, 2), _fill(2, 2),
                    _fill(1, 3)])
  facts = probe_vreg_alloc.post_ra_facts(text)
  assert facts["spill_stores"] == 3 and facts["spill_fills"] == 3 and facts["spilled_peak"] == 2


def test_the_probe_records_libtpu_0_0_42_1_on_every_generation():
  header, rows = _recorded()
  assert '"libtpu": "0.0.42.1"' in header[0]
  assert {r["gen"] for r in rows} == set(REGISTER_FILE)
  assert all(r["verdict"] == "fits" and r["slots"] > 0 for r in rows)


def test_the_reports_spill_bytes_are_whole_4kib_slots():
  _, rows = _recorded()
  for r in rows:
    assert r["spill_bytes"] == 4096 * r["slots"], r


def test_v4_allocates_32_vregs_and_later_generations_64():
  _, rows = _recorded()
  for r in rows:
    assert r["vregs"] == REGISTER_FILE[r["gen"]], r


def test_slots_are_the_most_spilled_values_held_at_once():
  # Values whose spans do not overlap share a slot: the slots are the most spilled values held at
  # once, not the values spilled. The listing's order cannot see a span across a loop's back edge
  # or a store never filled (it still takes a slot): up to 4 slots more than the peak it shows.
  _, rows = _recorded()
  for r in rows:
    assert r["spilled_peak"] <= r["slots"] <= r["spilled_peak"] + 4, r
  assert sum(r["spill_stores"] for r in rows) > 2 * sum(r["slots"] for r in rows)


def test_slots_are_the_schedules_pressure_over_the_register_file_and_a_few():
  # P - R vregs do not fit; a value kept in its slot while a fill has it in a register adds a few
  _, rows = _recorded()
  with_pressure = [r for r in rows if r["pressure"] is not None]
  assert len(with_pressure) == 34
  for r in with_pressure:
    assert 5 <= r["slots"] - (r["pressure"] - REGISTER_FILE[r["gen"]]) <= 63, r


def test_the_same_body_reaches_another_pressure_on_each_generation():
  # P is the scheduler's, with each generation's machine model: f32 layer norm backward, 256 x 512
  _, rows = _recorded()
  pressure = {r["gen"]: r["pressure"] for r in rows
              if r["kind"] == "layernorm_bwd" and r["params"] == {"br": 256, "d": 512, "dtype": "f32", "rows": 8192}}
  assert pressure == {"v4": 424, "v5p": 323, "v7x": 330}


PEAK = os.path.join(REPO, "tests", "data", "tpu", "vreg_peak_ops_probe.txt")


def test_peak_ops_are_read_from_the_dump_listing():
  text = ("Register pressure for vregs is 2\n"
          "len=1930 lr=[737, 2667) wt=136 users=3             :: %v1437 = vmul.f32 %v1321, %v622\n"
          "                                        use: lr=[747, 753) %v1587 = vadd.f32 %v1438, %v1437\n"
          "len=12 lr=[740, 752) wt=2 users=1             :: %v1440 = vld [vmem:[#allocation3] sm:$0xff]\n")
  assert probe_vreg_alloc.peak_ops(text) == {"vmul.f32": 1, "vld": 1}


def test_values_live_at_the_peak_are_computed_blocks_not_row_strips():
  """The live ranges listed at the peak are P's values, and they are whole computed blocks: layer
  norm backward (f32, 256 x 512: 128 vregs a block) holds dy * gamma and x-hat whole across its lane
  reductions on v7x (263 vmul results), add + RMSNorm its sum (128 vregs) nearly whole on v6e (125
  vadd results), where streaming by strips of 8 rows would keep 4 vregs an operand; loads are few."""
  with open(PEAK) as f:
    rows = {(r["kind"], r["gen"]): r for r in (json.loads(line) for line in f if not line.startswith("#"))}
  assert len(rows) == 6
  for r in rows.values():
    assert sum(r["peak_ops"].values()) == r["pressure"], r
    assert r["peak_ops"].get("vld", 0) <= 36, r
  assert rows[("layernorm_bwd", "v7x")]["peak_ops"]["vmul.f32"] >= 256
  assert rows[("add_rmsnorm_alias", "v6e")]["peak_ops"]["vadd.f32"] >= 120
  assert rows[("add_rmsnorm_alias", "v4")]["peak_ops"]["vadd.f32"] < 128  # v4 holds part of it
