"""Keeps the Nsight Compute metrics this GPU knows: reads a comma-separated list and
`ncu --query-metrics` output, prints the known ones comma-separated and names the others on
stderr, so that one unknown name does not end a profiling run.

    python3 ncu_metrics_known.py "m1.sum,m2.avg.pct_of_peak_sustained_active" QUERY.txt
"""
import re
import sys


def known(metrics, query_text):
    bases = {line.split()[0] for line in query_text.splitlines() if re.match(r"^[a-z]\w*__\w+", line)}
    kept, dropped = [], []
    for m in metrics:
        # launch__ figures are the launch's attributes, which --query-metrics does not list.
        (kept if m.startswith("launch__") or m.split(".")[0] in bases else dropped).append(m)
    return kept, dropped


if __name__ == "__main__":
    wanted = [m for m in sys.argv[1].split(",") if m]
    kept, dropped = known(wanted, open(sys.argv[2]).read())
    if not kept:  # the query's output is not the listing this reads: let ncu judge the names
        print("ncu --query-metrics gave no metric this list names; keeping them all", file=sys.stderr)
        kept, dropped = wanted, []
    for m in dropped:
        print(f"not on this GPU: {m}", file=sys.stderr)
    print(",".join(kept))
