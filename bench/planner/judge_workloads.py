"""Judges planner rankings of the real-workload suite against its timings (issue 34).

    python3 bench/planner/judge_workloads.py PLANS.json TIMINGS.json [TIMINGS.json ...] [--json OUT]

PLANS.json: bench/planner/make_workload_plans.py's file (the rankings, fastest first, of every
family graph it planned). TIMINGS.json: bench/planner/sweep_workloads.py's files (.json or .gz).
Per (row, dtype), for the families the plan ranks: the measured best over every timed
configuration of those families, the plan's top-1 against it, and the best of its top 5 (timed
configurations only; a ranked configuration that was not timed is skipped, and one Triton refused
counts as what a user would hit: it is listed). Reported separately for the fit and the held-out
part, and beside the anchors (cuBLAS, SDPA) of the same run. A row the sweep's budget stopped in
(its notes name it) and no later file timed again is judged on the configurations it timed and
counted partial ("partial_rows"; --detail marks it). With --shortlist the top 5 is the first
five of the planner's autotuning shortlist (make_workload_plans.py records it beside the ranking);
the top-1 is the ranking's first either way.
"""
import argparse
import ast
import collections
import json
import re

from compare_plan import load_json as load
from workloads import PARTS, suite

KIND_OF_FAMILY = {"triton_matmul": "matmul", "triton_matmul_splitk": "splitk", "triton_attention": "attention",
                  "gemm": "cuda_gemm"}
# gemm-timing's files (bench/planner/time_cuda_gemm_workloads.py) name no kind: the CUDA GEMM's.
DEFAULT_KIND = "cuda_gemm"
PLAIN = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS", "SPLIT_K"]


def cfg_key(kind, cfg):
    return (kind,) + tuple(cfg.get(n) for n in PLAIN + ["HEAD_DIM"] if n in cfg and n != "HEAD_DIM")


def row_key(r):
    if "BATCH_HEADS" in r:
        return ("attention", r["BATCH_HEADS"], r["N_CTX"], r["HEAD_DIM"], "f16")
    return ("matmul", r["M"], r["N"], r["K"], r["dtype"])


# What timing files hold: times[row][config] and bench_s[row][config] (the do_bench median in ms
# and the wall seconds the benchmark took), anchors[row][kind] in ms, and
# compile_s[(dtype, head_dim, heads)][config] (head dim and heads None outside attention: the
# JIT's specialization the sweep compiled for); partial: the rows whose last timing file's budget
# stopped during them (its notes say so), judged on the configurations it timed.
Measured = collections.namedtuple("Measured", "times bench_s anchors compile_s partial")

STOPPED = re.compile(r"timing stopped at the budget during \w+ (\{.*\})")


def stopped_rows(run):
    """The row keys a sweep's budget stopped during (sweep_workloads.py's note), in each dtype it
    swept."""
    out = set()
    for note in run.get("notes", []):
        match = STOPPED.search(note) if isinstance(note, str) else None
        if not match:
            continue
        row = ast.literal_eval(match.group(1))
        for dtype in run.get("dtypes", ["f16"]) if "M" in row else ["f16"]:
            out.add(row_key(dict(row, dtype=dtype)))
    return out


def measured(timing_files):
    m = Measured({}, {}, {}, {}, set())
    for path in timing_files:
        run = load(path)
        timed_here = set()
        for t in run["timings"]:
            if "ms" not in t:
                continue
            rk = row_key(t)
            timed_here.add(rk)
            ck = cfg_key(t.get("kind", DEFAULT_KIND), t["config"])
            m.times.setdefault(rk, {})[ck] = t["ms"]
            m.bench_s.setdefault(rk, {})[ck] = t.get("bench_s", 0.0)
        stopped = stopped_rows(run)
        m.partial.difference_update(timed_here - stopped)
        m.partial.update(stopped & timed_here)
        for a in run.get("anchors", []):
            m.anchors.setdefault(row_key(a), {})[a["kind"]] = a["ms"]
        for c in run["compiled"].values():
            spec = (c["dtype"], c.get("head_dim"), c.get("heads"))
            if "compile_s" in c:
                m.compile_s.setdefault(spec, {})[cfg_key(c["kind"], c["config"])] = c["compile_s"]
    return m


def owned_rows(rows):
    """{(part, row_key)}: the rows the suite gives each part. A plan file written before the suite
    kept one row per attention shape may hold a later part's copy of an earlier part's shape; it
    is judged with the part that owns the shape, not again."""
    return {(r["part"], row_key(dict(r, dtype=dtype)))
            for section in ("matmul", "attention") for r in rows[section] for dtype in rows["dtypes"][section]}


