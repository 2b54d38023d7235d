"""Compiles the planner's Triton matmuls (bench/python/triton_kernels.py) for targets we cannot
run, on a CPU-only machine, and records what the compiler decided for every configuration:
metadata.shared, tensor memory (tmem_size), registers and spills, and Triton's OutOfResources
verdict. The compiler's verdict for B200 (sm_100), RTX 5090 (sm_120), MI300X (gfx942) and
MI355X (gfx950), which models/graphs/triton_matmul.pbtxt is checked against, and with
--kernel splitk (matmul_splitk_kernel, every configuration at each --split-k value) the one
models/graphs/triton_matmul_splitk.pbtxt is checked against (tests/portable_graphs_test.cc;
docs/planner.md, "What is validated where" and "Kernel families").

    nice -n 19 /work/venvs/triton36/bin/python bench/planner/compile_matmul_targets.py \
        tests/data/planner/triton-matmul-targets-3.6.0.json [--targets sm_100,sm_120,gfx942,gfx950] \
        [--dtypes f16,f32] [--limit N] [--kernel matmul|splitk] [--split-k 2,4,8,16] [--jobs N] \
        [--stop-after-llir] [--unaligned-n N]

portable_graphs_test reads it as tests/data/planner/triton-matmul-targets-3.6.0.json.gz (gzip -9n),
and the split-K record as triton-matmul-splitk-targets-3.6.0.json.gz.

NVIDIA: the full compile (Triton's bundled ptxas) to a cubin; registers and spill bytes (the stack
frame) from `cuobjdump --dump-resource-usage` of that cubin (the targets files recorded LOCAL,
which is 0 for spills: their NVIDIA spill_bytes are not ptxas's; tests/data/planner/README.md).
AMD: the compile to AMDGCN assembly; registers are .vgpr_count + .agpr_count (the unified file of
gfx90a+) and spills .private_segment_fixed_size (scratch), from the kernel's metadata. No GPU, no
driver.
--stop-after-llir ends each compile once Triton has set metadata.shared and tmem_size (no ptxas,
no AMDGCN): registers and spills are then not recorded. --jobs compiles in that many processes.
--unaligned-n N compiles as the JIT specializes a launch whose N (the B and C row stride) 16 does
not divide, an lm_head of an odd vocabulary: N, stride_bk and stride_cm lose their divisibility,
and each record names the N it stands for ("problem": {"N": N}) so that the graph is judged there
(portable_graphs_test reads it as tests/data/planner/triton-matmul-unaligned-n-3.6.0.json.gz).
"""
import argparse
import datetime
import itertools
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402

