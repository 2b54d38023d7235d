"""Compiles the workload sweeps' matmul space on this machine's CPU (scratchsim.triton.compiled_registers:
Triton's NVIDIA pipeline and its ptxas, for sm_90, no GPU) and compares ptxas's registers with the
counts the H200 sweeps recorded (tests/data/planner/compiled-registers, bench/planner/sweep_registers.py).

    python3 bench/planner/cpu_registers.py [--dtype f16|f32] [--out FILE.json]

Prints how long the compiles took and on how many recorded configurations the registers (and
whether ptxas spilled) are the same; --out writes the CompiledRegisters dict it compiled.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "python"))

import scratchsim.triton as sst  # noqa: E402
import triton_kernels as tk  # noqa: E402

RECORDED = os.path.join(ROOT, "tests", "data", "planner", "compiled-registers", "triton_matmul.registers.json")
ELT = {"f16": 2, "f32": 4}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", choices=sorted(ELT), default="f16")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    ty = "fp16" if args.dtype == "f16" else "fp32"
    signature = {k: v.replace("fp16", ty) if isinstance(v, str) else v for k, v in tk.MATMUL_SIGNATURE.items()}
    # The sweeps' plain matmul space (bench/planner/sweep_workloads.py PLAIN_SPACE).
    configs = tk.matmul_configs(block_m=(32, 64, 128, 256), block_n=(32, 64, 128, 256), block_k=(32, 64, 128),
                                stages=(2, 3, 4), warps=(4, 8))
    t0 = time.perf_counter()
    figures = sst.compiled_registers(tk.matmul_kernel, configs, signature, "sm_90", fixed={"ELT": ELT[args.dtype]},
                                     param_names={"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "BLOCK_K": "BLOCK_K"})
    seconds = time.perf_counter() - t0
    with open(RECORDED) as f:
        recorded = {tuple(sorted(c["sets"])): c for c in json.load(f)["configs"]}
    both = same = 0
    for c in figures["configs"]:
        r = recorded.get(tuple(sorted(c["sets"])))
        if r is None:
            continue  # not compiled on the GPU (Triton refused it: out of shared memory)
        both += 1
        same += r["registers"] == c["registers"] and (r["spill_bytes"] > 0) == (c["spill_bytes"] > 0)
    print(f"{args.dtype}: {len(configs)} configurations compiled in {seconds:.1f} s ({seconds / len(configs):.2f} s "
          f"each, {figures['compiler']}); registers and spilling as the H200 sweeps recorded on {same} of {both}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(figures, f, indent=0)


if __name__ == "__main__":
    main()
