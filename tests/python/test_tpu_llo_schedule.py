"""Where libtpu's register pressure P comes from, pass by pass of its LLO pipeline, and how far list
schedulers over the kernel's vreg ops are from it (bench/tpu/probe_llo_schedule.py,
tests/data/tpu/llo_schedule_probe.txt; docs/tpu.md, "Where P comes from: LLO's schedulers").
Runs everywhere: it reads recorded compiler output, no libtpu needed."""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "tpu"))
import probe_llo_schedule as probe  # noqa: E402  (no jax at import)

DATA = os.path.join(REPO, "tests", "data", "tpu", "llo_schedule_probe.txt")


def _recorded():
  with open(DATA) as f:
    lines = f.read().splitlines()
  header = [line for line in lines if line.startswith("#")]
  objs = [json.loads(line) for line in lines if not line.startswith("#")]
  machines = {o["machine"]: o for o in objs if "machine" in o}
  rows = [o for o in objs if "kind" in o]
  return header, machines, rows


def _with_pressure():
  rows = [r for r in _recorded()[2] if r["pressure"] is not None]
  assert len(rows) == 34
  return rows


def _within(x, p, tol):
  return abs(x - p) <= tol * p


# ---------------------------------------------------------------------------------------------
# the reading


def test_a_value_is_live_from_its_definition_to_its_last_use():
  seq = [("%v1", "vld", []), ("%v2", "vld", []), ("%v3", "vadd.f32", ["%v1", "%v2"]),
         ("%v4", "vmul.f32", ["%v3", "%v3"]), ("%5", "vst", ["%v4"])]
  assert probe.max_live(seq) == 2
  # masks (%vm) are not vregs
  assert probe.max_live([("%vm1", "vcmp", []), ("%v2", "vsel", ["%vm1"])]) == 0


def test_a_load_used_again_far_later_is_loaded_again_there():
  far = [("%v1", "vld", []), ("%v2", "vmul.f32", ["%v1", "%v1"])]
  far += [(f"%v{10 + k}", "vld", []) for k in range(4)]
  far += [("%v20", "vadd.f32", ["%v10", "%v11"]), ("%v21", "vadd.f32", ["%v12", "%v13"]),
          ("%v22", "vadd.f32", ["%v1", "%v2"])]
  assert probe.max_live(far) == 6                 # v1 and v2 held across the four loads
  assert probe.max_live(far, remat_gap=3) == 5    # v1 loaded again before its last use
  computed = [(r, "vmul.f32" if r == "%v1" else op, u) for r, op, u in far]
  assert probe.max_live(computed, remat_gap=3) == 6  # only loads are rematerialized


def test_bundles_and_blocks_are_read_from_the_listings():
  text = ("   0x7   : > { %v147 = vld [vmem:[%s126 + $0x80] sm:$0xff]  ;;  %v211 = vmul.f32 %v147, %v147 }\n"
          "   0x8 LB: > { %282 = vadd.xlane.f32.xlu2 %v281 /* note %v9 */ }\n")
  assert probe.bundles(text) == [[("%v147", "vld", ["%s126"]), ("%v211", "vmul.f32", ["%v147", "%v147"])],
                                 [("%282", "vadd.xlane.f32.xlu2", ["%v281"])]]
  blocks = probe.blocks("%v1 = vld [vmem:[%s2] sm:$0xff]\n\n%v3 = vmul.f32 %v1, %v1\n%4 = vst [vmem:[%s5] sm:$0xff] %v3\n")
  assert [[op for _, op, _, _ in b] for b in blocks] == [["vld"], ["vmul.f32", "vst"]]


def test_a_store_orders_the_loads_of_its_buffer_and_a_unit_is_a_fifo():
  block = probe.blocks("%v1 = vld [vmem:[%s9] sm:$0xff]\n%2 = vst [vmem:[%s9] sm:$0xff] %v1\n"
                       "%v3 = vld [vmem:[%s9] sm:$0xff]\n%v4 = vld [vmem:[%s8] sm:$0xff]\n"
                       "%5 = vadd.xlane.f32.xlu0 %v3\n%6 = vadd.xlane.f32.xlu0 %v4\n")[0]
  occupancy = {("vadd.xlane.f32.U", "vadd.xlane.f32.U"): 8}
  preds = probe.dependences(block, lambda op: 2, occupancy)
  assert {j for j, _ in preds[1]} == {0}      # the store after the load it overwrites, and its value
  assert {j for j, _ in preds[2]} == {1}      # the load after the store to its buffer
  assert preds[3] == []                       # another buffer
  assert sorted(preds[5]) == [(3, 2), (4, 8)]  # its value, and the push before it on xlu0 8 later


