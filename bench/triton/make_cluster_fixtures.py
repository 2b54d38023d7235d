# Compiles cluster-launch kernels (num_ctas > 1) on the CPU for sm_90 and sm_100 and writes
# <name>.ttgir plus <name>.json (Triton's version, options and metadata.shared) into
# --out/<release>/: a plain matmul with tl.dot (fixture_kernels.matmul_kernel), a layout
# conversion, a reduction along each axis.
# tests/data/triton/cluster/README.md has the runs.
#
#   python bench/triton/make_cluster_fixtures.py --out tests/data/triton/cluster
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402
from fixture_kernels import matmul_kernel  # noqa: E402
from make_call_fixtures import cluster_reduce  # noqa: E402
# A transposed store: Triton converts the loaded layout to the store's coalesced one.
from make_cvt_fixtures import cvt_trans  # noqa: E402

import triton  # noqa: E402


# The catalogue's pointer GEMM (no TMA, not persistent), specialized as the JIT does.
_MM_TYPES = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
             "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
_MM_PARAMS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}
_TR_SIG = {"X": "*fp32", "Y": "*fp32", "R": "constexpr", "S": "constexpr"}
_RED_SIG = {"X": "*fp32", "Y": "*fp32", "N": "constexpr", "M": "constexpr", "AXIS": "constexpr"}
KERNELS = {
    # name: (fn, signature (None: the JIT's, from _MM_TYPES), constexprs, options without num_ctas)
    "matmul": (matmul_kernel, None, _MM_PARAMS, {"num_warps": 4, "num_stages": 3}),
    "transpose": (cvt_trans, _TR_SIG, {"M": 128, "N": 64}, {"num_warps": 4}),
    "reduce_axis0": (cluster_reduce, _RED_SIG, {"N": 64, "M": 256, "AXIS": 0}, {"num_warps": 4}),
    "reduce_axis1": (cluster_reduce, _RED_SIG, {"N": 64, "M": 256, "AXIS": 1}, {"num_warps": 4}),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets", default="sm_90,sm_100")
    ap.add_argument("--ctas", default="2,4,8,16")
    args = ap.parse_args()
    out = os.path.join(args.out, triton.__version__)
    os.makedirs(out, exist_ok=True)
    tc.install_stop_hook(True)
    for target in args.targets.split(","):
        for ctas in (int(c) for c in args.ctas.split(",")):
            for name, (fn, sig, cons, options) in KERNELS.items():
                opts = dict(options, num_ctas=ctas)
                base = f"{name}_ctas{ctas}_{target}"
                attrs = {}
                if sig is None:
                    sig, cons, attrs = tc.build_signature(fn, _MM_TYPES, cons, "jit", target,
                                                          div16={"M", "N", "K", "stride_am", "stride_bk", "stride_cm"})
                try:
                    k, _ = tc.compile_kernel(fn, sig, cons, attrs, target, opts)
                except Exception as e:  # a configuration the release refuses: recorded, not fatal
                    print(base, "refused:", str(e).splitlines()[0] if str(e) else type(e).__name__)
                    continue
                with open(os.path.join(out, base + ".ttgir"), "w") as f:
                    f.write(k.asm["ttgir"])
                meta = tc.metadata_of(k)
                with open(os.path.join(out, base + ".json"), "w") as f:
                    json.dump({"triton_version": triton.__version__, "target": target, "options": opts,
                               "constexprs": cons, "shared": meta["shared"],
                               "tmem_size": meta.get("tmem_size")}, f, indent=1, sort_keys=True)
                print(base, meta["shared"])


if __name__ == "__main__":
    main()
