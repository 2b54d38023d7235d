"""Writes the registers ptxas allocated in the workload sweeps' compiles (bench/planner/sweep_workloads.py
records Triton's n_regs and n_spills for every configuration it compiled on the GPU) as the
CompiledRegisters files `simulate plan --registers` reads: one per graph family.

    python3 bench/planner/sweep_registers.py OUT_DIR TIMINGS.json.gz [TIMINGS.json.gz ...]

Writes OUT_DIR/triton_matmul.registers.json, triton_matmul_splitk.registers.json and
triton_attention.registers.json (those the sweeps compiled). A configuration's figures are the same
in every sweep (ptxas is deterministic; the shape is not in the key: Triton's JIT specializes it
only by divisibility by 16); one that differs between files is an error. Triton reports the local
memory a thread uses / 4 as n_spills (its NVIDIA driver), so spill_bytes is 4 x n_spills.
"""
import json
import os
import sys

from compare_plan import load_json as load

GRAPH_OF_KIND = {"matmul": "triton_matmul", "splitk": "triton_matmul_splitk", "attention": "triton_attention"}
# What the compiles assumed of the problem: sweep_workloads.compile_one compiles each configuration
# at 512 x 512 x 512 (attention: a sequence of 1,024), so Triton's JIT saw every size divisible by
# 16 and specialized it so; a problem where one is not compiles to another kernel (an N that 16
# does not divide loads B element by element), which these figures are not.
MATMUL_SIZES_ALIGNED = ["M % 16 == 0", "N % 16 == 0", "K % 16 == 0"]
COMPILED_WHERE = {"triton_matmul": MATMUL_SIZES_ALIGNED, "triton_matmul_splitk": MATMUL_SIZES_ALIGNED,
                  "triton_attention": ["N_CTX % 16 == 0"]}
ELT = {"f16": 2, "f32": 4}


def sets_of(record):
    """NAME=VALUE of every graph parameter the compile depends on: the config, the element size
    and, for attention, the head dim."""
    params = dict(record["config"], ELT=ELT[record["dtype"]])
    if record.get("head_dim") is not None:
        params["HEAD_DIM"] = record["head_dim"]
    return sorted(f"{k}={v}" for k, v in params.items())


def collect(paths):
    """{graph: {sets tuple: (registers, spill_bytes)}} and the compilers named, over the files."""
    figures, compilers = {}, {}
    for path in paths:
        run = load(path)
        for record in run["compiled"].values():
            if "n_regs" not in record:
                continue  # Triton refused it (out of resources): nothing was allocated
            graph = GRAPH_OF_KIND[record["kind"]]
            key = tuple(sets_of(record))
            figure = (record["n_regs"], 4 * record.get("n_spills", 0))
            seen = figures.setdefault(graph, {}).setdefault(key, figure)
            if seen != figure:
                raise SystemExit(f"{path}: {graph} {key}: {figure} where an earlier file has {seen}")
            compilers.setdefault(graph, set()).add(f"Triton {run['triton']}, compiled on the {run['device']}")
    return figures, compilers


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    out_dir, paths = argv[1], argv[2:]
    figures, compilers = collect(paths)
    os.makedirs(out_dir, exist_ok=True)
    for graph, table in sorted(figures.items()):
        doc = {"graph": graph, "target": "sm_90", "compiler": "; ".join(sorted(compilers[graph])),
               "compiled_where": COMPILED_WHERE[graph],
               "configs": [{"sets": list(key), "registers": regs, "spill_bytes": spill}
                           for key, (regs, spill) in sorted(table.items())]}
        path = os.path.join(out_dir, f"{graph}.registers.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=0)
        print(f"wrote {path}: {len(table)} configurations")


if __name__ == "__main__":
    main(sys.argv)
