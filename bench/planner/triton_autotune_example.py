"""Feeding `simulate plan --format json` to Triton's autotuner (docs/planner.md).

    simulate plan --device h100 --graph bench/planner/triton_matmul.pbtxt \
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
        triton.Config({"BLOCK_M": p["BLOCK_M"], "BLOCK_N": p["BLOCK_N"], "BLOCK_K": p["BLOCK_K"]},
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
    import triton.language as tl

    @triton.autotune(configs=planned_configs(path), key=["M", "N", "K"])
    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
        offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    print("autotuner picked", matmul.best_config)


if __name__ == "__main__":
    main(sys.argv[1])
