# Compiles the kernels of issue 36's refused-op fixtures (a non-inlined device function called
# with tt.call; reductions under a cluster's CGA layout) on the CPU for one target and writes <name>.ttgir plus <name>.json
# (Triton's version and metadata.shared) into --out. tests/data/triton/ops/README.md has the run.
#
#   python bench/triton/make_call_fixtures.py --out tests/data/triton/ops --target sm_90
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit(noinline=True)
def _row_sums(X, Y, N: tl.constexpr, M: tl.constexpr):
    # A reduction across warps in the callee (noinline functions take scalars and pointers
    # only): scratch of its own, which the caller's allocation holds at the call's offset.
    x = tl.load(X + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :])
    tl.store(Y + tl.arange(0, N), tl.sum(x, axis=1))


@triton.jit
def call_reduce(X, Y, N: tl.constexpr, M: tl.constexpr):
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, M)[None, :]
    x = tl.load(X + rows * M + cols)
    _row_sums(X, Y, 2 * N, M)
    tl.store(Y + M + tl.arange(0, N), tl.sum(x * 2.0, axis=1))


@triton.jit
def cluster_reduce(X, Y, N: tl.constexpr, M: tl.constexpr, AXIS: tl.constexpr):
    # Compiled with num_ctas=2: the layouts carry a CGALayout splitting the tile over the cluster.
    x = tl.load(X + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :])
    if AXIS == 0:
        tl.store(Y + tl.arange(0, M), tl.sum(x, axis=0))
    else:
        tl.store(Y + tl.arange(0, N), tl.sum(x, axis=1))


_REDUCE_SIG = {"X": "*fp32", "Y": "*fp32", "N": "constexpr", "M": "constexpr", "AXIS": "constexpr"}
KERNELS = {
    # name: (fn, signature, constexprs, options)
    "call_reduce": (call_reduce, {"X": "*fp32", "Y": "*fp32", "N": "constexpr", "M": "constexpr"},
                    {"N": 64, "M": 128}, {"num_warps": 4}),
    "cluster_reduce_axis0": (cluster_reduce, _REDUCE_SIG, {"N": 64, "M": 256, "AXIS": 0},
                             {"num_warps": 4, "num_ctas": 2}),
    "cluster_reduce_axis1": (cluster_reduce, _REDUCE_SIG, {"N": 64, "M": 256, "AXIS": 1},
                             {"num_warps": 4, "num_ctas": 2}),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--target", default="sm_90")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tc.install_stop_hook(True)
    for name, (fn, sig, cons, options) in KERNELS.items():
        k, _ = tc.compile_kernel(fn, sig, cons, {}, args.target, options)
        base = f"{name}_{args.target}"
        with open(os.path.join(args.out, base + ".ttgir"), "w") as f:
            f.write(k.asm["ttgir"])
        meta = tc.metadata_of(k)
        with open(os.path.join(args.out, base + ".json"), "w") as f:
            json.dump({"triton_version": triton.__version__, "target": args.target,
                       "options": options, "constexprs": cons, "shared": meta["shared"],
                       "tmem_size": meta.get("tmem_size")}, f, indent=1, sort_keys=True)
        print(base, meta["shared"])


if __name__ == "__main__":
    main()
