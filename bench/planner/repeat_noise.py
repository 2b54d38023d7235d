"""How far two timings of the same rows on the GPU machine disagree, and which of the planner's
verdicts (top-1 within 10%, the top 5's best within 3%) that moves (issue 34).

    python3 bench/planner/repeat_noise.py PLANS.json[.gz] --first A.json[.gz] ... --again B.json[.gz] ...

PLANS is make_workload_plans.py's file (the rankings judged); --first and --again are
sweep_workloads.py files timing the same matmul rows twice. For each dtype it prints:
* every configuration timed in both runs: the second run's time over the first's (median, 5th-95th
  percentile): how much the machine moved between the runs;
* each configuration within 10% of its row's best in the first run: its time over its row's best
  in the second run against the same in the first (5th-95th percentile, how many moved by more
  than 2% and 3%): the noise of the figure the top-5 target judges;
* how often the two runs time the same configuration fastest, and how far the first run's
  fastest lies from the second run's best;
* the rows whose verdicts differ between the runs.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from judge_workloads import cfg_key, load, measured  # noqa: E402


def quantile(values, q):
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def compare_dtype(plans, first, again, dtype):
    moved, near_best, same_best, first_best_again, flips = [], [], 0, [], []
    rows = 0
    for row in plans["matmul"]:
        key = ("matmul", row["M"], row["N"], row["K"], dtype)
        if row["dtype"] != dtype or key not in first.times or key not in again.times:
            continue
        rows += 1
        a = {k[1:]: v for k, v in first.times[key].items()}
        b = {k[1:]: v for k, v in again.times[key].items()}
        common = [k for k in a if k in b]
        best_a, best_b = min(a[k] for k in common), min(b[k] for k in common)
        moved += [b[k] / a[k] for k in common]
        near_best += [(b[k] / best_b) / (a[k] / best_a) for k in common if a[k] < 1.10 * best_a]
        fastest_a = min(common, key=lambda k: a[k])
        same_best += fastest_a == min(common, key=lambda k: b[k])
        first_best_again.append(b[fastest_a] / best_b)
        ranked = [cfg_key("matmul", c)[1:] for family, c, _ in row["ranking"] if family == "triton_matmul"]
        top5 = [k for k in ranked if k in a and k in b][:5]
        if not top5:
            continue
        verdicts = []
        for t, best in ((a, best_a), (b, best_b)):
            verdicts.append((t[top5[0]] / best, min(t[k] for k in top5) / best))
        (t1a, t5a), (t1b, t5b) = verdicts
        if (t1a <= 1.10) != (t1b <= 1.10) or (t5a <= 1.03) != (t5b <= 1.03):
            flips.append(f"{key[1]} x {key[2]} x {key[3]}: top-1 {t1a:.4f} -> {t1b:.4f}, "
                         f"top 5's best {t5a:.4f} -> {t5b:.4f}")
    if not rows:
        return
    print(f"{dtype}: {rows} rows, {len(moved)} configurations timed in both runs")
    print(f"  second run / first: median {quantile(moved, .5):.3f}, 5-95% {quantile(moved, .05):.3f}-"
          f"{quantile(moved, .95):.3f}")
    print(f"  within 10% of the best ({len(near_best)}), time over the row's best, second run / first: "
          f"5-95% {quantile(near_best, .05):.3f}-{quantile(near_best, .95):.3f}; moved > 2%: "
          f"{sum(abs(x - 1) > .02 for x in near_best)}, > 3%: {sum(abs(x - 1) > .03 for x in near_best)}")
    print(f"  the same configuration fastest in both: {same_best} of {rows}; the first run's fastest in the "
          f"second: median {quantile(first_best_again, .5):.3f}, worst {max(first_best_again):.3f}")
    for flip in flips:
        print(f"  verdict differs: {flip}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plans")
    p.add_argument("--first", nargs="+", required=True)
    p.add_argument("--again", nargs="+", required=True)
    args = p.parse_args()
    plans = load(args.plans)
    first, again = measured(args.first), measured(args.again)
    for dtype in sorted({row["dtype"] for row in plans["matmul"]}):
        compare_dtype(plans, first, again, dtype)


if __name__ == "__main__":
    main()
