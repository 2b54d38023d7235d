# Compiles a sweep of Triton kernels for sm_80/90/100/120 and records Triton's own shared
# memory figure per configuration: the fixtures of backends/triton's exactness test.
#
# Runs on the GPU machine (Triton 3.6, PyTorch 2.11, one H100):
#   python3 bench/triton/make_fixtures.py --out $OUT [--deadline 420] [--jobs 16]
# Writes $OUT/index.json (one record per configuration), $OUT/ttgir.tar.gz (the .ttgir of each
# compiled kernel) and $OUT/alloc.tar.gz (the IR after Triton's own shared-memory allocation
# pass, with allocation.offset attributes, for diagnosing mismatches).
import argparse
import hashlib
import io
import json
import multiprocessing as mp
import os
import platform
import sys
import tarfile
import tempfile
import time
import traceback

import triton

# Per-block dynamic shared memory limits of the compile-only targets (bytes), from the CUDA C
# Programming Guide, "Technical Specifications per Compute Capability" (max shared memory per
# block, opt-in): 8.0: 163 KB, 9.0: 227 KB, 10.0: 227 KB, 12.0: 99 KB. For sm_90 the driver's
# own figure (the one Triton compares against) is also recorded at run time.
TARGET_LIMITS = {80: 166912, 90: 232448, 100: 232448, 120: 101376}

# Kernels, their argument types and the JIT's divisibility assumptions (fixture_kernels.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_kernels import ARGS, DIV16, KERNELS  # noqa: E402


def make_configs():
    cfgs = []

    def add(kernel, targets, dtype, params, num_warps, num_stages, out_dtype=None):
        for t in targets:
            cfgs.append(dict(kernel=kernel, target=t, dtype=dtype, out_dtype=out_dtype or dtype,
                             params=dict(params), num_warps=num_warps, num_stages=num_stages))

    all_t = [80, 90, 100, 120]
    # GEMM sweep on the real device: dtypes x tiles x stages x warps.
    tiles = [(64, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64), (256, 128, 64),
             (64, 128, 128)]
    for dtype in ["fp16", "bf16", "fp32", "fp8e4nv"]:
        for (bm, bn, bk) in tiles:
            if dtype == "fp32" and bk > 64:
                continue
            for ns in [1, 2, 3, 4, 5]:
                for nw in [4, 8]:
                    if nw == 4 and bm * bn >= 256 * 128:
                        continue
                    p = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
                    od = "fp16" if dtype == "fp8e4nv" else dtype
                    add("matmul", [90], dtype, p, nw, ns, od)
    # Reduced GEMM sweep on the compile-only targets.
    for dtype in ["fp16", "bf16", "fp32", "fp8e4nv"]:
        for (bm, bn, bk) in [(64, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64)]:
            if dtype == "fp32" and bk > 32:
                continue
            for ns in [2, 3, 4]:
                od = "fp16" if dtype == "fp8e4nv" else dtype
                t = [80, 100, 120] if dtype != "fp8e4nv" else [100, 120]
                add("matmul", t, dtype, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8),
                    8 if bm * bn >= 128 * 256 else 4, ns, od)
    # TMA GEMMs (descriptors; rewritten to pointers below sm_90), optionally warp-specialized.
    for dtype in ["fp16", "bf16", "fp8e4nv"]:
        for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64), (128, 128, 128)]:
            for ns in [2, 3, 4]:
                for ws in [False, True]:
                    t = [90, 100] if ws else [80, 90, 100, 120]
                    if dtype == "fp8e4nv":
                        t = [x for x in t if x >= 90]
                    od = "fp16" if dtype == "fp8e4nv" else dtype
                    add("matmul_tma", t, dtype,
                        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, WARP_SPEC=ws),
                        8 if bn == 256 else 4, ns, od)
    for dtype in ["fp16", "bf16"]:
        for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64)]:
            for ns in [3, 4]:
                for ws in [False, True]:
                    t = [90, 100] if ws else [90, 100, 120]
                    add("matmul_persistent_tma", t, dtype,
                        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_SMS=132, WARP_SPEC=ws),
                        8 if bn == 256 else 4, ns)
    # Attention forward.
    for dtype in ["fp16", "bf16"]:
        for hd in [64, 128]:
            for (bm, bn) in [(64, 64), (128, 64), (128, 128)]:
                for ns in [2, 3]:
                    nw = 8 if bm == 128 else 4
                    add("attn_fwd", all_t if ns == 3 else [90], dtype,
                        dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn), nw, ns)
    # Row reductions.
    for dtype in ["fp16", "fp32"]:
        for bn in [256, 1024, 4096, 16384]:
            for nw in [4, 8, 16]:
                add("softmax", [90] if nw != 8 else all_t, dtype, dict(BLOCK_N=bn), nw, 1)
                add("layernorm", [90] if nw != 8 else all_t, dtype, dict(BLOCK_N=bn), nw, 1)
    for dtype in ["fp16", "fp32"]:
        for (bm, bn) in [(32, 32), (64, 64), (128, 64), (64, 128), (128, 128)]:
            for nw in [4, 8]:
                add("transpose", [90] if nw == 8 else all_t, dtype,
                    dict(BLOCK_M=bm, BLOCK_N=bn), nw, 1)
                add("colsum", [90] if nw == 8 else [80, 90], dtype,
                    dict(BLOCK_M=bm, BLOCK_N=bn), nw, 2)
    for (bm, bn) in [(1, 1024), (4, 256), (16, 128)]:
        for nw in [4, 8]:
            add("argmax", [90], "fp32", dict(BLOCK_M=bm, BLOCK_N=bn), nw, 1)
    for bn in [256, 1024, 4096]:
        for nw in [4, 8]:
            add("cumsum", [90, 80], "fp32", dict(BLOCK_N=bn), nw, 1)
            add("atomic", [90], "fp32", dict(BLOCK_N=bn), nw, 1)
    for (bn, bins) in [(1024, 64), (4096, 256), (1024, 1024)]:
        add("histogram", [90], "i32", dict(BLOCK_N=bn, NUM_BINS=bins), 4, 1)
    # The seed's GeGLU: fp32, 4 warps; the seed used BLOCK_T=16, RDIM=2048, BLOCK_H=16, 3 stages.
    for (bt, bh) in [(16, 16), (16, 32), (32, 16)]:
        for ns in [1, 2, 3, 4]:
            add("geglu", [90] if ns != 3 else all_t, "fp32",
                dict(BLOCK_T=bt, RDIM=2048, BLOCK_H=bh), 4, ns)
    for (bt, rd) in [(16, 1024), (16, 512), (64, 256)]:
        add("geglu", [90], "fp32", dict(BLOCK_T=bt, RDIM=rd, BLOCK_H=16), 4, 3)
    for i, c in enumerate(cfgs):
        key = json.dumps([c["kernel"], c["target"], c["dtype"], c["out_dtype"], c["params"],
                          c["num_warps"], c["num_stages"]], sort_keys=True)
        c["id"] = "%s_sm%d_%s" % (c["kernel"], c["target"], hashlib.sha1(key.encode()).hexdigest()[:10])
    return cfgs


