"""Which mma.sync matmuls convert their accumulator through shared memory before the store, and
how large that buffer is, read off Triton's own TTGIR on the CPU: compiles the planner's matmul
(bench/python/triton_kernels.py) for an mma.sync target over the plain space, writes each TTGIR,
and prints per configuration the epilogue's ttg.convert_layout (source and destination layouts),
the scratch `simulate --ttgir` places for it (Triton's allocator, replicated in backends/triton)
and metadata.shared (models/graphs/rules/triton_dot.pbtxt, EPILOGUE_CVT_BYTES).

    /work/venvs/triton36/bin/python bench/planner/epilogue_cvt_ttgir.py build/simulate OUT_DIR \
        [--target sm_80] [--dtypes f16,f32] [--jobs 2]

OUT_DIR/<target>-<dtype>-BMxBNxBK-S-W.ttgir and OUT_DIR/census.json.gz (one record per configuration,
beside the tool, Triton and Python versions and the date;
docs/validation/data/planner/epilogue-cvt-sm80-2026-12-02/).
"""
import argparse
import datetime
import gzip
import itertools
import json
import multiprocessing
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

SPACE = [(bm, bn, bk, s, w) for bm, bn, bk, s, w in
         itertools.product([32, 64, 128, 256], [32, 64, 128, 256], [32, 64, 128], [2, 3, 4], [4, 8])]
TRITON_DTYPE = {"f16": "fp16", "f32": "fp32"}
DEVICE_OF = {"sm_80": "a100", "sm_89": "rtx4090", "sm_120": "rtx5090"}


def compile_one(job):
    target, dtype, (bm, bn, bk, stages, warps), out_dir = job
    import triton_compile as tc
    import triton_kernels as tk
    tc.install_stop_hook(True)
    arg_types = {name: "*" + TRITON_DTYPE[dtype] for name in ("a_ptr", "b_ptr", "c_ptr")}
    arg_types.update({name: "i32" for name in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                                                 "stride_cm", "stride_cn")})
    params = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
    sig, constexprs, attrs = tc.build_signature(tk.matmul_kernel, arg_types, params, "jit", target,
                                                div16=("M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
                                                unit=("stride_ak", "stride_bn", "stride_cn"))
    k, _ = tc.compile_kernel(tk.matmul_kernel, sig, constexprs, attrs, target,
                             {"num_warps": warps, "num_stages": stages})
    ttgir = k.asm["ttgir"]
    path = os.path.join(out_dir, f"{target}-{dtype}-{bm}x{bn}x{bk}-{stages}-{warps}.ttgir")
    with open(path, "w") as f:
        f.write(ttgir)
    converts = re.findall(r"ttg\.convert_layout %\S+ : tensor<([^>]*)> -> tensor<([^>]*)>", ttgir)
    return {"target": target, "dtype": dtype,
            "config": {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "NUM_STAGES": stages, "NUM_WARPS": warps},
            "shared": tc.metadata_of(k).get("shared"), "converts": converts, "ttgir": path}


def scratch_of(simulate, device, path):
    """The convert_layout scratch buffers `simulate --ttgir` places, in bytes."""
    run = subprocess.run([simulate, "--device", device, "--ttgir", path, "--format", "json", "--any-target"],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        return None
    report = json.loads(run.stdout)
    return [placement["size_bytes"] for space in report.get("spaces", []) if space.get("space") == "smem"
            for placement in space.get("placements", []) if placement["buffer"].endswith("ttg_convert_layout")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("simulate")
    p.add_argument("out_dir")
    p.add_argument("--target", default="sm_80")
    p.add_argument("--dtypes", default="f16,f32")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    jobs = [(args.target, dtype, config, args.out_dir) for dtype in args.dtypes.split(",") for config in SPACE]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        records = pool.map(compile_one, jobs)
    for record in records:
        record["convert_scratch"] = scratch_of(args.simulate, DEVICE_OF[args.target], record["ttgir"])
        record["ttgir"] = os.path.basename(record["ttgir"])
    import triton
    census = {"tool": "bench/planner/epilogue_cvt_ttgir.py", "triton": triton.__version__,
              "python": sys.version.split()[0], "target": args.target,
              "date": datetime.date.today().isoformat(), "records": records}
    with gzip.GzipFile(os.path.join(args.out_dir, "census.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(census, indent=0).encode())
    for r in records:
        c = r["config"]
        print(r["dtype"], "{BLOCK_M}x{BLOCK_N}x{BLOCK_K} {NUM_STAGES} {NUM_WARPS}".format(**c), r["shared"],
              r["convert_scratch"], len(r["converts"]))


if __name__ == "__main__":
    main()
