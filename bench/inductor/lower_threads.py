#!/usr/bin/env python3
"""How much of a Triton lowering (its front end and TTGIR passes: scratchsim.triton.lower_compiled,
what scratchsim.inductor's hook runs per checked choice) leaves Python's lock: 36 configurations of
the tutorial matmul (bench/python/triton_kernels.py) lowered for sm_90 one after another, then in
N threads (docs/validation/inductor-gpu.md, run 14).

    python3 bench/inductor/lower_threads.py [--threads 2]

Needs Triton (3.6 measured) and scratchsim; no GPU. Prints the serial and the threaded time.
"""
import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
import triton  # noqa: E402
import triton_compile as tc  # noqa: E402
from triton_kernels import matmul_kernel  # noqa: E402

import scratchsim.triton as sst  # noqa: E402

ARG_TYPES = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
                 stride_ak="i32", stride_bk="i32", stride_bn="i32", stride_cm="i32", stride_cn="i32")
CONFIGS = [(bm, bn, bk, st) for bm in (64, 128) for bn in (64, 128, 256) for bk in (32, 64) for st in (2, 3, 4)]


def lower(config):
    """Lowers one configuration to TTGIR as the hook does."""
    bm, bn, bk, stages = config
    sig, constexprs, attrs = tc.build_signature(
        matmul_kernel, ARG_TYPES, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, "jit", "sm_90",
        div16=("M", "N", "K", "stride_am", "stride_bk", "stride_cm"), unit=("stride_ak", "stride_bn", "stride_cn"))
    sst.lower_compiled(matmul_kernel, sig, constexprs, attrs, "sm_90", {"num_warps": 4, "num_stages": stages})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    lower(CONFIGS[0])  # imports and first-use costs out of the timing
    t = time.perf_counter()
    for c in CONFIGS:
        lower(c)
    serial = time.perf_counter() - t
    t = time.perf_counter()
    with ThreadPoolExecutor(a.threads) as ex:
        list(ex.map(lower, CONFIGS))
    threaded = time.perf_counter() - t
    print(f"Triton {triton.__version__}, {len(CONFIGS)} configurations: serial {serial:.2f} s; {a.threads} threads "
          f"{threaded:.2f} s ({serial / threaded:.2f}x)")


if __name__ == "__main__":
    main()
