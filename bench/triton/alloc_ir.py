#!/usr/bin/env python3
"""Triton's own shared-memory allocation of a .ttgir, for diagnosing importer misses.

Runs, in the Triton release of the interpreter it is started with, the passes the backend's
make_llir runs up to and including its shared-memory allocation (NVIDIA: combine_tensor_select_and_if,
allocate_warp_groups, scf_to_cf, inliner, allocate_shared_memory_nv; AMD 3.6: update_async_wait_count,
optimize_lds_usage, scf_to_cf, inliner, index_to_llvmir, allocate_shared_memory; AMD 3.7+: the
same without optimize_lds_usage, which moved to make_ttgir) and prints the IR with each buffer's
`allocation.offset` and the module's `ttg.shared`. No GPU is needed.

  nice /work/venvs/triton36/bin/python bench/triton/alloc_ir.py K.ttgir            # target from ttg.target
  nice /work/venvs/triton-latest/bin/python bench/triton/alloc_ir.py K.ttgir --grep offset
"""
import argparse
import inspect
import re
import sys


def _call(fn, *args):
    """Calls a pass adder with as many of `args` as its binding takes."""
    for n in range(len(args), -1, -1):
        try:
            return fn(*args[:n])
        except TypeError:
            continue
    raise TypeError("cannot call %r" % fn)


def allocate(path):
    from triton._C.libtriton import ir, passes
    text = open(path).read()
    m = re.search(r'ttg\.target = "([a-z]+):([0-9a-z]+)"', text)
    if not m:
        sys.exit("%s: no ttg.target" % path)
    vendor, arch = m.group(1), m.group(2)
    ctx = ir.context()
    ir.load_dialects(ctx)
    if vendor == "cuda":
        from triton._C.libtriton import nvidia
        nvidia.load_dialects(ctx)
    else:
        from triton._C.libtriton import amd
        amd.load_dialects(ctx)
    mod = ir.parse_mlir_module(path, ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    if vendor == "cuda":
        from triton.backends.nvidia.compiler import get_ptx_version_from_options, CUDAOptions
        cap = int(arch)
        try:
            ptx = get_ptx_version_from_options(CUDAOptions(), "sm_%d" % cap)
        except Exception:
            ptx = 88
        passes.ttgpuir.add_combine_tensor_select_and_if(pm)
        _call(passes.ttgpuir.add_allocate_warp_groups, pm, False)
        passes.convert.add_scf_to_cf(pm)
        passes.gluon.add_inliner(pm)
        nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, ptx)
    else:
        amd.passes.ttgpuir.add_update_async_wait_count(pm, arch)
        if hasattr(amd.passes.ttgpuir, "add_optimize_lds_usage") and "optimize_lds_usage" in inspect.getsource(
                __import__("triton.backends.amd.compiler", fromlist=["x"]).HIPBackend.make_llir):
            amd.passes.ttgpuir.add_optimize_lds_usage(pm, arch, 0)
        if hasattr(amd.passes.ttgpuir, "add_warp_pipeline_conversion"):
            amd.passes.ttgpuir.add_warp_pipeline_conversion(pm, arch)
        passes.convert.add_scf_to_cf(pm)
        passes.gluon.add_inliner(pm)
        passes.convert.add_index_to_llvmir(pm)
        _call(amd.passes.ttgpuir.add_allocate_shared_memory, pm, arch)
    try:
        pm.run(mod, "alloc")
    except TypeError:
        pm.run(mod)
    return str(mod)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ttgir")
    ap.add_argument("--grep", help="print only lines containing this text (and the module line)")
    args = ap.parse_args()
    out = allocate(args.ttgir)
    for line in out.splitlines():
        if args.grep is None or args.grep in line or line.startswith("module"):
            print(line)


if __name__ == "__main__":
    main()
