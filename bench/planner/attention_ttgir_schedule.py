"""Where Triton's pipeliner puts the K and V loads of the planner's attention kernel
(bench/python/triton_kernels.py attn_fwd_kernel) relative to their wait and the dots, on the CPU:
per configuration of the planner's space, the KV loop's operations in order, which is what the
attention graph's two-stage tile wait rests on (models/graphs/triton_attention.pbtxt,
chain_latency_cycles; docs/planner.md, "Attention: chains").

    python3 bench/planner/attention_ttgir_schedule.py [--target sm_90] [--head-dim 64]   # Triton 3.6 installed

Letters, in loop order: W<n> cp.async wait_group leaving n groups in flight, D a wgmma issued
(D~<n>: its wait, n left pending), d an mma.sync dot, M a tcgen05 MMA, e an exp2, L a tile's
cp.async, B an mbarrier wait, t a TMEM load, r a shared-memory load to registers.
"""
import argparse
import itertools
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import triton_compile as tc  # noqa: E402

# The TTGIR operation each letter stands for; the first that a line holds names it.
LETTERS = [
    ("ttg.async_wait", "W"), ("ttg.async_copy_global_to_local", "L"), ("ttng.warp_group_dot_wait", "D~"),
    ("ttng.warp_group_dot ", "D"), ("tt.dot ", "d"), ("ttng.tc_gen5_mma", "M"), ("math.exp2", "e"),
    ("ttng.wait_barrier", "B"), ("ttng.tmem_load", "t"), ("ttg.local_load", "r"),
]


def loop_order(ttgir):
    """The KV loop's operations, as letters (with a wait's count), from its scf.for to its yield."""
    body = ttgir[ttgir.index("scf.for"):]
    body = body[:body.index("scf.yield")]
    order = []
    for line in body.splitlines():
        for op, letter in LETTERS:
            if op in line:
                count = re.search(r"(?:num|pendings) = (\d+)", line)
                order.append(letter + (count.group(1) if count and letter in ("W", "D~") else ""))
                break
    return order


def compile_attention(target, head_dim, bm, bn, stages, warps):
    """The planner's attention kernel compiled for `target` with the JIT's specialization of the
    timed launches (the ":16" arguments of ATTN_SIGNATURE divisible by 16), as the sweeps run it."""
    import triton_kernels as tk
    div16 = [name for name, t in tk.ATTN_SIGNATURE.items() if t.endswith(":16")]
    arg_types = {name: t.split(":")[0] for name, t in tk.ATTN_SIGNATURE.items()}
    params = {"HEAD_DIM": head_dim, "BLOCK_M": bm, "BLOCK_N": bn}
    sig, constexprs, attrs = tc.build_signature(tk.attn_fwd_kernel, arg_types, params, "jit", target, div16=div16)
    kernel, _ = tc.compile_kernel(tk.attn_fwd_kernel, sig, constexprs, attrs, target,
                                  {"num_warps": warps, "num_stages": stages})
    return kernel


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", default="sm_90")
    p.add_argument("--head-dim", type=int, default=64)
    args = p.parse_args()
    tc.install_stop_hook(True)
    print("BLOCK_M/N/stages/warps  shared  KV loop, in order")
    for bm, bn, stages, warps in itertools.product((64, 128), (32, 64, 128), (2, 3, 4), (4, 8)):
        try:
            k = compile_attention(args.target, args.head_dim, bm, bn, stages, warps)
        except Exception as e:  # noqa: BLE001 (a configuration Triton refuses is reported, not fatal)
            print(f"{bm}/{bn}/{stages}/{warps:<15} compile error: {str(e).splitlines()[0][:120]}")
            continue
        print(f"{bm}/{bn}/{stages}/{warps:<15} {tc.metadata_of(k).get('shared'):6}  {' '.join(loop_order(k.asm['ttgir']))}")


if __name__ == "__main__":
    main()
