"""bench/planner/compare_transfer.py: the judgement of plans committed before an H200 run
(docs/validation/planner-h200-transfer.md) regenerated from the recorded timings."""
import json
import subprocess
import sys


def _compare(repo, tmp_path, *timing_args):
    out = tmp_path / "comparison.json"
    plans = repo / "tests/data/planner/planner-h200-transfer3-plans-2026-11-26.json"
    text = subprocess.run([sys.executable, str(repo / "bench/planner/compare_transfer.py"), str(plans), *timing_args,
                           "--tolerance", "0.003", "--json", str(out)], check=True, capture_output=True, text=True).stdout
    return text, json.loads(out.read_text())


def test_steady_state_sweeps_of_two_dtypes_join_into_one_judgement(repo, tmp_path):
    run = repo / "tests/data/planner/h200-transfer3-2026-11-26"
    text, rows = _compare(repo, tmp_path, "--triton", str(run / "triton-steady-f16.json"),
                          "--triton", str(run / "triton-steady-f32.json"))
    assert sorted({r["dtype"] for r in rows}) == ["f16", "f32"] and len(rows) == 8
    assert rows == json.loads((run / "comparison-steady.json").read_text())
    assert "best in the top 5 on 8 (100%" in text


def test_burst_judgement_matches_the_recorded_one(repo, tmp_path):
    run = repo / "tests/data/planner/h200-transfer3-2026-11-26"
    _, rows = _compare(repo, tmp_path, "--triton", str(run / "triton-sweep.json"),
                       "--cuda-gemm", str(run / "cuda-gemm-timing.json"))
    assert rows == json.loads((run / "comparison.json").read_text())
    assert sum(r["best_in_top5"] for r in rows) == 9 and sum(r["top1_vs_best"] <= 1.10 for r in rows) == 15
