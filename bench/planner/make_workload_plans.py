"""Writes the planner's rankings of the real-workload suite (bench/planner/workloads.py) BEFORE the
suite is timed (issue 34): for each matmul row and dtype the whole ranking of every kernel family
graph given, for each attention row the attention graph's, with the commit and the date.

    python3 bench/planner/make_workload_plans.py SIMULATE OUT.json [--device h200]
        [--family models/graphs/triton_matmul.pbtxt ...]
    python3 bench/planner/make_workload_plans.py SIMULATE OUT.json --kernel cuda_gemm
    ... [--part heldout2]   plans only the rows of one part of the suite
    ... [--attention GRAPH] ranks attention with another graph (a variant judged on timed rows)
    ... [--registers FILE ...] plans with a compiler's registers (simulate plan --registers; each file
        is passed to the plans of the graph it names: bench/planner/sweep_registers.py writes them)

--kernel cuda_gemm ranks the CUDA backend's GEMM (models/graphs/gemm.pbtxt) over the space
bench/planner/time_cuda_gemm_workloads.py times (CUDA_GEMM_SPACE), f32 as DTYPE 0 and f16 as 1.

bench/planner/judge_workloads.py judges a plan file against bench/planner/sweep_workloads.py's timings.
"""
import argparse
import datetime
import json
import os
import subprocess

from make_transfer_plans import model_commit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SUITE = os.path.join(ROOT, "tests", "data", "planner", "workload-suite.json")
MATMUL_FAMILIES = ["models/graphs/triton_matmul.pbtxt"]
ATTENTION = "models/graphs/triton_attention.pbtxt"
ELT = {"f16": 2, "f32": 4}
COMPUTE_DTYPE = {"f16": "f16", "f32": "tf32"}  # tl.dot on f32 operands uses tf32
CUDA_GEMM = "models/graphs/gemm.pbtxt"
CUDA_GEMM_DTYPE = {"f32": 0, "f16": 1}
# The CUDA GEMM's timed space per regime (gemm-timing's compiled tiles; the graph's requirements
# drop the tiles M, N or K are no multiple of). Decode rows sweep split-K, prefill rows (M = 2000,
# BLOCK_M = 16 only) keep one share and depths 2-4: a 2000 x 3584 x 18944 fp32-FMA launch runs
# ~15 ms, and split-K has no grid to fill there.
CUDA_GEMM_SPACE = {
    "decode": {"BLOCK_M": "16,32,64,128", "BLOCK_N": "32,64,128", "BLOCK_K": "16,32", "NUM_STAGES": "1,2,3,4",
               "NUM_WARPS": "4,8", "SPLIT_K": "1,2,4,8,16"},
    "prefill": {"BLOCK_M": "16,32,64,128", "BLOCK_N": "32,64,128", "BLOCK_K": "16,32", "NUM_STAGES": "2,3,4",
                "NUM_WARPS": "4,8", "SPLIT_K": "1"},
}


def graph_name(path):
    return os.path.basename(path).split(".")[0]


def plan(binary, device, graphs, sets, compute_dtype=None, space=None, registers=(), allow_spills=False):
    """`simulate plan --format json`, every configuration of the graphs' spaces (or of `space`,
    {param: "V1,V2,..."}) ranked; `registers`: CompiledRegisters files, each passed where it names
    one of the graphs; `allow_spills`: --allow-spills."""
    args = [binary, "plan", "--device", device, "--format", "json", "--top", "100000", "--threads", "1"]
    if allow_spills:
        args.append("--allow-spills")
    for g in graphs:
        args += ["--graph", os.path.join(ROOT, g)]
    planned = {graph_name(g) for g in graphs}
    for path in registers:
        with open(path) as f:
            if json.load(f)["graph"] in planned:
                args += ["--registers", path]
    for name, value in sets.items():
        args += ["--set", f"{name}={value}"]
    for name, values in (space or {}).items():
        args += ["--param", f"{name}={values}"]
    if compute_dtype:
        args += ["--compute-dtype", compute_dtype]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(" ".join(args) + "\n" + out.stderr)
    return json.loads(out.stdout)