# ----------------------------------------------------------------------------------------------
# Worker (spawned process)
# ----------------------------------------------------------------------------------------------


def _signature(cfg):
    fn = KERNELS[cfg["kernel"]]
    types = list(ARGS[cfg["kernel"]])
    sig, attrs = {}, {}
    div16 = DIV16.get(cfg["kernel"], set())
    argi = 0
    for i, name in enumerate(fn.arg_names):
        if name in cfg["params"]:
            sig[name] = "constexpr"
            continue
        t = types[argi]
        argi += 1
        if t == "*A":
            t = "*" + cfg["dtype"]
        elif t == "*C":
            t = "*" + cfg["out_dtype"]
        sig[name] = t
        if t.startswith("*") or name in div16:
            attrs[(i, )] = [["tt.divisibility", 16]]
    return fn, sig, attrs


def _alloc_ir(ttgir_text, cap):
    """The IR after Triton's own shared-memory allocation pass (offsets attached)."""
    from triton._C.libtriton import ir, passes, nvidia
    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
        f.write(ttgir_text)
        path = f.name
    mod = ir.parse_mlir_module(path, ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    for getter in [lambda: passes.ttgpuir.add_combine_tensor_select_and_if,
                   lambda: passes.ttgpuir.add_allocate_warp_groups,
                   lambda: passes.convert.add_scf_to_cf,
                   lambda: passes.gluon.add_inliner]:
        try:
            getter()(pm)
        except AttributeError:
            pass
    try:
        from triton.backends.nvidia.compiler import get_ptx_version_from_options, CUDAOptions
        ptx = get_ptx_version_from_options(CUDAOptions(), cap)
    except Exception:
        ptx = 88
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, ptx)
    try:
        pm.run(mod, "alloc")
    except TypeError:
        pm.run(mod)
    os.unlink(path)
    return str(mod)


