"""Writes the planner's rankings for a device BEFORE that device is measured (issue 19's transfer
test, docs/validation/planner-h200-transfer.md): for each kernel, shape and dtype, the whole
ranking `simulate plan` gives over the space the GPU sweep will time, with the commit, the date,
the model terms the plan used (and where each came from) and its warnings.

    python3 bench/planner/make_transfer_plans.py SIMULATE OUT.json --device h200 \
        [--calibration [KERNEL=]FILE ...] [--triton-shapes MxNxK,...] [--gemm-shapes MxNxK,...]

The shapes default to the fresh ones of the H200 transfer run (none of them in any H100 sweep of
tests/data/planner or docs/validation/data/planner, which this script checks). bench/planner/h200_transfer_gpu.sh reads the
shapes back from the plan file, so the GPU times exactly what was planned;
bench/planner/compare_transfer.py judges the plans against the timings.
"""
import argparse
import datetime
import glob
import json
import os
import subprocess

from compare_plan import load_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
NAMES = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS"]

# Fresh shapes: not in any H100 sweep. Triton: multiples of 16 (the JIT's divisibility
# specialization, as in the H100 sweeps). CUDA GEMM: M, N multiples of 128 and K of 32 (the kernel
# has no edge handling, gemm.pbtxt's requirements).
TRITON_SHAPES = [(3840, 3840, 3072), (2048, 9216, 2816), (7424, 2048, 3328), (5120, 3072, 5120)]
# gemm-timing spent most of a timing preparing inputs on the host (random A and B, the reference
# sample: backends/cuda/gemm_kernels.cu Prepare), which grows with the matrices: the H100 sweeps'
# shapes of 10-13 M elements of A and B took 0.3-0.4 s per timing (tests/data/planner/README.md's
# dates), so these hold 5-7 M elements to keep 864 timings within the GPU script's budget. (Since
# split-K, a run makes each shape's inputs once.)
GEMM_SHAPES = [(2304, 2560, 1024), (3328, 1536, 1280), (1536, 4224, 1152), (2944, 2048, 1536)]

KERNELS = {
    # The space sweep_triton_matmul.py times (the graph's own ranges), f16 and f32 (tf32 dot).
    "triton": {"graph": "models/graphs/triton_matmul.pbtxt", "params": [],
               "sets": {"f16": ["ELT=2"], "f32": ["ELT=4"]}, "compute_dtype": {"f16": "f16", "f32": "tf32"}},
    # The 72 tiles `scratchsim_cuda gemm-timing` compiles, at the depths the GPU run times (2-4),
    # without split-K (the plain kernel the transfer runs timed).
    "cuda_gemm": {"graph": "models/graphs/gemm.pbtxt",
                  "params": ["BLOCK_M=32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32", "NUM_STAGES=2..4",
                             "NUM_WARPS=4,8"],
                  "sets": {"f16": ["DTYPE=1", "SPLIT_K=1"], "f32": ["DTYPE=0", "SPLIT_K=1"]}, "compute_dtype": {}},
}


def parse_shapes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")] if text else None


def seen_shapes():
    """Every shape a recorded run timed (the H100 sweeps, the fresh-shape and transfer runs): a fresh
    shape is none of them. Plan files rank shapes without timing them and are not counted."""
    seen = set()
    # The runs tests replay (tests/data/planner, gzipped) and the rest of each run's record.
    paths = [path for folder in (("tests", "data", "planner"), ("docs", "validation", "data", "planner"))
             for pattern in ("*.json", "*.json.gz")
             for path in glob.glob(os.path.join(ROOT, *folder, "**", pattern), recursive=True)]
    for path in paths:
        if "-plans-" in os.path.basename(path):
            continue
        try:
            data = load_json(path)
        except ValueError:
            continue
        # Timing files (sweeps, gemm-timing) list their shapes as [[M, N, K], ...].
        if isinstance(data, dict):
            seen.update(tuple(shape) for shape in data.get("shapes", []))
    return seen


