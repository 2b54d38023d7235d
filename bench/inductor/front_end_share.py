#!/usr/bin/env python3
"""What reusing Triton's front end across num_stages could save the Inductor hook (docs/validation/
inductor-gpu.md, "Reusing the front end across num_stages"): a lowering is the front end (make_ir
and make_ttir: the TTIR) and the TTGIR passes; the TTIR does not depend on num_stages (the front end
reads num_warps through tl.extra.cuda's num_warps(), never num_stages), so choices that differ in
num_stages alone could lower from one TTIR.

    python3 bench/inductor/front_end_share.py

1. The tutorial matmul (bench/python/triton_kernels.py) for sm_90: the milliseconds of each stage
   per configuration, whether the TTIR is the same across num_stages and num_warps, and whether the
   TTGIR lowered from the TTIR's text equals the one lowered from the source.
2. The fast path's lowerings on the recorded exhaustive FlexAttention spaces
   (tests/data/inductor/space_fwd_d{128,256}_sm90.json, replayed as tests/python/test_inductor.py
   does): how many share everything but num_stages with an earlier lowering.
Needs Triton (3.6 measured) and scratchsim; no GPU, no PyTorch.
"""
import json
import os
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
import triton_compile as tc  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.compiler import ASTSource, make_backend  # noqa: E402
from triton_kernels import matmul_kernel  # noqa: E402

import scratchsim.inductor as ssi  # noqa: E402

ARG_TYPES = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
                 stride_ak="i32", stride_bk="i32", stride_bn="i32", stride_cm="i32", stride_cn="i32")
TARGET = GPUTarget("cuda", 90, 32)


def lower_stages(blocks, num_stages, num_warps, ttir_text=None):
    """(ttir, ttgir, {stage: seconds}) for one tutorial-matmul configuration, the front end
    replaced by parsing `ttir_text` where given."""
    backend = make_backend(TARGET)
    bm, bn, bk = blocks
    sig, constexprs, attrs = tc.build_signature(
        matmul_kernel, ARG_TYPES, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, "jit", "sm_90",
        div16=("M", "N", "K", "stride_am", "stride_bk", "stride_cm"), unit=("stride_ak", "stride_bn", "stride_cn"))
    src = ASTSource(matmul_kernel, sig, constexprs, attrs)
    opts = backend.parse_options(dict(backend.parse_options({"num_warps": num_warps, "num_stages": num_stages}).__dict__,
                                      **src.parse_options()))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    stages = {}
    backend.add_stages(stages, opts, src.language)
    metadata = {"hash": "front_end_share", "target": TARGET, **opts.__dict__}
    seconds = {}
    t = time.perf_counter()
    if ttir_text is None:
        module = src.make_ir(TARGET, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
        seconds["make_ir"] = time.perf_counter() - t
        t = time.perf_counter()
        module = stages["ttir"](module, metadata)
        seconds["make_ttir"] = time.perf_counter() - t
    else:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kernel.ttir")
            with open(path, "w") as f:
                f.write(ttir_text)
            module = ir.parse_mlir_module(path, context)
        module.context = context
        seconds["parse_ttir"] = time.perf_counter() - t
    ttir = str(module)
    t = time.perf_counter()
    module = stages["ttgir"](module, metadata)
    seconds["make_ttgir"] = time.perf_counter() - t
    return ttir, str(module), seconds


def tutorial_matmul():
    configs = [((bm, bn, bk), s) for bm in (64, 128) for bn in (64, 128, 256) for bk in (32, 64) for s in (2, 3, 4)]
    lower_stages(*configs[0], 4)  # first-use costs out of the timing
    totals = {}
    for blocks, stages in configs:
        for name, s in lower_stages(blocks, stages, 4)[2].items():
            totals[name] = totals.get(name, 0.0) + s
    print("tutorial matmul, sm_90, %d configurations: ms per configuration %s" % (
        len(configs), ", ".join(f"{k} {1e3 * v / len(configs):.1f}" for k, v in totals.items())))
    a, b, c = (lower_stages((128, 128, 64), s, w) for s, w in ((3, 4), (2, 8), (4, 4)))
    print("TTIR the same at num_stages 3/2/4 and num_warps 4/8/4:", a[0] == b[0] == c[0])
    reparsed = lower_stages((128, 128, 64), 2, 8, ttir_text=a[0])
    print("TTGIR from the parsed TTIR equal to the source's: %s (parse %.1f ms, front end %.1f ms)" % (
        reparsed[1] == b[1], 1e3 * reparsed[2]["parse_ttir"], 1e3 * (b[2]["make_ir"] + b[2]["make_ttir"])))


def fast_path_share(head_dim):
    with open(os.path.join(ROOT, f"tests/data/inductor/space_fwd_d{head_dim}_sm90.json")) as f:
        space = json.load(f)
    rows = {f"num_warps={c['params']['num_warps']},\n'BLOCK_ROW': {i}\n": c for i, c in enumerate(space["configs"])}
    lowered = []

    def check_source(source, *args):
        c = rows[source]
        lowered.append(c["params"])
        return {"verdict": c["verdict"], "fits": c["verdict"] == "FITS", "shared": c["shared"], "limit": space["limit"],
                "params": dict(c["params"]), "message": f"Required: {c['shared']}", "lower_s": 0.0, "simulate_s": 0.0}
    ssi._VERDICTS = {}
    ssi.check_source = check_source
    entries = [(types.SimpleNamespace(bmreq=types.SimpleNamespace(kernel_name="triton_t")), "flex_attention", src,
                dict(c["params"])) for src, c in rows.items()]
    pruner = ssi.Pruner(None, "sm_90", "h200", False, "keep", False, None, True, fast=True)
    pruner._pool = None
    pruner._decide(entries, time.perf_counter())
    seen, shared = set(), 0
    for params in lowered:
        key = tuple(sorted((k, v) for k, v in params.items() if k != "num_stages"))
        shared += key in seen
        seen.add(key)
    print(f"FlexAttention forward, head dim {head_dim}: the fast path lowers {len(lowered)} of {len(rows)}; "
          f"{shared} share everything but num_stages with an earlier lowering")


if __name__ == "__main__":
    tutorial_matmul()
    for d in (128, 256):
        fast_path_share(d)
