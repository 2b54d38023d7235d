# Proves that Triton compiles for every catalogue target on a machine without a GPU or driver:
# one fp16 pointer GEMM (fixture_kernels.matmul_kernel, 64x64x32, 4 warps, 3 stages) per target,
# once through the whole pipeline (cubin / hsaco) and once stopped after the LLVM-IR stage
# (triton_compile's stages hook), with the time of each and the exact error of any failure.
#
#   nice -n 10 /work/venvs/triton36/bin/python bench/triton/probe_targets.py [--targets ...]
import argparse
import json
import os
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_compile as tc  # noqa: E402
from fixture_kernels import matmul_kernel  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default=",".join(tc.TARGETS))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    tc.set_cache_dir(tempfile.mkdtemp(prefix="triton-probe-"))
    res = {"versions": tc.triton_versions(), "results": []}
    for t in args.targets.split(","):
        for stop in (False, True):
            tc.install_stop_hook(stop)
            types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                     "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
            params = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
            sig, ce, attrs = tc.build_signature(matmul_kernel, types, params, "jit", t,
                                                div16={"M", "N", "K", "stride_am", "stride_bk",
                                                       "stride_cm"})
            r = {"target": t, "stage": "llir" if stop else "binary"}
            try:
                k, s = tc.compile_kernel(matmul_kernel, sig, ce, attrs, t,
                                         {"num_warps": 4, "num_stages": 3})
                r.update(tc.metadata_of(k), compile_s=round(s, 3),
                         binary_bytes=len(k.asm[k.metadata.target.backend == "cuda" and "cubin"
                                                or "hsaco"]))
            except Exception as e:  # noqa: BLE001
                r["error"] = "%s: %s" % (type(e).__name__, str(e)[-2000:])
                r["traceback"] = traceback.format_exc()[-1500:]
            print(json.dumps(r), flush=True)
            res["results"].append(r)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