def plan(binary, device, kernel, dtype, shape, calibration, stages=None):
    """`simulate plan --format json` of one (kernel, dtype, shape) row over the space the GPU sweep
    times; `stages` ("LO..HI") replaces the kernel's NUM_STAGES range where it has one."""
    spec = KERNELS[kernel]
    M, N, K = shape
    args = [binary, "plan", "--device", device, "--graph", os.path.join(ROOT, spec["graph"]),
            "--set", f"M={M}", "--set", f"N={N}", "--set", f"K={K}", "--format", "json", "--top", "100000",
            "--threads", "1"]
    for s in spec["sets"][dtype]:
        args += ["--set", s]
    for p in spec["params"]:
        args += ["--param", f"NUM_STAGES={stages}" if stages and p.startswith("NUM_STAGES=") else p]
    if dtype in spec["compute_dtype"]:
        args += ["--compute-dtype", spec["compute_dtype"][dtype]]
    if calibration:
        args += ["--calibration", calibration]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(" ".join(args) + "\n" + out.stderr)
    return json.loads(out.stdout)


def model_commit():
    """The commit a plan is made at, and whether the model's sources (sim, models, proto) differ
    from it: a plan file records both, so it says which model ranked it."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "sim", "models", "proto"],
                           capture_output=True, text=True).stdout.strip()
    return commit, bool(dirty)


def ranking(plan_json):
    """Fastest first: the five parameters and the estimate in microseconds."""
    return [[c["params"][n] for n in NAMES] + [c["estimated_us"]] for c in plan_json["configs"]]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("out")
    parser.add_argument("--device", default="h200")
    parser.add_argument("--calibration", action="append", default=[],
                        help="plan with this calibration file (simulate calibrate): FILE for every kernel, or "
                             "KERNEL=FILE (triton, cuda_gemm) for one; repeatable")
    parser.add_argument("--triton-shapes", default=None)
    parser.add_argument("--gemm-shapes", default=None)
    args = parser.parse_args()
    shapes = {"triton": parse_shapes(args.triton_shapes) or TRITON_SHAPES,
              "cuda_gemm": parse_shapes(args.gemm_shapes) or GEMM_SHAPES}
    seen = seen_shapes()
    for kernel, list_ in shapes.items():
        for s in list_:
            if s in seen:
                raise SystemExit(f"{kernel} shape {s} was timed already: not fresh")
    calibration = {}
    for item in args.calibration:
        kernel, _, path = item.rpartition("=") if "=" in item else ("", "", item)
        for k in ([kernel] if kernel else list(KERNELS)):
            if k not in KERNELS:
                raise SystemExit(f"--calibration {item}: kernel '{k}' is not one of {', '.join(KERNELS)}")
            calibration[k] = path
    commit, dirty = model_commit()
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "commit": commit,
        "uncommitted_changes_in_sim_models_proto": bool(dirty),
        "device": args.device,
        "calibration": {k: os.path.relpath(v, ROOT) for k, v in calibration.items()} or None,
        "shapes": {k: [list(s) for s in v] for k, v in shapes.items()},
        "kernels": {},
    }
    for kernel in ("triton", "cuda_gemm"):
        spec = KERNELS[kernel]
        rows = []
        for shape in shapes[kernel]:
            for dtype in ("f16", "f32"):
                p = plan(args.binary, args.device, kernel, dtype, shape, calibration.get(kernel))
                rows.append({
                    "dtype": dtype, "M": shape[0], "N": shape[1], "K": shape[2],
                    "compute_dtype": p["compute_dtype"],
                    "ranking": ranking(p),
                    "fitting": p["fitting"], "space_size": p["space_size"],
                    "warnings": p.get("warnings", []), "model_terms": p.get("model_terms", []),
                })
        result["kernels"][kernel] = {"graph": spec["graph"], "params": spec["params"], "sets": spec["sets"],
                                     "compute_dtype": spec["compute_dtype"], "rows": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}: {sum(len(k['rows']) for k in result['kernels'].values())} rows at {commit[:12]}"
          f"{' (with uncommitted model changes)' if dirty else ''}")


if __name__ == "__main__":
    main()