def judge_row(ranking, row_times, top=5, top_list=None):
    """(top-1 ms, best of top 5 ms, best ms, rank of best, timed kinds) over the ranked families;
    the top 5 of `top_list` (the shortlist) where given, else of the ranking."""
    kinds = {KIND_OF_FAMILY[f] for f, _, _ in ranking}
    pool = {k: v for k, v in row_times.items() if k[0] in kinds}
    if not pool:
        return None

    def timed_of(entries):
        return [pool[cfg_key(KIND_OF_FAMILY[f], p)] for f, p, _ in entries if cfg_key(KIND_OF_FAMILY[f], p) in pool]
    best = min(pool.values())
    timed = timed_of(ranking)
    if not timed:
        return None
    # The measured best may be one the plan pruned (a compiler's spills, say): then it ranks after all.
    rank_best = next((i for i, ms in enumerate(timed) if ms <= best * 1.0000001), len(timed))
    top_timed = timed_of(top_list) if top_list is not None else timed
    return {"top1": timed[0], "top5": min(top_timed[:top]), "best": best, "rank_of_best": rank_best + 1,
            "timed_ranked": len(timed), "timed": len(pool)}


def summarize(rows):
    n = len(rows)
    t1 = sum(r["top1"] <= 1.10 * r["best"] for r in rows)
    t5 = sum(r["top5"] <= 1.03 * r["best"] for r in rows)
    worst = max((r["top1"] / r["best"] for r in rows), default=float("nan"))
    return {"rows": n, "top1_within_10": t1, "top5_within_3": t5, "worst_top1": worst}


def family_choice(section, part, plan_rows, times):
    """Where the plan ranks several families and the row timed more than one: how often its top-1
    is of the family whose measured best is faster, and what a wrong choice costs (the chosen
    family's best over the faster family's)."""
    right, costs = 0, []
    for r in plan_rows:
        rk = row_key(r)
        kinds = {KIND_OF_FAMILY[f] for f, _, _ in r["ranking"]}
        if r["part"] != part or len(kinds) < 2 or rk not in times:
            continue
        best = {k: min((ms for ck, ms in times[rk].items() if ck[0] == k), default=None) for k in kinds}
        if any(v is None for v in best.values()):
            continue
        chosen = KIND_OF_FAMILY[r["ranking"][0][0]]
        faster = min(best, key=best.get)
        right += chosen == faster
        costs.append(best[chosen] / best[faster])
    if costs:
        print(f"{section:9} {part:8} family choice: the faster family on {right} of {len(costs)} rows; a wrong one "
              f"costs at most {max(costs):.2f}x, over 1.10x on {sum(c > 1.10 for c in costs)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plans")
    p.add_argument("timings", nargs="+")
    p.add_argument("--json", default=None)
    p.add_argument("--detail", action="store_true")
    p.add_argument("--shortlist", action="store_true",
                   help="judge the top 5 of each row's autotuning shortlist (the plan's 'shortlist') in place of "
                        "its ranking's")
    p.add_argument("--suite", default=None,
                   help="rows beside the suite, in workload-suite.json's form (make_workload_plans.py --suite); "
                        "their parts are judged in their order")
    args = p.parse_args()
    plans = load(args.plans)
    times, _, anchors, _, partial = measured(args.timings)
    rows_of_suite = load(args.suite) if args.suite else suite()
    owned = owned_rows(rows_of_suite)
    parts = list(dict.fromkeys(r["part"] for r in rows_of_suite["matmul"] + rows_of_suite["attention"])) \
        if args.suite else PARTS
    out = {}
    for section in ("matmul", "attention"):
        for part in parts:
            rows = []
            for r in plans.get(section, []):
                if r["part"] != part:
                    continue
                rk = row_key(r)
                if rk not in times or (part, rk) not in owned:
                    continue
                j = judge_row(r["ranking"], times[rk], top_list=r["shortlist"] if args.shortlist else None)
                if j is None:
                    continue
                anchor = anchors.get(rk, {})
                j.update(row=rk, model=r["model"], layer=r.get("layer"), anchors=anchor)
                rows.append(j)
                if args.detail:
                    a = next(iter(anchor.values()), None)
                    print(f"{part:8} {str(rk):38} top1 {j['top1'] / j['best']:.2f}x top5 {j['top5'] / j['best']:.2f}x "
                          f"rank {j['rank_of_best']:3}/{j['timed_ranked']}  best {j['best'] * 1e3:8.1f} us"
                          + (f"  anchor {a / j['best']:.2f}x of best" if a else "")
                          + (f"  partial: the budget stopped it after {j['timed']} timed" if rk in partial else ""))
            family_choice(section, part, plans.get(section, []), times)
            for dtype in sorted({r["row"][-1] for r in rows}):
                s = summarize([r for r in rows if r["row"][-1] == dtype])
                s["partial_rows"] = sum(r["row"] in partial for r in rows if r["row"][-1] == dtype)
                out[f"{section} {part} {dtype}"] = s
                print(f"{section:9} {part:8} {dtype}: rows {s['rows']:3}  top-1 within 10%: {s['top1_within_10']:3}  "
                      f"top-5 best within 3%: {s['top5_within_3']:3}  worst top-1 {s['worst_top1']:.2f}x"
                      + (f"  ({s['partial_rows']} partial)" if s["partial_rows"] else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
