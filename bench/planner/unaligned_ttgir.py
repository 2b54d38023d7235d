"""What Triton makes of the planner's matmul (bench/python/triton_kernels.py) when N is not
divisible by 16, on the CPU: the JIT then does not specialize N and the B and C row strides as
divisible by 16 (tt.divisibility), and this prints, per configuration, the TTGIR's copies of each
kind, the loads' sizePerThread and metadata.shared, with and without that specialization, and
the layouts of one element a thread (threadsPerWarp, order: lanes down K where N is unaligned;
models/graphs/rules/triton_dot.pbtxt, UNALIGNED_B_L1_BYTES_PER_K)
(docs/validation/planner-h200-workloads.md, "The fifth held-out part";
models/graphs/triton_matmul.pbtxt, ranking_assumptions).

    python3 bench/planner/unaligned_ttgir.py [--target sm_90] [--dtype fp16]   # Triton 3.6 installed
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import triton_compile as tc  # noqa: E402

CONFIGS = [(32, 64, 64, 3, 4), (32, 256, 64, 4, 4), (64, 128, 64, 3, 4), (128, 128, 32, 3, 8)]
OPS = ("ttg.async_copy_global_to_local", "tt.load", "ttg.local_store", "ttg.local_load")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", default="sm_90")
    p.add_argument("--dtype", default="fp16")
    args = p.parse_args()
    tc.install_stop_hook(True)
    import triton_kernels as tk
    arg_types = {name: "*" + args.dtype for name in ("a_ptr", "b_ptr", "c_ptr")}
    arg_types.update({name: "i32" for name in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                                                 "stride_cm", "stride_cn")})
    print("N % 16  BLOCK_M/N/K/stages/warps  shared  " + "  ".join(OPS) + "  load sizePerThread")
    for n_divisible in (True, False):
        div16 = ("M", "K", "stride_am") + (("N", "stride_bk", "stride_cm") if n_divisible else ())
        for bm, bn, bk, stages, warps in CONFIGS:
            params = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
            sig, constexprs, attrs = tc.build_signature(tk.matmul_kernel, arg_types, params, "jit", args.target,
                                                        div16=div16, unit=("stride_ak", "stride_bn", "stride_cn"))
            k, _ = tc.compile_kernel(tk.matmul_kernel, sig, constexprs, attrs, args.target,
                                     {"num_warps": warps, "num_stages": stages})
            ttgir = k.asm["ttgir"]
            counts = "  ".join(f"{ttgir.count(op + ' '):>{len(op)}}" for op in OPS)
            spt = sorted(set(re.findall(r"sizePerThread = \[([0-9, ]+)\]", ttgir)))
            one_a_thread = sorted(set(re.findall(
                r"sizePerThread = \[1, 1\], threadsPerWarp = (\[[0-9, ]+\]), warpsPerCTA = \[[0-9, ]+\], "
                r"order = (\[[0-9, ]+\])", ttgir)))
            print(f"{'0' if n_divisible else 'not 0':7} {bm}/{bn}/{bk}/{stages}/{warps:<14} "
                  f"{tc.metadata_of(k).get('shared'):6}  {counts}  {' '.join('[' + s + ']' for s in spt)}"
                  + "".join(f"  lanes {t} order {o}" for t, o in one_a_thread))


if __name__ == "__main__":
    main()