SPACE = {
    "BLOCK_M": [32, 64, 128, 256],
    "BLOCK_N": [32, 64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "NUM_STAGES": [2, 3, 4],
    "NUM_WARPS": [4, 8],
}
TRITON_DTYPE = {"f16": "fp16", "f32": "fp32"}


# The kernel: the tutorial-style matmul every script here times and compiles, defined once.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from triton_kernels import matmul_kernel, matmul_splitk_kernel  # noqa: E402

KERNELS = {"matmul": matmul_kernel, "splitk": matmul_splitk_kernel}
KERNEL_DOC = {"matmul": "bench/python/triton_kernels.py matmul_kernel (GROUP_M=8)",
              "splitk": "bench/python/triton_kernels.py matmul_splitk_kernel (GROUP_M=8)"}


def nvidia_resources(cubin):
    """(registers, spill bytes) of the cubin's kernel, from cuobjdump --dump-resource-usage: ptxas
    puts a Triton kernel's spills in its stack frame (STACK; LOCAL stays 0), and these kernels
    have no other local arrays, so the frame is the spills."""
    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([cuobjdump, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    regs = re.search(r"REG:(\d+)", out)
    stack = re.search(r"STACK:(\d+)", out)
    return (int(regs.group(1)) if regs else None, int(stack.group(1)) if stack else None)


def amd_resources(amdgcn):
    """(VGPRs + AGPRs, scratch bytes) from the AMDGCN assembly's kernel metadata."""
    def field(name):
        m = re.search(r"\." + name + r":\s*(\d+)", amdgcn)
        return int(m.group(1)) if m else None
    vgpr, agpr = field("vgpr_count"), field("agpr_count")
    scratch = field("private_segment_fixed_size")
    return ((vgpr or 0) + (agpr or 0) if vgpr is not None else None, scratch)


def compile_config(kernel_name, target, dtype, cfg, n_divisible=True):
    """(compiled kernel, seconds) of one configuration (BLOCK_*, NUM_STAGES, NUM_WARPS, SPLIT_K
    where the kernel has it) for `target`, its sizes and row strides divisible by 16 (N and the
    strides it sets only where `n_divisible`) and its inner strides 1, as the JIT specializes a
    contiguous launch."""
    kernel = KERNELS[kernel_name]
    t = TRITON_DTYPE[dtype]
    arg_types = dict(a_ptr="*" + t, b_ptr="*" + t, c_ptr="*" + t, M="i32", N="i32", K="i32",
                     stride_am="i32", stride_ak="i32", stride_bk="i32", stride_bn="i32",
                     stride_cm="i32", stride_cn="i32")
    params = {"BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "BLOCK_K": cfg["BLOCK_K"], "GROUP_M": 8}
    if "SPLIT_K" in cfg:
        params["SPLIT_K"] = cfg["SPLIT_K"]
    sig, constexprs, attrs = tc.build_signature(
        kernel, arg_types, params, "jit", target,
        div16=("M", "K", "stride_am") + (("N", "stride_bk", "stride_cm") if n_divisible else ()),
        unit=("stride_ak", "stride_bn", "stride_cn"))
    options = {"num_warps": cfg["NUM_WARPS"], "num_stages": cfg["NUM_STAGES"]}
    return tc.compile_kernel(kernel, sig, constexprs, attrs, target, options)


def compile_one(job):
    """One configuration's record: (kernel name, target, dtype, config with SPLIT_K where the
    kernel has it, whether to stop after LLIR, the N 16 does not divide or 0) -> the record the
    test reads."""
    kernel_name, target, dtype, cfg, stop_after_llir, unaligned_n = job
    rec = {"target": target, "dtype": dtype, "config": cfg}
    if unaligned_n:
        rec["problem"] = {"N": unaligned_n}
    try:
        k, seconds = compile_config(kernel_name, target, dtype, cfg, n_divisible=not unaligned_n)
        meta = tc.metadata_of(k)
        rec["shared"] = meta.get("shared")
        rec["tmem"] = meta.get("tmem_size")
        rec["compile_s"] = round(seconds, 3)
        # Registers and spills are ptxas's and the AMDGCN's: only a full compile has them.
        if not stop_after_llir and tc.is_nvidia(target):
            rec["registers"], rec["spill_bytes"] = nvidia_resources(k.asm["cubin"])
        elif not stop_after_llir:
            rec["registers"], rec["spill_bytes"] = amd_resources(k.asm.get("amdgcn", ""))
        over = []
        if rec["shared"] is not None and rec["shared"] > tc.shared_limit(target):
            over.append("shared")
        if rec["tmem"] and rec["tmem"] > tc.TMEM_COLUMNS:
            over.append("tmem")
        rec["verdict"] = "out_of_resources" if over else "fits"
        if over:
            rec["over"] = over
    except Exception as e:  # noqa: BLE001 - a refusal is data
        rec["verdict"] = "compile_error"
        rec["error"] = (type(e).__name__ + ": " + str(e).splitlines()[0][:300]) if str(e) else type(e).__name__
    return rec


def init_worker(cache_dir, stop_after_llir):
    """Each process compiles into the same cache directory with the same stage hook."""
    tc.set_cache_dir(cache_dir)
    tc.install_stop_hook(stop_after_llir=stop_after_llir)


def configurations(limit, split_k):
    """The space in its order (NUM_WARPS fastest); with split_k, every configuration at every
    SPLIT_K value (SPLIT_K fastest)."""
    names = list(SPACE)
    configs = [dict(zip(names, v)) for v in itertools.product(*(SPACE[n] for n in names))]
    if limit:
        configs = configs[:limit]
    if not split_k:
        return configs
    return [dict(cfg, SPLIT_K=s) for cfg in configs for s in split_k]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--targets", default="sm_100,sm_120,gfx942,gfx950")
    parser.add_argument("--dtypes", default="f16,f32")
    parser.add_argument("--limit", type=int, default=0, help="at most this many configurations per (target, dtype)")
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="matmul")
    parser.add_argument("--split-k", default="2,4,8,16", help="splitk: the SPLIT_K values each configuration is compiled at")
    parser.add_argument("--jobs", type=int, default=1, help="compile in this many processes")
    parser.add_argument("--stop-after-llir", action="store_true",
                        help="end each compile at LLVM IR (shared, tmem only; no registers)")
    parser.add_argument("--unaligned-n", type=int, default=0,
                        help="compile for this N, which 16 must not divide (N and the B and C row strides unspecialized)")
    args = parser.parse_args()
    if args.unaligned_n and args.unaligned_n % 16 == 0:
        parser.error(f"--unaligned-n {args.unaligned_n}: 16 divides it; pass an N it does not divide")
    split_k = [int(v) for v in args.split_k.split(",")] if args.kernel == "splitk" else []
    cache_dir = tempfile.mkdtemp(prefix="scratchsim_matmul_targets_")
    init_worker(cache_dir, args.stop_after_llir)
    space = dict(SPACE, SPLIT_K=split_k) if split_k else SPACE
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "versions": tc.triton_versions(),
              "kernel": KERNEL_DOC[args.kernel], "space": space,
              "regime": "jit (pointers and leading strides divisible by 16, unit inner strides constexpr 1)"
                        + (f"; N = {args.unaligned_n}: N, stride_bk and stride_cm not divisible by 16"
                           if args.unaligned_n else ""),
              "limits": {t: {"shared": tc.shared_limit(t), "tmem_columns": tc.TMEM_COLUMNS} for t in tc.TARGETS},
              "stages": "to LLVM IR (no ptxas, no AMDGCN)" if args.stop_after_llir else "full",
              "records": []}
    start = time.time()
    # spawn, not fork: a forked child inherits the parent's driver and compiler state.
    pool = (multiprocessing.get_context("spawn").Pool(args.jobs, init_worker, (cache_dir, args.stop_after_llir))
            if args.jobs > 1 else None)
    for target, dtype in itertools.product(args.targets.split(","), args.dtypes.split(",")):
        jobs = [(args.kernel, target, dtype, cfg, args.stop_after_llir, args.unaligned_n)
                for cfg in configurations(args.limit, split_k)]
        # imap keeps the space's order whatever process finished first.
        records = list(pool.imap(compile_one, jobs) if pool else map(compile_one, jobs))
        result["records"].extend(records)
        print(f"{target} {dtype}: {len(jobs)} in {time.time() - start:.0f} s", flush=True)
        result["elapsed_s"] = time.time() - start
        with open(args.out, "w") as f:
            json.dump(result, f, indent=0)
    if pool:
        pool.close()
        pool.join()


if __name__ == "__main__":
    main()