def ranking(plan_json, default_family, key="configs"):
    """Fastest first: [family, {param: value}, estimated_us]; key="shortlist": the planner's
    autotuning shortlist in its order."""
    return [[c.get("family", default_family), c["params"], c["estimated_us"]] for c in plan_json[key]]


def ranked(row, pj, default_family):
    return dict(row, ranking=ranking(pj, default_family), shortlist=ranking(pj, default_family, "shortlist"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("out")
    p.add_argument("--device", default="h200")
    p.add_argument("--family", action="append", default=None, help="a matmul family graph; repeatable")
    p.add_argument("--kernel", choices=["triton", "cuda_gemm"], default="triton")
    p.add_argument("--part", default=None, help="plan only this part's rows (workloads.PARTS)")
    p.add_argument("--attention", default=ATTENTION, help="the attention graph (a variant to judge)")
    p.add_argument("--registers", action="append", default=[], help="a CompiledRegisters JSON file; repeatable")
    p.add_argument("--suite", default=SUITE, help="the rows to plan (workload-suite.json's form)")
    args = p.parse_args()
    families = args.family or MATMUL_FAMILIES
    with open(args.suite) as f:
        suite = json.load(f)
    if args.part:
        for section in ("matmul", "attention"):
            suite[section] = [r for r in suite[section] if r["part"] == args.part]
    commit, dirty = model_commit()
    if args.kernel == "cuda_gemm":
        return write_cuda_gemm_plans(args, suite, commit, dirty)
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "commit": commit,
              "uncommitted_changes_in_sim_models_proto": bool(dirty), "device": args.device,
              "families": families, "attention_graph": args.attention, "registers": args.registers, "matmul": [],
              "attention": []}
    default_family = os.path.splitext(os.path.basename(families[0]))[0]
    for r in suite["matmul"]:
        for dtype in suite["dtypes"]["matmul"]:
            pj = plan(args.binary, args.device, families, {"M": r["M"], "N": r["N"], "K": r["K"], "ELT": ELT[dtype]},
                      COMPUTE_DTYPE[dtype], registers=args.registers)
            result["matmul"].append(ranked(dict(r, dtype=dtype), pj, default_family))
    for r in suite["attention"]:
        pj = plan(args.binary, args.device, [args.attention],
                  {k: r[k] for k in ("BATCH_HEADS", "N_CTX", "HEAD_DIM")}, registers=args.registers)
        result["attention"].append(ranked(dict(r, dtype="f16"), pj, "triton_attention"))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=0)
    print(f"wrote {args.out}: {len(result['matmul'])} matmul and {len(result['attention'])} attention rows at "
          f"{commit[:12]}{' (with uncommitted model changes)' if dirty else ''}")


def cuda_gemm_regime(row):
    return "prefill" if row["regime"] == "prefill" else "decode"


def write_cuda_gemm_plans(args, suite, commit, dirty):
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "commit": commit,
              "uncommitted_changes_in_sim_models_proto": bool(dirty), "device": args.device,
              "families": [CUDA_GEMM], "space": CUDA_GEMM_SPACE, "matmul": []}
    for r in suite["matmul"]:
        for dtype in suite["dtypes"]["matmul"]:
            pj = plan(args.binary, args.device, [CUDA_GEMM],
                      {"M": r["M"], "N": r["N"], "K": r["K"], "DTYPE": CUDA_GEMM_DTYPE[dtype]},
                      space=CUDA_GEMM_SPACE[cuda_gemm_regime(r)])
            result["matmul"].append(ranked(dict(r, dtype=dtype), pj, "gemm"))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=0)
    print(f"wrote {args.out}: {len(result['matmul'])} CUDA GEMM rows at {commit[:12]}"
          f"{' (with uncommitted model changes)' if dirty else ''}")


if __name__ == "__main__":
    main()
