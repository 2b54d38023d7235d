"""Times the CUDA backend's GEMM (backends/cuda/gemm_kernels.cu, models/graphs/gemm.pbtxt) on the
real-workload suite (tests/data/planner/workload-suite.json) on the GPU machine (issue 34).

    python3 bench/planner/time_cuda_gemm_workloads.py SCRATCHSIM_CUDA OUT.json [--launches N]
        [--part PART] [--regime decode|prefill] [--chunk I/N] [--append]

One `scratchsim_cuda gemm-timing` run per (part, regime) of the suite over the space
make_workload_plans.py --kernel cuda_gemm ranks (CUDA_GEMM_SPACE: split-K for decode rows, depths
2-4 for prefill); every timing is tagged with its row's "part" and "regime" and the runs are merged
into OUT.json (the fixture planner_quality_test reads, gzipped); gemm-timing's log (one line a
timing, and each tile that M, N or K is no multiple of, skipped) goes to OUT.json.log.
--chunk I/N times the I-th of N sets of a group's shapes, balanced by M*N*K, so a group too long
for one GPU call is timed in N calls with --append.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from make_workload_plans import CUDA_GEMM_SPACE, SUITE, cuda_gemm_regime
from workloads import ATTENTION_ONLY_PARTS, PARTS


def stage_range(values):
    depths = [int(v) for v in values.split(",")]
    return f"{min(depths)}:{max(depths)}"


def shape_chunk(shapes, chunk):
    """The chunk-th of n sets (chunk = (i, n), i from 1) of shapes, each largest shape going to
    the set with the least work so far: the sets take about equal time."""
    i, n = chunk
    sets = [[] for _ in range(n)]
    work = [0] * n
    for m, nn, k in sorted(shapes, key=lambda s: (-s[0] * s[1] * s[2], s)):
        least = work.index(min(work))
        sets[least].append((m, nn, k))
        work[least] += m * nn * k
    return sorted(sets[i - 1])


def parse_chunk(text):
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--chunk {text!r}: expected I/N, as 2/3")
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"--chunk {text!r}: I must be between 1 and N")
    return i, n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("out")
    p.add_argument("--launches", type=int, default=10)
    p.add_argument("--part", choices=[p for p in PARTS if p not in ATTENTION_ONLY_PARTS], default=None, help="only this part's rows")
    p.add_argument("--regime", choices=["decode", "prefill"], default=None,
                   help="only this regime's rows (a part too long for one GPU call is timed in two)")
    p.add_argument("--chunk", type=parse_chunk, default=None,
                   help="I/N: only the I-th of N sets of each group's shapes, balanced by M*N*K")
    p.add_argument("--append", action="store_true", help="add to OUT.json's timings instead of replacing them")
    args = p.parse_args()
    with open(SUITE) as f:
        suite = json.load(f)
    groups = {}
    for r in suite["matmul"]:
        if (args.part and r["part"] != args.part) or (args.regime and cuda_gemm_regime(r) != args.regime):
            continue
        groups.setdefault((r["part"], cuda_gemm_regime(r)), []).append(r)
    merged = {"compiled": {}, "timings": [], "runs": []}
    if args.append and os.path.exists(args.out):
        with open(args.out) as f:
            merged = json.load(f)
    with tempfile.TemporaryDirectory() as tmp, open(args.out + ".log", "w") as log:
        # Held-out rows first; OUT.json is rewritten after every run, so a run cut short keeps
        # the groups it finished.
        for (part, regime), rows in sorted(groups.items(), key=lambda g: (not g[0][0].startswith("heldout"), g[0])):
            space = CUDA_GEMM_SPACE[regime]
            shapes = sorted({(r["M"], r["N"], r["K"]) for r in rows})
            if args.chunk:
                shapes = shape_chunk(shapes, args.chunk)
            out = os.path.join(tmp, f"{part}-{regime}.json")
            cmd = [args.binary, "gemm-timing", "--shapes", ",".join(f"{m}x{n}x{k}" for m, n, k in shapes),
                   "--out", out, "--stages", stage_range(space["NUM_STAGES"]), "--split-k", space["SPLIT_K"],
                   "--launches", str(args.launches)]
            print(" ".join(cmd), file=sys.stderr, flush=True)
            subprocess.run(cmd, check=True, stdout=log, stderr=log)
            with open(out) as f:
                run = json.load(f)
            of_shape = {(r["M"], r["N"], r["K"]): r for r in rows}
            for t in run["timings"]:
                t["part"], t["regime"] = part, regime
                t["model"] = of_shape[(t["M"], t["N"], t["K"])]["model"]
                merged["timings"].append(t)
            merged["compiled"].update(run["compiled"])
            merged["runs"].append({"part": part, "regime": regime, "command": " ".join(cmd[1:]),
                                   **({"chunk": "%d/%d" % args.chunk} if args.chunk else {}),
                                   "date": run["date"], "timings": len(run["timings"])})
            merged["device"] = run["device"]
            merged["kernel"] = run["kernel"]
            with open(args.out, "w") as f:
                json.dump(merged, f, indent=0)
    print(f"wrote {args.out}: {len(merged['timings'])} timings", file=sys.stderr)


if __name__ == "__main__":
    main()
