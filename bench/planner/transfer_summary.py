"""Totals of every recorded H200 transfer run (issue 19's targets, docs/validation/planner-h200-transfer.md):
reads the judgements compare_transfer.py recorded in tests/data/planner/h200-transfer*/ and counts,
per protocol and plan set, the rows whose planner top-1 measured within 10% of the best and the rows
whose measured best was among the planner's first five.

    python3 bench/planner/transfer_summary.py [--data tests/data/planner] [--json OUT.json]

Protocols: "bursts" judges each run's comparison.json (do_bench as Triton's autotuner times);
"steady state" replaces a run's Triton rows by those of comparison-steady.json where the run timed
them in the steady state (runs without a steady-state sweep are left out of that total). Plan sets:
"model alone" (comparison*.json) and "H100 residuals" (comparison*-residuals.json, the runs planned
with them before timing).
"""
import argparse
import glob
import json
import os

from compare_transfer import TOP1_TARGET, TOP5_TARGET

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _rows(path):
    if not os.path.exists(path):
        return None
    return {(r["kernel"], r["dtype"], r["shape"]): r for r in json.load(open(path))}


def run_rows(run_dir, suffix, steady):
    """The judged rows of one run, or None when the run lacks that judgement: the burst file, with
    the steady-state file's rows replacing the burst rows they share when `steady`."""
    rows = _rows(os.path.join(run_dir, f"comparison{suffix}.json"))
    if rows is None or not steady:
        return rows
    steady_rows = _rows(os.path.join(run_dir, f"comparison-steady{suffix}.json"))
    if steady_rows is None:
        return None
    return {**rows, **steady_rows}


def totals(data_dir):
    """Per plan set, protocol and kernel ("all" for both kernels together): the runs judged, the rows,
    the rows with the top-1 within 10% of the best and those with the best in the top 5."""
    runs = sorted(glob.glob(os.path.join(data_dir, "h200-transfer*-20*")),
                  key=lambda d: int(os.path.basename(d).split("-")[1][len("transfer"):] or 1))
    out = []
    for plans, suffix in (("model alone", ""), ("H100 residuals", "-residuals")):
        for protocol, steady in (("bursts", False), ("steady state", True)):
            by_run = {os.path.basename(run): judged for run in runs
                      if (judged := run_rows(run, suffix, steady)) is not None}
            for kernel in ("all", "triton", "cuda_gemm"):
                # the runs that judged rows of this kernel, and those rows
                mine = {name: [r for r in judged.values() if kernel in ("all", r["kernel"])]
                        for name, judged in by_run.items()}
                names = [name for name, rows in mine.items() if rows]
                rows = [r for name in names for r in mine[name]]
                out.append({"plans": plans, "protocol": protocol, "kernel": kernel, "runs": names,
                            "rows": len(rows), "top1_within_10pct": sum(r["top1_vs_best"] <= 1.10 for r in rows),
                            "best_in_top5": sum(bool(r["best_in_top5"]) for r in rows)})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "planner"))
    parser.add_argument("--json")
    args = parser.parse_args()
    result = totals(args.data)
    print("| plans | protocol | kernel | runs | rows | top-1 within 10% | best in top 5 |")
    print("|---|---|---|---|---|---|---|")

    def cell(count, n, target):
        return f"{count} ({100 * count / max(n, 1):.1f}%{', met' if n and count >= target * n else ''})"

    for t in result:
        n = t["rows"]
        print(f"| {t['plans']} | {t['protocol']} | {t['kernel']} | {len(t['runs'])} | {n} | "
              f"{cell(t['top1_within_10pct'], n, TOP1_TARGET)} | {cell(t['best_in_top5'], n, TOP5_TARGET)} |")
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
