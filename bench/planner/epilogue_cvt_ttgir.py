"""Which mma.sync matmuls convert their accumulator through shared memory before the store, and
how large that buffer is, read off Triton's own TTGIR on the CPU: compiles the planner's matmul
(bench/python/triton_kernels.py) for an mma.sync target over the plain space, writes each TTGIR,
and prints per configuration the epilogue's ttg.convert_layout (source and destination layouts),
the scratch `simulate --ttgir` places for it (Triton's allocator, replicated in backends/triton)
and metadata.shared (docs/planner.md, "The mma.sync epilogue's conversion").

    /work/venvs/triton36/bin/python bench/planner/epilogue_cvt_ttgir.py build/simulate OUT_DIR \
        [--target sm_80] [--dtypes f16,f32] [--jobs 2]

OUT_DIR/<target>-<dtype>-BMxBNxBK-S-W.ttgir and OUT_DIR/census.json.gz (one record per configuration,
beside the tool, Triton and Python versions and the date;
docs/validation/data/planner/epilogue-cvt-sm80-2026-12-02/).
"""
import argparse
import datetime
import gzip
import json
import multiprocessing
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compile_matmul_targets import compile_config, configurations  # noqa: E402

DEVICE_OF = {"sm_80": "a100", "sm_89": "rtx4090", "sm_120": "rtx5090"}


def compile_one(job):
    """One configuration compiled as compile_matmul_targets.py compiles it (to LLVM IR), its
    TTGIR written to OUT_DIR, and the epilogue's conversions read off it."""
    target, dtype, cfg, out_dir = job
    import triton_compile as tc
    tc.install_stop_hook(True)
    k, _ = compile_config("matmul", target, dtype, cfg)
    ttgir = k.asm["ttgir"]
    name = "{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-{NUM_STAGES}-{NUM_WARPS}".format(**cfg)
    path = os.path.join(out_dir, f"{target}-{dtype}-{name}.ttgir")
    with open(path, "w") as f:
        f.write(ttgir)
    converts = re.findall(r"ttg\.convert_layout %\S+ : tensor<([^>]*)> -> tensor<([^>]*)>", ttgir)
    return {"target": target, "dtype": dtype, "config": cfg, "shared": tc.metadata_of(k).get("shared"),
            "converts": converts, "ttgir": path}


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
    jobs = [(args.target, dtype, config, args.out_dir) for dtype in args.dtypes.split(",")
            for config in configurations(0, None)]
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