def test_an_mxu_pop_follows_its_matmul_not_the_pushes():
  block = probe.blocks("%1 = vmatpush.bf16.msra.mxu0 %v9\n%2 = vmatmul.bf16.gmra.mxu0 %v8\n"
                       "%v3 = vpop.f32.mrf.mxu0\n%4 = vmatmul.bf16.gmra.mxu0 %v7\n%v5 = vpop.f32.mrf.mxu0\n")[0]
  preds = probe.dependences(block, lambda op: 1, {})
  assert [j for j, _ in preds[1]] == [0] and [j for j, _ in preds[3]] == [1]  # one FIFO in
  assert [j for j, _ in preds[2]] == [1]                  # the first pop: the first matmul's result
  assert sorted(j for j, _ in preds[4]) == [2, 3]          # the second: after the first pop, its matmul


# ---------------------------------------------------------------------------------------------
# the recorded probe


def test_the_probe_records_libtpu_0_0_42_1_on_every_generation():
  header, machines, rows = _recorded()
  assert '"libtpu": "0.0.42.1"' in header[0]
  assert set(machines) == {"v4", "v5e", "v5p", "v6e", "v7x"} == {r["gen"] for r in rows}
  assert len(rows) == 37


def test_p_is_the_most_values_live_in_the_program_the_allocator_gets():
  # This validates the live-range reading: LLO's P is that figure over the listing before
  # register-pressure, exactly on 31 kernels and within one vreg on all 34 with a P.
  rows = _with_pressure()
  assert all(abs(r["live"]["pre_pressure"] - r["pressure"]) <= 1 for r in rows)
  assert sum(r["live"]["pre_pressure"] == r["pressure"] for r in rows) >= 31


def test_mosaics_program_order_holds_more_than_the_schedule():
  # Mosaic's op-by-op unroll holds whole blocks: 1.15-19 x P, never within 10%
  rows = _with_pressure()
  assert all(r["live"]["mosaic"] > 1.1 * r["pressure"] for r in rows)


def test_rematerialization_only_adds_loads():
  _, _, rows = _recorded()
  assert all(r["remat_adds_only_loads"] for r in rows)
  assert sum(r["remat_loads"] > 0 for r in rows) >= 20
  # running argmax on v4 (512 x 2048 blocks): the bundles hold 10 x P until loads are repeated
  argmax = next(r for r in rows if r["kind"] == "running_argmax" and r["gen"] == "v4" and r["params"]["br"] == 512)
  assert argmax["live"]["vliw"] > 10 * argmax["pressure"] and argmax["live_remat"]["vliw"] <= argmax["pressure"] + 1


def test_the_vliw_bundles_with_loads_rematerialized_give_p():
  # P = the VLIW scheduler's order with far-used loads loaded again: within 3% on 30 of 34, within
  # 30% on all (online log-sum-exp and a v6e decode attention rematerialize more than the rule)
  rows = _with_pressure()
  assert sum(_within(r["live_remat"]["vliw"], r["pressure"], 0.03) for r in rows) >= 30
  assert all(0.98 * r["pressure"] <= r["live_remat"]["vliw"] <= 1.31 * r["pressure"] for r in rows)


def test_the_critical_path_schedulers_order_alone_does_not_give_p():
  # the bundle scheduler moves P from the first scheduler's order by up to 0.6-1.9 x
  rows = _with_pressure()
  within = sum(_within(r["live_remat"]["cp"], r["pressure"], 0.10) for r in rows)
  assert 18 <= within <= 26
  ratios = [r["live_remat"]["cp"] / r["pressure"] for r in rows]
  assert min(ratios) < 0.65 and max(ratios) > 1.8


def test_the_dependence_graph_gives_llos_critical_path_on_most_kernels():
  # The graph the candidates schedule, with the measured latencies and unit occupancies: its
  # longest path is LLO's own (critical-path.txt) within 10% on 22 of 37 kernels, and misses by 6-11 x
  # on depthwise conv1d (whose shifted windows of one buffer it orders too strictly).
  _, _, rows = _recorded()
  ratios = [r["critical_path"]["model"] / r["critical_path"]["llo"] for r in rows]
  assert sum(abs(x - 1) <= 0.10 for x in ratios) >= 20
  assert max(ratios) > 5


