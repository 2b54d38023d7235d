"""Times the planner's choice between kernel families on the GPU: the plain Triton matmul and the
split-K matmul of bench/python/triton_kernels.py, each family's top 3 configurations by
`simulate plan --device h200` at three f16 shapes (CONFIGS below, from the planner of commit 81d4a71:
each graph planned alone with --top 3), with torch tensors and triton.testing.do_bench (warm-up
50 ms, 200 ms timed; the median). A split-K launch is timed with the zeroing of C it needs
(`us`) and alone (`kernel_us`). Writes $OUT/t.json: the device, Triton's version and per
configuration its time and its largest error against torch's product, relative to the largest
value (docs/planner.md, "Kernel families"; docs/validation/data/planner/README.md).

    OUT=DIR python3 bench/planner/time_matmul_families.py     # from the repository root, on the GPU machine
"""
import json
import os
import sys

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, "bench/python")
from triton_kernels import matmul_kernel, matmul_splitk_kernel  # noqa: E402

# (M, N, K, family: "p" plain / "s" split-K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, SPLIT_K)
CONFIGS = [
    (16, 4096, 14336, "p", 64, 32, 64, 4, 4, 1), (16, 4096, 14336, "p", 64, 32, 128, 4, 4, 1),
    (16, 4096, 14336, "p", 64, 64, 64, 4, 4, 1), (16, 4096, 14336, "s", 32, 128, 64, 2, 4, 4),
    (16, 4096, 14336, "s", 32, 64, 128, 2, 4, 2), (16, 4096, 14336, "s", 32, 64, 128, 2, 4, 4),
    (512, 4096, 4096, "p", 128, 128, 32, 4, 4, 1), (512, 4096, 4096, "p", 128, 128, 32, 4, 8, 1),
    (512, 4096, 4096, "p", 128, 128, 64, 4, 4, 1), (512, 4096, 4096, "s", 256, 128, 64, 4, 8, 2),
    (512, 4096, 4096, "s", 256, 128, 32, 4, 8, 2), (512, 4096, 4096, "s", 256, 128, 64, 3, 8, 2),
    (8192, 8192, 8192, "p", 128, 256, 64, 4, 8, 1), (8192, 8192, 8192, "p", 128, 256, 32, 4, 8, 1),
    (8192, 8192, 8192, "p", 256, 128, 64, 4, 8, 1), (8192, 8192, 8192, "s", 256, 128, 64, 4, 8, 2),
    (8192, 8192, 8192, "s", 256, 128, 32, 4, 8, 2), (8192, 8192, 8192, "s", 256, 128, 64, 4, 8, 4),
]


def main():
    timings, tensors = [], {}
    for M, N, K, family, bm, bn, bk, stages, warps, split_k in CONFIGS:
        if (M, N, K) not in tensors:
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = torch.randn(K, N, device="cuda", dtype=torch.float16)
            c = torch.empty(M, N, device="cuda", dtype=torch.float16)
            tensors[(M, N, K)] = (a, b, c, (a @ b).float())
        a, b, c, reference = tensors[(M, N, K)]
        tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
        args = (a, b, c, M, N, K) + a.stride() + b.stride() + c.stride()
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=stages, num_warps=warps)
        if family == "p":
            def kernel_only():
                matmul_kernel[(tiles,)](*args, **meta)
            call = kernel_only
        else:
            def kernel_only():
                matmul_splitk_kernel[(tiles, split_k)](*args, SPLIT_K=split_k, **meta)

            def call():  # what a caller pays: C zeroed, then the split-K launch
                c.zero_()
                kernel_only()
        call()
        torch.cuda.synchronize()
        error = (c.float() - reference).abs().max().item() / reference.abs().max().item()
        ms = do_bench(call, warmup=50, rep=200)
        kernel_ms = do_bench(kernel_only, warmup=50, rep=200) if family == "s" else ms
        timings.append(dict(M=M, N=N, K=K, family=family, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=stages,
                            NUM_WARPS=warps, SPLIT_K=split_k, us=ms * 1e3, kernel_us=kernel_ms * 1e3, rel_err=error))
        print(timings[-1])
    with open(os.environ["OUT"] + "/t.json", "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), triton=triton.__version__, timings=timings), f)


if __name__ == "__main__":
    main()
