#!/usr/bin/env python3
"""What a cp.async costs in registers in Triton's sm_90 matmul (models/graphs/triton_matmul.pbtxt,
registers_per_thread).

    python3 bench/planner/copy_registers.py [SWEEP.json.gz ...]

1. On the CPU, Triton's own compile for sm_90 (its bundled ptxas; bench/python/triton_kernels.py
   matmul_kernel) of a few configurations: the LDGSTS in the SASS against the copies a thread
   issues per K step (A: BLOCK_M x BLOCK_K x ELT / 16 bytes, B likewise, but one 4-byte copy per
   element for f32 wgmma), times the stages the prologue fills plus the loop's one.
2. Over the sweeps' ptxas counts (default: the H200 workload sweeps' f32 and f16 compiles), for
   every pair of configurations that differ only in BLOCK_K (32 to 64) and neither spills nor
   hits 255: registers added per copy added.
Needs Triton 3.6 (for part 1; no GPU).
"""
import glob
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SASS_CONFIGS = [("f32", (64, 128, 32, 3, 4)), ("f32", (64, 128, 64, 3, 4)), ("f32", (128, 128, 32, 3, 4)),
                ("f32", (128, 128, 64, 3, 4)), ("f16", (128, 128, 64, 3, 4)), ("f16", (128, 128, 128, 3, 4))]


def copies(dtype, bm, bn, bk, warps):
    """(A copies, B copies) a thread issues per K step."""
    elt, threads = (4 if dtype == "f32" else 2), warps * 32
    b_width = 4 if (dtype == "f32" and bm >= 64) else 16
    return bm * bk * elt / 16 / threads, bk * bn * elt / b_width / threads


def sass_counts():
    sys.argv = sys.argv[:1]
    sys.path.insert(0, HERE)
    import triton
    import compile_matmul_targets as cmt
    tc = cmt.tc
    tc.set_cache_dir(tempfile.mkdtemp())
    tc.install_stop_hook(stop_after_llir=False)
    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    print(f"Triton {triton.__version__}, sm_90 (its bundled ptxas):")
    for dtype, (bm, bn, bk, stages, warps) in SASS_CONFIGS:
        kernel, _ = cmt.compile_config("matmul", "sm_90", dtype, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                                                                  "NUM_STAGES": stages, "NUM_WARPS": warps})
        regs, local = cmt.nvidia_resources(kernel.asm["cubin"])
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(kernel.asm["cubin"])
            f.flush()
            sass = subprocess.run([cuobjdump, "-sass", f.name], capture_output=True, text=True).stdout
        a, b = copies(dtype, bm, bn, bk, warps)
        print(f"  {dtype} {bm}x{bn}x{bk} {stages} stages {warps} warps: {len(re.findall('LDGSTS', sass))} LDGSTS "
              f"= {stages} x ({a:.0f} A + {b:.0f} B copies); {regs} registers, {local} B local")


def per_copy(paths):
    for dtype in ("f32", "f16"):
        regs = {}
        for path in paths:
            if f"-{dtype}" not in os.path.basename(path):
                continue
            for c in json.load(gzip.open(path))["compiled"].values():
                if c.get("kind") == "matmul" and c.get("status") == "ok" and c.get("n_regs") is not None:
                    cfg = c["config"]
                    key = (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["NUM_STAGES"], cfg["NUM_WARPS"])
                    regs[key] = (c["n_regs"], c["n_spills"])
        for kind, wgmma in (("wgmma", True), ("mma.sync", False)):
            ratios = []
            for (bm, bn, bk, st, w), (r, s) in regs.items():
                other = regs.get((bm, bn, 64, st, w))
                if bk != 32 or (bm >= 64) != wgmma or other is None or s or other[1] or other[0] >= 255:
                    continue
                added = sum(copies(dtype, bm, bn, 64, w)) - sum(copies(dtype, bm, bn, 32, w))
                ratios.append((other[0] - r) / added)
            if ratios:
                print(f"  {dtype} {kind}: BLOCK_K 32 to 64 on {len(ratios)} pairs: registers per added copy, median "
                      f"{statistics.median(ratios):.2f} (10th-90th {sorted(ratios)[len(ratios) // 10]:.2f}-"
                      f"{sorted(ratios)[len(ratios) * 9 // 10]:.2f})")


def main():
    paths = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "tests", "data", "planner", "h200-heldout2-*", "h200-f*.json.gz")))
    print("ptxas's counts over " + ", ".join(os.path.relpath(p, ROOT) for p in paths) + ":")
    per_copy(paths)
    sass_counts()


if __name__ == "__main__":
    main()