def test_no_candidate_list_scheduler_reproduces_p():
  # Over the first scheduler's input, with each generation's measured slots, latencies and unit
  # occupancies: the textbook schedulers are within 10% of P on at most 11 of 34 kernels (the
  # serial one, on row-local bodies) and miss MXU bodies by up to 14 x; switching to the op that
  # frees registers once they fill the file reaches 13 within 10%, 24 within 20%, and still misses
  # a matmul by 4 x and transposes and block-sparse matmuls by 2-3 x.
  rows = _with_pressure()
  for name in ("list_cp", "serial_cp", "demand"):
    assert sum(_within(r["models"][name], r["pressure"], 0.10) for r in rows) <= 11, name
    assert max(r["models"][name] / r["pressure"] for r in rows) > 5, name
  pressure_aware = [r["models"]["serial_rp"] / r["pressure"] for r in rows]
  assert sum(abs(x - 1) <= 0.10 for x in pressure_aware) == 13
  assert sum(abs(x - 1) <= 0.20 for x in pressure_aware) == 24
  assert max(pressure_aware) > 4 and min(pressure_aware) < 0.65


def test_the_machine_has_each_generations_units():
  # XLUs: 3 on v5e and v5p, 2 on v4, v6e and v7x; MXUs named by the bundles: 4 on v4-v5p, 2 on
  # v6e (v7x's kernels here name their MXU ops without slot classes of their own); a lane
  # reduction's result comes back 79 (v4) to 141 (v7x) bundles after its push; one XLU takes a
  # push every 8 bundles on v4-v5p, every 4 on v6e and v7x; one MXU a bf16 matmul every 16 on v4
  # and v5e, 32 on v5p.
  _, machines, _ = _recorded()
  xlus = {g: {k for k in m["slots"] if k.startswith("xlu") and k[3:].isdigit()} for g, m in machines.items()}
  assert {g: len(x) for g, x in xlus.items()} == {"v4": 2, "v5e": 3, "v5p": 3, "v6e": 2, "v7x": 2}
  mxus = {g: {k.split(":")[0] for k in m["slots"] if k.startswith("mxu")} for g, m in machines.items()}
  assert len(mxus["v4"]) == len(mxus["v5e"]) == 4 and len(mxus["v6e"]) == 2
  xlane = {g: m["latency"]["vadd.xlane.f32.U"] for g, m in machines.items()}
  assert xlane == {"v4": 79, "v5e": 115, "v5p": 115, "v6e": 136, "v7x": 141}
  push = {g: m["occupancy"]["vadd.xlane.f32.U -> vadd.xlane.f32.U"] for g, m in machines.items()}
  assert push == {"v4": 8, "v5e": 8, "v5p": 8, "v6e": 4, "v7x": 4}
  matmul = {g: machines[g]["occupancy"]["vmatmul.bf16.gmra.U -> vmatmul.bf16.gmra.U"] for g in ("v4", "v5e", "v5p")}
  assert matmul == {"v4": 16, "v5e": 16, "v5p": 32}


# ---------------------------------------------------------------------------------------------
# the just-in-time scheduler

_TWO_TILES = """%v1 = vld [vmem:[%s9] sm:$0xff]
%v2 = vld [vmem:[%s9 + $0x8] sm:$0xff]
%v3 = vld [vmem:[%s8] sm:$0xff]
%v4 = vld [vmem:[%s8 + $0x8] sm:$0xff]
%v5 = vadd.f32 %v1, %v3
%v6 = vadd.f32 %v2, %v4
%7 = vadd.xlane.f32.xlu0 %v5
%8 = vadd.xlane.f32.xlu0 %v6
%v9 = vpop.xlane.xlu0 %7
%v10 = vpop.xlane.xlu0 %8
%v11 = vmul.f32 %v9, %v5
%v12 = vmul.f32 %v10, %v6
%13 = vst [vmem:[%s9] sm:$0xff] %v11
%14 = vst [vmem:[%s9 + $0x8] sm:$0xff] %v12
"""


def test_memory_ordered_by_address_lets_a_store_pass_other_rows():
  block = probe.blocks(_TWO_TILES)[0]
  by_buffer = probe.dependences(block, lambda op: 1, {})
  by_address = probe.dependences(block, lambda op: 1, {}, by_address=True)
  assert {j for j, _ in by_buffer[12]} == {0, 1, 10}   # every load of %s9 before it
  assert {j for j, _ in by_address[12]} == {0, 10}     # only the load of its rows


