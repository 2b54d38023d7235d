"""Times the CUDA backend's GEMM (backends/cuda/gemm_kernels.cu, models/graphs/gemm.pbtxt) on the
real-workload suite (tests/data/planner/workload-suite.json) on the GPU machine (issue 34).

    python3 bench/planner/time_cuda_gemm_workloads.py SCRATCHSIM_CUDA OUT.json [--launches N]
        [--part PART] [--regime decode|prefill] [--chunk I/N] [--append] [--budget-s S]

One `scratchsim_cuda gemm-timing` run per shape of the suite over the space
make_workload_plans.py --kernel cuda_gemm ranks (CUDA_GEMM_SPACE: split-K for decode rows, depths
2-4 for prefill); every timing is tagged with its row's "part" and "regime" and the runs are merged
into OUT.json (the fixture planner_quality_test reads, gzipped), rewritten after every shape, so a
GPU call cut at its limit keeps the shapes it finished; gemm-timing's log (one line a timing, and
each tile that M, N or K is no multiple of, skipped) goes to OUT.json.log.
--append adds to OUT.json and skips the shapes it already has for their part and regime, so the
same command run again resumes where a cut call stopped. --budget-s S starts no shape after S
seconds. --chunk I/N times the I-th of N sets of a group's shapes, balanced by M*N*K.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

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


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=0)


def time_shape(args, shape, part, regime, model, tmp, log):
    """gemm-timing over one shape at the regime's space: its run entry and its tagged timings."""
    space = CUDA_GEMM_SPACE[regime]
    m, n, k = shape
    out = os.path.join(tmp, f"{part}-{regime}-{m}x{n}x{k}.json")
    cmd = [args.binary, "gemm-timing", "--shapes", f"{m}x{n}x{k}", "--out", out,
           "--stages", stage_range(space["NUM_STAGES"]), "--split-k", space["SPLIT_K"],
           "--launches", str(args.launches)]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    log.flush()
    subprocess.run(cmd, check=True, stdout=log, stderr=log)
    with open(out) as f:
        run = json.load(f)
    for t in run["timings"]:
        t["part"], t["regime"], t["model"] = part, regime, model
    entry = {"part": part, "regime": regime, "command": " ".join(cmd[1:]),
             **({"chunk": "%d/%d" % args.chunk} if args.chunk else {}),
             "date": run["date"], "timings": len(run["timings"])}
    return run, entry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("out")
    p.add_argument("--launches", type=int, default=10)
    p.add_argument("--part", choices=[p for p in PARTS if p not in ATTENTION_ONLY_PARTS], default=None, help="only this part's rows")
    p.add_argument("--regime", choices=["decode", "prefill"], default=None, help="only this regime's rows")
    p.add_argument("--chunk", type=parse_chunk, default=None,
                   help="I/N: only the I-th of N sets of each group's shapes, balanced by M*N*K")
    p.add_argument("--append", action="store_true",
                   help="add to OUT.json's timings, skipping the shapes it already has")
    p.add_argument("--budget-s", type=float, default=None, help="start no shape after this many seconds")
    args = p.parse_args()
    start = time.time()
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
    done = {(t["part"], t["regime"], t["M"], t["N"], t["K"]) for t in merged["timings"]}
    with tempfile.TemporaryDirectory() as tmp, open(args.out + ".log", "a" if args.append else "w") as log:
        # Held-out rows first; OUT.json is rewritten after every shape.
        for (part, regime), rows in sorted(groups.items(), key=lambda g: (not g[0][0].startswith("heldout"), g[0])):
            model_of = {(r["M"], r["N"], r["K"]): r["model"] for r in rows}
            shapes = sorted(model_of)
            if args.chunk:
                shapes = shape_chunk(shapes, args.chunk)
            for shape in shapes:
                if (part, regime, *shape) in done:
                    continue
                if args.budget_s is not None and time.time() - start > args.budget_s:
                    print(f"budget of {args.budget_s:.0f} s spent: {part} {regime} {shape} and after not timed",
                          file=sys.stderr)
                    break
                run, entry = time_shape(args, shape, part, regime, model_of[shape], tmp, log)
                merged["timings"].extend(run["timings"])
                merged["compiled"].update(run["compiled"])
                merged["runs"].append(entry)
                merged["device"], merged["kernel"] = run["device"], run["kernel"]
                write_json(args.out, merged)
    # Written once more at the end, so that OUT.json exists even where no shape was timed.
    write_json(args.out, merged)
    print(f"wrote {args.out}: {len(merged['timings'])} timings", file=sys.stderr)


if __name__ == "__main__":
    main()