def compile_one(cfg):
    import triton as _t
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    rec = {k: cfg[k] for k in ["id", "kernel", "target", "dtype", "out_dtype", "params",
                               "num_warps", "num_stages"]}
    rec["target_limit"] = TARGET_LIMITS[cfg["target"]]
    try:
        fn, sig, attrs = _signature(cfg)
        rec["signature"] = sig
        src = ASTSource(fn, sig, constexprs=dict(cfg["params"]), attrs=attrs)
        target = GPUTarget("cuda", cfg["target"], 32)
        t0 = time.perf_counter()
        k = _t.compile(src, target=target,
                       options={"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})
        rec["compile_s"] = time.perf_counter() - t0
        md = k.metadata
        rec["shared"] = int(md.shared)
        for key in ["tmem_size", "num_ctas", "global_scratch_size", "global_scratch_align",
                    "profile_scratch_size", "name"]:
            if hasattr(md, key):
                v = getattr(md, key)
                if isinstance(v, (int, str, float, bool)) or v is None:
                    rec[key] = v
        rec["metadata_num_warps"] = int(md.num_warps)
        ttgir = k.asm.get("ttgir")
        rec["ttgir"] = ttgir
        rec["over_target_limit"] = rec["shared"] > rec["target_limit"]
        if cfg["target"] == 90:
            # The launch-time check of the real device (compiler.py _init_handles).
            try:
                k._init_handles()
                rec["loaded"] = True
            except _t.runtime.errors.OutOfResources as e:
                rec["out_of_resources"] = {"required": getattr(e, "required", None),
                                           "limit": getattr(e, "limit", None),
                                           "name": getattr(e, "name", None),
                                           "message": str(e)}
            except Exception as e:  # noqa: BLE001
                rec["load_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        try:
            rec["alloc_ir"] = _alloc_ir(ttgir, cfg["target"])
        except Exception as e:  # noqa: BLE001
            rec["alloc_ir_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
    except Exception as e:  # noqa: BLE001
        rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:1500])
        rec["traceback"] = traceback.format_exc()[-3000:]
    return rec


def _init_worker(cache_root):
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(dir=cache_root)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=420.0)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    cfgs = make_configs()
    if args.limit:
        cfgs = cfgs[:args.limit]
    print("configs:", len(cfgs), flush=True)
    info = {"triton": triton.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    try:
        import torch
        info["torch"] = torch.__version__
        info["device"] = torch.cuda.get_device_name(0)
        info["capability"] = list(torch.cuda.get_device_capability(0))
        from triton.runtime import driver
        props = driver.active.utils.get_device_properties(0)
        info["max_shared_mem_sm90_driver"] = props.get("max_shared_mem")
        info["device_properties"] = {k: v for k, v in props.items()
                                     if isinstance(v, (int, str))}
    except Exception as e:  # noqa: BLE001
        info["device_error"] = str(e)
    print(json.dumps(info), flush=True)

    cache_root = tempfile.mkdtemp()
    ctx = mp.get_context("spawn")
    # Heavy kernels first so the tail of the run is short ones.
    order = sorted(range(len(cfgs)), key=lambda i: (cfgs[i]["kernel"] not in
                                                    ("attn_fwd", "geglu", "matmul_persistent_tma"),
                                                    cfgs[i]["target"] != 90))
    results = {}
    pool = ctx.Pool(args.jobs, initializer=_init_worker, initargs=(cache_root, ),
                    maxtasksperchild=40)
    pending = {i: pool.apply_async(compile_one, (cfgs[i], )) for i in order}
    while pending and time.time() - start < args.deadline:
        done = [i for i, r in pending.items() if r.ready()]
        for i in done:
            try:
                results[i] = pending.pop(i).get()
            except Exception as e:  # noqa: BLE001
                results[i] = {"id": cfgs[i]["id"], "error": "worker: %s" % e}
        if not done:
            time.sleep(0.2)
        if len(results) % 50 == 0 and done:
            print("done %d/%d at %.0fs" % (len(results), len(cfgs), time.time() - start),
                  flush=True)
    for i in pending:
        results[i] = dict({k: cfgs[i][k] for k in ["id", "kernel", "target", "dtype",
                                                     "out_dtype", "params", "num_warps",
                                                     "num_stages"]},
                          error="not compiled: deadline reached")
    pool.terminate()

    recs = [results[i] for i in range(len(cfgs))]
    tg = tarfile.open(os.path.join(args.out, "ttgir.tar.gz"), "w:gz")
    ta = tarfile.open(os.path.join(args.out, "alloc.tar.gz"), "w:gz")
    for r in recs:
        for key, tar, ext in [("ttgir", tg, ".ttgir"), ("alloc_ir", ta, ".alloc.mlir")]:
            text = r.pop(key, None)
            if text:
                data = text.encode()
                ti = tarfile.TarInfo(r["id"] + ext)
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
    tg.close()
    ta.close()
    ok = [r for r in recs if "shared" in r]
    info["configs"] = len(recs)
    info["compiled"] = len(ok)
    info["wall_s"] = time.time() - start
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"info": info, "records": recs}, f, indent=1, sort_keys=True)
    errs = {}
    for r in recs:
        if "error" in r:
            errs.setdefault((r["kernel"], r["target"]), []).append(r["error"][:200])
    for k, v in sorted(errs.items()):
        print("ERRORS", k, len(v), v[0])
    oor = [r for r in recs if "out_of_resources" in r]
    print("compiled %d/%d, OutOfResources on sm_90: %d, over target limit: %d, %.0fs" %
          (len(ok), len(recs), len(oor), sum(1 for r in ok if r["over_target_limit"]),
           time.time() - start))
    tr = [r for r in recs if "traceback" in r]
    if tr:
        print(tr[0]["traceback"])


if __name__ == "__main__":
    main()