def test_the_just_in_time_scheduler_runs_one_tile_at_a_time():
  # Mosaic's order loads both tiles first; the scheduler issues a tile's loads right before their
  # use, pushes it, then the next tile; each pop is followed by its chain down to the store.
  block = probe.blocks(_TWO_TILES)[0]
  latency = lambda op: 79 if "xlane.f32" in op else 1  # noqa: E731
  occupancy = {("vadd.xlane.f32.U", "vadd.xlane.f32.U"): 8, ("vpop.xlane.U", "vpop.xlane.U"): 8}
  preds = probe.dependences(block, latency, occupancy, by_address=True)
  order = probe.just_in_time_order(block, preds, probe.critical_path(block, preds, latency))
  assert [block[i][0] for i in order] == ["%v1", "%v3", "%v5", "%7", "%v2", "%v4", "%v6", "%8",
                                          "%v9", "%v11", "%13", "%v10", "%v12", "%14"]
  assert probe.max_live([block[i][:3] for i in order]) == 3 < probe.max_live([x[:3] for x in block]) == 4


def test_a_units_push_waits_for_the_pop_its_latency_over_its_occupancy_before():
  # A unit that takes a push every 8 cycles and returns it 8 cycles later holds one result in
  # flight: the second push waits for the first pop, whose chain runs to its store first. At 79
  # cycles the bound (10) is above the block's two pushes and the order is jit's.
  block = probe.blocks(_TWO_TILES)[0]
  occupancy = {("vadd.xlane.f32.U", "vadd.xlane.f32.U"): 8, ("vpop.xlane.U", "vpop.xlane.U"): 8}
  for cycles, bound, first_tile in ((79, {}, ["%v1", "%v3", "%v5", "%7"]),
                                    (8, {7: 8}, ["%v1", "%v3", "%v5", "%7", "%v9", "%v11", "%13"])):
    latency = lambda op, c=cycles: c if "xlane.f32" in op else 1  # noqa: E731
    preds = probe.dependences(block, latency, occupancy, by_address=True)
    assert probe.in_flight_bound(block, preds) == bound
    order = probe.just_in_time_order(block, preds, probe.critical_path(block, preds, latency), in_flight=True)
    assert [block[i][0] for i in order][:len(first_tile)] == first_tile
    assert probe.unit_in_flight([block[i][:3] for i in order]) == {"xlu0": 2 if not bound else 1}


