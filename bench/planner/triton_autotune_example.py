"""Feeding `simulate plan --format json` to Triton's autotuner (docs/planner.md).

    simulate plan --device h100 --graph models/graphs/triton_matmul.pbtxt \
        --set M=4096 --set N=4096 --set K=4096 --set ELT=2 --compute-dtype f16 \
        --format json --top 8 > plan.json
    python3 triton_autotune_example.py plan.json

planned_configs() turns the plan into triton.Config objects (the autotuner then times only
those); prune_to_plan() is a prune_configs_by hook that keeps, of a hand-written list, only the
configurations the planner ranked, in the planner's order.
"""
import json
import sys


def load_plan(path):
    with open(path) as f:
        plan = json.load(f)
    return [c["params"] for c in plan["configs"]]


def _key(params):
    return (params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"], params["NUM_STAGES"], params["NUM_WARPS"])


def planned_configs(path):
    import triton
    return [
        triton.Config({"BLOCK_M": p["BLOCK_M"], "BLOCK_N": p["BLOCK_N"], "BLOCK_K": p["BLOCK_K"], "GROUP_M": 8},
                      num_stages=p["NUM_STAGES"], num_warps=p["NUM_WARPS"])
        for p in load_plan(path)
    ]


def prune_to_plan(path):
    rank = {_key(p): i for i, p in enumerate(load_plan(path))}

    def early_config_prune(configs, named_args, **kwargs):
        kept = [c for c in configs
                if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_stages, c.num_warps) in rank]
        kept.sort(key=lambda c: rank[(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"],
                                      c.num_stages, c.num_warps)])
        return kept or configs  # never leave the autotuner with nothing

    return {"early_config_prune": early_config_prune}


def main(path):
    import torch
    import triton

    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from triton_kernels import matmul_kernel  # the matmul the planner's graph models (GROUP_M = 8)
    matmul = triton.autotune(configs=planned_configs(path), key=["M", "N", "K"])(matmul_kernel)

    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    print("autotuner picked", matmul.best_config)


if __name__ == "__main__":
    main(sys.argv[1])
