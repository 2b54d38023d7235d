"""bench/planner/compare_transfer.py: the judgement of plans committed before an H200 run
(docs/validation/planner-h200-transfer.md) regenerated from the recorded timings."""
import gzip
import json
import subprocess
import sys

import pytest


def _compare(repo, tmp_path, *timing_args, plans_name="planner-h200-transfer3-plans-2026-11-26.json.gz"):
    out = tmp_path / "comparison.json"
    plans = repo / "tests/data/planner" / plans_name
    text = subprocess.run([sys.executable, str(repo / "bench/planner/compare_transfer.py"), str(plans), *timing_args,
                           "--tolerance", "0.003", "--json", str(out)], check=True, capture_output=True, text=True).stdout
    return text, json.loads(out.read_text())


def test_steady_state_sweeps_of_two_dtypes_join_into_one_judgement(repo, tmp_path):
    run = repo / "tests/data/planner/h200-transfer3-2026-11-26"
    text, rows = _compare(repo, tmp_path, "--triton", str(run / "triton-steady-f16.json.gz"),
                          "--triton", str(run / "triton-steady-f32.json.gz"))
    assert sorted({r["dtype"] for r in rows}) == ["f16", "f32"] and len(rows) == 8
    assert rows == json.loads((run / "comparison-steady.json").read_text())
    assert "best in the top 5 on 8 (100%" in text


def test_burst_judgement_matches_the_recorded_one(repo, tmp_path):
    run = repo / "tests/data/planner/h200-transfer3-2026-11-26"
    _, rows = _compare(repo, tmp_path, "--triton", str(run / "triton-sweep.json.gz"),
                       "--cuda-gemm", str(run / "cuda-gemm-timing.json.gz"))
    assert rows == json.loads((run / "comparison.json").read_text())
    assert sum(r["best_in_top5"] for r in rows) == 9 and sum(r["top1_vs_best"] <= 1.10 for r in rows) == 15


@pytest.mark.parametrize("run, date, top1, top5", [
    (4, "2026-11-27", (16, 16), (14, 15)),
    (6, "2026-11-27", (15, 16), (13, 13)),
])
def test_steady_run_with_and_without_the_h100_residuals(repo, tmp_path, run, date, top1, top5):
    # Both plan files were committed before the run timed anything; the steady-state Triton rows
    # (f16 and f32) and the CUDA GEMM rows, judged as recorded: (model alone, with residuals)
    folder = repo / f"tests/data/planner/h200-transfer{run}-{date}"
    timings = ("--triton", str(folder / "triton-steady-f16.json.gz"), "--triton", str(folder / "triton-steady-f32.json.gz"),
               "--cuda-gemm", str(folder / "cuda-gemm-timing.json.gz"))
    for i, (plans, recorded) in enumerate(((f"planner-h200-transfer{run}-plans-{date}.json.gz", "comparison-steady.json"),
                                            (f"planner-h200-transfer{run}-plans-calibrated-residuals-{date}.json.gz",
                                             "comparison-steady-residuals.json"))):
        _, rows = _compare(repo, tmp_path, *timings, plans_name=plans)
        assert rows == json.loads((folder / recorded).read_text())
        assert len(rows) == 16
        assert sum(r["top1_vs_best"] <= 1.10 for r in rows) == top1[i] and sum(r["best_in_top5"] for r in rows) == top5[i]


def test_fifth_run_with_and_without_the_h100_residuals(repo, tmp_path):
    # f16 from the bursts, f32 from the steady state (the run timed only f32 in the steady state)
    run = repo / "tests/data/planner/h200-transfer5-2026-11-27"
    with gzip.open(run / "triton-sweep.json.gz", "rt") as f:
        sweep = json.load(f)
    sweep["timings"] = [t for t in sweep["timings"] if t["dtype"] == "f16"]
    f16 = tmp_path / "f16-bursts.json"
    f16.write_text(json.dumps(sweep))
    timings = ("--triton", str(f16), "--triton", str(run / "triton-steady-f32.json.gz"),
               "--cuda-gemm", str(run / "cuda-gemm-timing.json.gz"))
    for plans, recorded, top1, top5 in (("planner-h200-transfer5-plans-2026-11-27.json.gz", "comparison-steady.json", 15, 15),
                                        ("planner-h200-transfer5-plans-calibrated-residuals-2026-11-27.json.gz",
                                         "comparison-steady-residuals.json", 16, 15)):
        _, rows = _compare(repo, tmp_path, *timings, plans_name=plans)
        assert rows == json.loads((run / recorded).read_text())
        assert sum(r["top1_vs_best"] <= 1.10 for r in rows) == top1 and sum(r["best_in_top5"] for r in rows) == top5


def test_totals_over_every_run_are_the_documented_ones(repo, tmp_path):
    out = tmp_path / "totals.json"
    subprocess.run([sys.executable, str(repo / "bench/planner/transfer_summary.py"), "--json", str(out)], check=True,
                   capture_output=True)
    totals = {(t["plans"], t["protocol"], t["kernel"]): (len(t["runs"]), t["rows"], t["top1_within_10pct"],
                                                          t["best_in_top5"]) for t in json.loads(out.read_text())}
    assert totals[("model alone", "bursts", "all")] == (7, 104, 96, 68)
    assert totals[("model alone", "bursts", "triton")] == (6, 48, 40, 25)
    assert totals[("model alone", "steady state", "all")] == (6, 92, 87, 75)
    assert totals[("H100 residuals", "steady state", "triton")] == (4, 28, 28, 26)
    assert totals[("H100 residuals", "steady state", "cuda_gemm")] == (4, 32, 32, 28)