def test_llos_first_order_holds_at_most_a_units_latency_over_its_occupancy_in_flight():
  # Each XLU holds at most ceil(latency / occupancy) lane reductions in flight in LLO's first
  # order: 10 on v4 (79 / 8), 15 on v5e and v5p (115 / 8), 31-33 on v7x (141 / 4, 36); fewer where
  # the block has fewer row tiles or other work paces the pushes (RMSNorm + matmul: 5-6).
  _, machines, rows = _recorded()
  most = {}
  for r in rows:
    m = machines[r["gen"]]
    depth = -(-m["latency"]["vadd.xlane.f32.U"] // m["occupancy"]["vadd.xlane.f32.U -> vadd.xlane.f32.U"])
    for unit, n in r["xlu_in_flight"].items():
      assert n <= depth, (r["kind"], r["gen"], unit)
      most[r["gen"]] = max(most.get(r["gen"], 0), n)
  assert most == {"v4": 10, "v5e": 15, "v5p": 15, "v6e": 16, "v7x": 33}
  flight = {(r["kind"], r["gen"], r["params"].get("br")): r["xlu_in_flight"] for r in rows}
  assert flight[("add_rmsnorm_alias", "v4", 256)] == {"xlu0": 10, "xlu1": 10}


def test_bounding_a_units_results_in_flight_against_p():
  # Decided on v4, v5e and v5p, judged once on v6e and v7x. The bound brings add + RMSNorm on v4
  # within 10% of P (1.37 to 0.94 x packed by the longest path, 1.59 to 1.15 x with what loads
  # alone feed sunk) and the running argmax of 512-row blocks closer (0.71 to 0.82 x), but drops
  # RMSNorm + matmul on v5p (0.97 to 0.84 x: LLO interleaves its matmuls, which paces its pushes
  # to 6 a unit) and f32 layer norm backward on v4 (0.906 to 0.892 x) out of 10%: one fewer
  # kernel within 10% on the fitting half, the same on the other. Not kept.
  assert _halves("jit_lat_bound") == {"fit": (24, 12, 7), "held": (10, 6, 1)}
  assert _halves("jit_lat_bound_bundled_cp") == {"fit": (24, 18, 9), "held": (10, 6, 5)}
  assert _halves("jit_lat_bound_sources_sunk") == {"fit": (24, 18, 15), "held": (10, 5, 4)}
  ratio = {(r["kind"], r["gen"], r["params"].get("br"), r["params"].get("d")): {
      name: r["models"][name] / r["pressure"] for name in ("jit_lat_bundled_cp", "jit_lat_bound_bundled_cp")}
      for r in _with_pressure()}
  assert not _within(ratio[("add_rmsnorm_alias", "v4", 256, 512)]["jit_lat_bundled_cp"], 1.0, 0.10)
  assert _within(ratio[("add_rmsnorm_alias", "v4", 256, 512)]["jit_lat_bound_bundled_cp"], 1.0, 0.10)
  assert _within(ratio[("rmsnorm_matmul", "v5p", 512, 2048)]["jit_lat_bundled_cp"], 1.0, 0.05)
  assert not _within(ratio[("rmsnorm_matmul", "v5p", 512, 2048)]["jit_lat_bound_bundled_cp"], 1.0, 0.10)
  lost = [k for k, v in ratio.items() if k[1] in ("v4", "v5e", "v5p") and _within(v["jit_lat_bundled_cp"], 1.0, 0.10)
          and not _within(v["jit_lat_bound_bundled_cp"], 1.0, 0.10)]
  assert sorted(lost) == [("layernorm_bwd", "v4", 256, 512), ("rmsnorm_matmul", "v5p", 512, 2048)]


def _halves(name):
  """Kernels within 10% and within 5% of P, on the half the rule was decided on (v4, v5e, v5p) and
  on the other (v6e, v7x)."""
  out = {}
  for half, gens in (("fit", ("v4", "v5e", "v5p")), ("held", ("v6e", "v7x"))):
    ratios = [r["models"][name] / r["pressure"] for r in _with_pressure() if r["gen"] in gens]
    out[half] = (len(ratios), sum(abs(x - 1) <= 0.10 for x in ratios), sum(abs(x - 1) <= 0.05 for x in ratios))
  return out


def test_the_just_in_time_scheduler_against_p():
  # The rule was decided on v4, v5e and v5p and judged once on v6e and v7x. Over Mosaic's program
  # with loads rematerialized, packed into bundles from a 16-op window in order: within 10% of P on
  # 15 of 24 and 5 of 10 (within 5%: 5 and 4); by the longest path in the window 17 and 5 (5 and
  # 3); 0.60-1.24 x P everywhere; without the bundles 12 and 5 within 10%. No earlier candidate
  # comes within 10% on more than 14 of 34, nor stays within 2 x P on every kernel.
  assert _halves("jit_bundled") == {"fit": (24, 15, 5), "held": (10, 5, 4)}
  assert _halves("jit_bundled_cp") == {"fit": (24, 17, 5), "held": (10, 5, 3)}
  assert _halves("jit") == {"fit": (24, 12, 7), "held": (10, 5, 1)}
  for name in ("jit_bundled", "jit_bundled_cp"):
    ratios = [r["models"][name] / r["pressure"] for r in _with_pressure()]
    assert 0.59 <= min(ratios) and max(ratios) <= 1.25, name
  # With the priority's longest path counting a unit's FIFO step as one cycle: 19 of 24 and 6 of 10
  # (within 5%: 10 and 5), 0.61-1.37 x P; add + RMSNorm on v4 is its worst (1.37), RMSNorm + matmul
  # on v5p moves from 0.60 to 0.97 x P.
  assert _halves("jit_lat") == {"fit": (24, 13, 8), "held": (10, 6, 1)}
  assert _halves("jit_lat_bundled_cp") == {"fit": (24, 19, 10), "held": (10, 6, 5)}
  ratios = {(r["kind"], r["gen"], r["params"].get("br")): r["models"]["jit_lat_bundled_cp"] / r["pressure"]
            for r in _with_pressure()}
  assert 0.60 <= min(ratios.values()) and max(ratios.values()) == ratios[("add_rmsnorm_alias", "v4", 256)] < 1.38
  assert _within(ratios[("rmsnorm_matmul", "v5p", 512)], 1.0, 0.05)
  for name in ("list_cp", "serial_cp", "serial_rp", "demand"):
    assert sum(within for _, within, _ in _halves(name).values()) <= 14, name
    assert max(r["models"][name] / r["pressure"] for r in _with_pressure()) > 2, name


def test_where_the_just_in_time_scheduler_misses_llo_does_too_or_its_graph_differs():
  # Transpose + add (v6e, v7x): LLO's own first order holds 260 of P = 436, as the model's does;
  # the rest is the bundle scheduler's, which the window does not reproduce. RMSNorm + matmul on
  # v5p: the model pushes the weights before the row tiles' reductions, LLO after (0.60 x P).
  rows = _with_pressure()
  for r in (r for r in rows if r["kind"] == "transpose_add"):
    assert r["live_remat"]["cp"] == 260 and _within(r["models"]["jit"], r["live_remat"]["cp"], 0.01)
  rms = next(r for r in rows if r["kind"] == "rmsnorm_matmul" and r["gen"] == "v5p")
  assert rms["models"]["jit_bundled"] < 0.65 * rms["pressure"] < rms["live_remat"]["cp"]


def test_the_window_packer_is_not_llos_bundle_scheduler():
  # Over LLO's own first order it gives P within 10% on 18 of 24 and 5 of 10 in order, 20 and 5 by
  # the longest path (the order alone: 17 and 5), and reaches 1.89 x P: a perfect first scheduler
  # would still miss with these packers.
  assert _halves("llo_order_bundled") == {"fit": (24, 18, 12), "held": (10, 5, 4)}
  assert _halves("llo_order_bundled_cp") == {"fit": (24, 20, 12), "held": (10, 5, 4)}
  assert max(r["models"]["llo_order_bundled"] / r["pressure"] for r in _with_pressure()) > 1.85



_LOADS_EARLY = """
%v0 = vld [vmem:[%s1] sm:$0xff]
%v1 = vld [vmem:[%s1 + $0x8] sm:$0xff]
%v2 = vld [vmem:[%s2] sm:$0xff]
%v3 = vmul.f32 %v2, %v2
%v4 = vmul.f32 %v3, %v2
%v5 = vadd.f32 %v0, %v4
%v6 = vadd.f32 %v5, %v1
%7 = vst [vmem:[%s3] sm:$0xff] %v6
"""


def test_a_sunk_load_is_issued_right_before_its_first_use():
  # Packed from the window the loads issue in the first two bundles and %v0 and %v1 wait for the
  # multiplies; sunk, each follows them, as LLO's bundles place loads 0-2 bundles before use.
  block = probe.blocks(_LOADS_EARLY)[0]
  slots = {"vld": 2, "valu": 1, "vst": 1}
  packed = probe.bundled(block, lambda op: 1, {}, slots)
  sunk = probe.bundled_sunk(block, lambda op: 1, {}, slots)
  assert [block[i][0] for i in packed] == ["%v0", "%v1", "%v2", "%v3", "%v4", "%v5", "%v6", "%7"]
  assert [block[i][0] for i in sunk] == ["%v2", "%v3", "%v0", "%v4", "%v1", "%v5", "%v6", "%7"]
  assert probe.max_live([block[i][:3] for i in sunk]) == 3 < probe.max_live([block[i][:3] for i in packed]) == 4


def test_llos_bundle_scheduler_issues_loads_at_their_use_and_looks_far_ahead():
  # Over the 37 kernels: a load 1-3 bundles before its first reader (load latency 1), a store 1-5
  # bundles after its value's definition but where an MXU accumulator's stores wait on memory order
  # (the v4 dequant matmuls), an XLU push 1-4 after its operand but in transpose + add (50). Loads
  # move earlier in the order (none later on 36 kernels) and stores later (none earlier on 34). A bundle
  # reaches 64-9402 ops past the oldest op not yet issued (median per kernel 0-2036): no window.
  rows = _recorded()[2]
  assert len(rows) == 37
  moves = [((r["kind"], r["gen"], r["params"].get("bm")), r["bundle_moves"]) for r in rows]
  assert all(1 <= m["load_to_use"] <= 3 for _, m in moves)
  late_stores = [k for k, m in moves if not 1 <= m["store_after_operand"] <= 5]
  assert late_stores == [("dequant_i8_matmul", "v4", 128), ("dequant_i8_matmul", "v4", 512)]
  pushes = [(k, m["xlu_push_after_operand"]) for k, m in moves if "xlu_push_after_operand" in m]
  assert [k for k, d in pushes if not 1 <= d <= 4] == [("transpose_add", "v6e", 1024), ("transpose_add", "v7x", 1024)]
  assert sum(m["shift_load"] <= 0 for _, m in moves) == 36
  assert sum(m["shift_store"] >= 0 for _, m in moves) == 34
  assert min(m["lookahead_max"] for _, m in moves) == 64 > probe.BUNDLE_WINDOW
  assert max(m["lookahead_max"] for _, m in moves) == 9402
  assert sorted(m["lookahead_median"] for _, m in moves)[::36] == [0, 2036]


def test_loads_sunk_to_their_use_do_not_make_the_window_llos_bundle_scheduler():
  # Decided on v4, v5e and v5p, judged once on v6e and v7x. Over LLO's own first order: 18 of 24
  # within 10% of P (14 within 5%) and 5 of 10 (4), as the window alone (18 (12), 5 (4)), up to
  # 1.89 x P; after the jit stage 15 (7) and 5 (3), after jit_lat 16 (9) and 6 (4), against 19 (10)
  # and 6 (5) for jit_lat_bundled_cp.
  assert _halves("llo_order_sunk") == {"fit": (24, 18, 14), "held": (10, 5, 4)}
  assert _halves("jit_sunk") == {"fit": (24, 15, 7), "held": (10, 5, 3)}
  assert _halves("jit_lat_sunk") == {"fit": (24, 16, 9), "held": (10, 6, 4)}
  assert max(r["models"]["llo_order_sunk"] / r["pressure"] for r in _with_pressure()) > 1.85
  ratios = [r["models"]["jit_sunk"] / r["pressure"] for r in _with_pressure()]
  assert 0.59 <= min(ratios) and max(ratios) <= 1.24


def test_the_whole_block_listed_with_loads_sunk_is_not_llos_bundle_scheduler():
  # The rule read off the bundles in full (no window, loads sunk): within 10% of P on 11 of 24 and
  # 3 of 10 over LLO's first order (7 and 3 within 5%), 9 and 5 after jit (6 and 3), up to 2.64 and
  # 2.88 x P on the fitting half, 4.53 on the other: ready vector work issues far ahead on the MXU
  # bodies. It does raise transpose + add on v6e to 0.90 x P (LLO's first order: 260 of 436).
  assert _halves("llo_order_listed") == {"fit": (24, 11, 7), "held": (10, 3, 3)}
  assert _halves("jit_listed") == {"fit": (24, 9, 6), "held": (10, 5, 3)}
  rows = _with_pressure()
  fit = [r for r in rows if r["gen"] in ("v4", "v5e", "v5p")]
  assert max(r["models"]["llo_order_listed"] / r["pressure"] for r in fit) > 2.6
  assert max(r["models"]["jit_listed"] / r["pressure"] for r in fit) > 2.85
  assert max(r["models"]["llo_order_listed"] / r["pressure"] for r in rows) > 4.5
  turned = next(r for r in rows if r["kind"] == "transpose_add" and r["gen"] == "v6e")
  assert turned["models"]["llo_order_listed"] == 392 and turned["live_remat"]["cp"] == 260


_FED_BY_LOADS = """
%v0 = vld [vmem:[%s1] sm:$0xff]
%v1 = vld [vmem:[%s2] sm:$0xff]
%v2 = vmul.f32 %v1, %v1
%v3 = vadd.f32 %v1, %v1
%v4 = vadd.f32 %v2, %v3
%5 = vmatmul.bf16.gmra.mxu0 %v0
%v6 = vpop.f32.mrf.mxu0
%v7 = vadd.f32 %v6, %v4
%8 = vst [vmem:[%s3] sm:$0xff] %v7
"""


def test_ops_fed_by_loads_alone_are_sunk_to_their_reader_into_free_slots():
  # %v2-%v4 are computed from a load alone; %v7 reads the MXU's result. Packed top-down they issue
  # at once and wait for the pop; sunk, each lies in the latest bundle before its reader with a
  # free VALU slot (one a bundle here: %v3 right before %v4, %v2 one earlier), and the load before
  # them: one value fewer live.
  block = probe.blocks(_FED_BY_LOADS)[0]
  occupancy = {("vmatmul.bf16.gmra.U", "vpop.f32.mrf.U"): 5}
  preds = probe.dependences(block, lambda op: 1, occupancy, by_address=True)
  assert probe.source_ops(block, preds) == [True] * 5 + [False] * 4
  slots = {"vld": 2, "valu": 1, "vst": 1, "mxu0:mul": 1, "mxu0:pop": 1}
  loads = probe.bundled_sunk(block, lambda op: 1, occupancy, slots, None)
  sources = probe.bundled_sunk(block, lambda op: 1, occupancy, slots, None, sources=True)
  assert [block[i][0] for i in loads] == ["%v0", "%v1", "%v2", "%5", "%v3", "%v4", "%v6", "%v7", "%8"]
  assert [block[i][0] for i in sources] == ["%v0", "%5", "%v1", "%v2", "%v3", "%v4", "%v6", "%v7", "%8"]
  assert probe.max_live([block[i][:3] for i in sources]) == 2 < probe.max_live([block[i][:3] for i in loads]) == 3


def test_llos_bundles_issue_what_loads_alone_feed_right_before_its_reader():
  # No count of first-order places bounds the issue-ahead: the ops other than memory ops and the
  # vector ops fed by loads alone still lie up to 17-9404 places past the first such op not yet
  # issued. What stays bounded is each op's distance to its reader or its operands: an op fed by
  # loads alone 1-5 bundles before its first reader (median per kernel) but on transpose + add
  # (63: its turned block's unpacks fill free VALU slots), the other pulled vector ops 1-7
  # bundles after their latest operand but on v6e's manual DMA (14).
  rows = _recorded()[2]
  lead = [((r["kind"], r["gen"]), r["source_lead"]) for r in rows]
  assert len(lead) == 37
  outside = [k for k, s in lead if not 1 <= s["source_to_reader"][0] <= 5]
  assert outside == [("transpose_add", "v6e"), ("transpose_add", "v7x")]
  assert sum(s["source_to_reader"][1] <= 21 for _, s in lead) == 32
  after = [(k, s["pulled_after_operand"]) for k, s in lead if s["pulled_after_operand"] is not None]
  assert len(after) == 34 and [k for k, d in after if not 1 <= d <= 7] == [("manual_dma", "v6e")]
  ahead = sorted(s["other_lookahead_max"] for _, s in lead)
  assert ahead[0] == 17 and ahead[-1] == 9404 and ahead[0] > probe.BUNDLE_WINDOW


def test_sinking_what_loads_alone_feed_against_p():
  # Decided on v4, v5e and v5p (the window among 32-1024 and the whole block), judged once on v6e
  # and v7x: after jit_lat, 19 of 24 within 10% of P (17 within 5%) and 5 of 10 (4), 0.61-1.73 x
  # P, against 19 (10) and 6 (5) for jit_lat_bundled_cp; over LLO's own first order 19 (16) and
  # 4 (4). The MXU bodies the whole-block listing raised to 2.4-4.3 x P come within 5%.
  assert _halves("jit_lat_sources_sunk") == {"fit": (24, 19, 17), "held": (10, 5, 4)}
  assert _halves("jit_sources_sunk") == {"fit": (24, 17, 13), "held": (10, 6, 5)}
  assert _halves("llo_order_sources_sunk") == {"fit": (24, 19, 16), "held": (10, 4, 4)}
  rows = _with_pressure()
  ratios = {(r["kind"], r["gen"], r["params"].get("br")): r["models"]["jit_lat_sources_sunk"] / r["pressure"]
            for r in rows}
  assert 0.60 < min(ratios.values()) == ratios[("running_argmax", "v4", 512)]
  assert max(ratios.values()) == ratios[("online_lse", "v7x", 512)] < 1.74
  fit = [v for k, v in ratios.items() if k[1] in ("v4", "v5e", "v5p")]
  assert max(fit) == ratios[("add_rmsnorm_alias", "v4", 256)] < 1.60
  for r in rows:
    if r["kind"] in ("block_sparse_matmul", "swiglu_mlp_buf1") or (r["kind"], r["gen"]) == ("dequant_i8_matmul", "v5e"):
      assert r["models"]["jit_listed"] > 2.3 * r["pressure"]
      assert _within(r["models"]["jit_lat_sources_sunk"], r["pressure"], 0.05)


def test_the_passes_between_the_schedulers_keep_the_first_orders_live_values():
  # Load CSE, load/store optimization, reassociation and late decomposition run between the two
  # schedulers; the listing the bundle scheduler reads holds what the first order holds (loads
  # rematerialized) on 34 of 37 kernels. On SwiGLU on v7x they take it from 676 to 437 (P = 360).
  rows = _recorded()[2]
  moved = {(r["kind"], r["gen"]): (r["live_remat"]["cp"], r["live_remat"]["pre_vliw"]) for r in rows
           if r["live_remat"]["pre_vliw"] != r["live_remat"]["cp"]}
  assert len(rows) - len(moved) == 34
  assert moved == {("decode_attention", "v6e"): (274, 273), ("dwconv1d", "v4"): (42, 50),
                   ("swiglu_mlp", "v7x"): (676, 437)}
