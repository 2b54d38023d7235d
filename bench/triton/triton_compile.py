# Shared pieces of the Triton fixture scripts: the compile targets (with their per-block shared
# memory / LDS limits), the JIT's argument specialization, and a compile call that needs no GPU
# and no driver (triton.compile(ASTSource(...), target=GPUTarget(...))), optionally stopping
# after the LLVM-IR stage, where Triton has already set metadata.shared and tmem_size.
#
# Used by make_catalogue.py (CPU, any Triton >= 3.6), probe_targets.py and the fixture-set
# scripts (make_cvt_fixtures.py, make_lds_fixtures.py: write_fixture_set).
import os
import re
import time

# ----------------------------------------------------------------------------------------------
# Targets
# ----------------------------------------------------------------------------------------------
# NVIDIA: maximum shared memory per thread block (dynamic, opt-in), CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability" (table "Technical Specifications per
# Compute Capability", row "Maximum amount of shared memory per thread block"): 8.0: 163 KB,
# 8.6: 99 KB, 8.9: 99 KB, 9.0: 227 KB, 10.0: 227 KB, 12.0: 99 KB (KB = 1024 bytes). This is the
# figure the driver reports as CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN and the one
# Triton's CompiledKernel._init_handles compares metadata.shared against (OutOfResources).
# AMD: LDS per workgroup. Triton's HIP backend: AMD TargetInfo::getSharedMemorySize() returns
# 160 KiB for gfx950 and 64 KiB for every other arch (third_party/amd/lib/TritonAMDGPUToLLVM/
# TargetInfo.cpp); the OptimizeLDSUsage pass and the HIP driver's max_shared_mem use the same
# figures. AMD's docs: MI300X (gfx942) "LDS 64 KiB per CU", MI355X (gfx950) "LDS 160 KiB per CU"
# (ROCm docs, "GPU hardware specifications").
TARGETS = {
    "sm_80": ("cuda", 80, 32, 166912),
    "sm_86": ("cuda", 86, 32, 101376),
    "sm_89": ("cuda", 89, 32, 101376),
    "sm_90": ("cuda", 90, 32, 232448),
    "sm_100": ("cuda", 100, 32, 232448),
    "sm_120": ("cuda", 120, 32, 101376),
    "gfx942": ("hip", "gfx942", 64, 65536),
    "gfx950": ("hip", "gfx950", 64, 163840),
    # CDNA5 (wave32), for the ops only it lowers (TDM copies, LDS barriers): compiled here for
    # metadata.shared only; its LDS limit (320 KiB) is not judged against.
    "gfx1250": ("hip", "gfx1250", 32, 327680),
}
# Blackwell tensor memory: 512 columns per SM (Triton's _init_handles checks tmem_size <= 512).
TMEM_COLUMNS = 512


def is_nvidia(target):
    return TARGETS[target][0] == "cuda"


def capability(target):
    return TARGETS[target][1] if is_nvidia(target) else 0


def gpu_target(target):
    from triton.backends.compiler import GPUTarget
    backend, arch, warp, _ = TARGETS[target]
    return GPUTarget(backend, arch, warp)


def shared_limit(target):
    return TARGETS[target][3]


# ----------------------------------------------------------------------------------------------
# Specialization (what triton.runtime.jit gives an argument at launch)
# ----------------------------------------------------------------------------------------------
# Triton's JIT (native_specialize_impl): an int equal to 1 becomes constexpr 1; an int or a
# tensor's data pointer divisible by 16 gets "D" -> [["tt.divisibility", 16]]; on AMD a tensor
# within 2 GiB also gets "S" -> [["tt.pointer_range", 32]] (HIPBackend.parse_attr, while
# AMDGCN_USE_BUFFER_OPS is on, its default). Regimes used here:
#   "jit":  pointers 16-byte aligned (+ pointer_range 32 on AMD), sizes/strides listed as
#           multiples of 16 get divisibility 16, unit strides become constexpr 1.
#   "none": nothing specialized (the JIT with do_not_specialize / odd sizes): every argument a
#           plain runtime value, no attrs.
REGIMES = ("jit", "none")


def build_signature(fn, arg_types, params, regime, target, div16=(), unit=()):
    """fn: a JITFunction; arg_types: {name: type} for the runtime arguments (e.g. '*fp16',
    'i32', 'fp32'); params: constexpr values by name. Returns (signature, constexprs, attrs)."""
    sig, constexprs, attrs = {}, dict(params), {}
    for i, name in enumerate(fn.arg_names):
        if name in params:
            sig[name] = "constexpr"
            continue
        t = arg_types[name]
        if regime == "jit" and name in unit:
            sig[name] = "constexpr"
            constexprs[name] = 1
            continue
        sig[name] = t
        if regime != "jit":
            continue
        a = []
        if t.startswith("*") or name in div16:
            a.append(["tt.divisibility", 16])
        if t.startswith("*") and not is_nvidia(target):
            a.append(["tt.pointer_range", 32])
        if a:
            attrs[(i, )] = a
    return sig, constexprs, attrs


# ----------------------------------------------------------------------------------------------
# Compile
# ----------------------------------------------------------------------------------------------
_STOP = {"value": True}


def _stages_hook(*args):
    """knobs.runtime.add_stages_inspection_hook: replace every stage after 'llir' (ptx/cubin,
    amdgcn/hsaco) by a stub, so the compile ends once metadata.shared is known. The binary stage
    returns empty bytes so CompiledKernel can still be built from the cache entry.
    Triton >= 3.7 also calls the hook with no arguments from compile() for a (key, hash) pair
    that joins the cache key; 3.6 calls it only from backend.add_stages."""
    if not args:
        tag = "stop-after-llir" if _STOP["value"] else "full"
        return tag, tag
    backend, stages = args[0], args[1]
    if not _STOP["value"]:
        return
    keys = list(stages.keys())
    if "llir" not in keys:
        return

    def first(src, metadata):
        # make_ptx / make_amdgcn set the kernel's name from their output; take it from the IR.
        m = re.search(r"^define\b[^@\n]*\bkernel\b[^@\n]*@([\w$.]+)\(", src, re.M) or \
            re.search(r"^define\b[^@\n]*@([\w$.]+)\(", src, re.M)
        metadata["name"] = m.group(1) if m else "?"
        return ""

    for i, k in enumerate(keys[keys.index("llir") + 1:]):
        if k == backend.binary_ext:
            stages[k] = lambda src, metadata: b""
        elif i == 0:
            stages[k] = first
        else:
            stages[k] = lambda src, metadata: ""


def install_stop_hook(stop_after_llir=True):
    from triton import knobs
    _STOP["value"] = stop_after_llir
    knobs.runtime.add_stages_inspection_hook = _stages_hook
    knobs.compilation.always_compile = True


def compile_kernel(fn, signature, constexprs, attrs, target, options):
    """Returns (CompiledKernel, seconds). fn: a JITFunction (Triton or Gluon), or the path of a TTGIR file, whose
    module says its signature and options (then the other arguments but target are unused)."""
    import triton
    from triton.compiler import ASTSource
    t0 = time.perf_counter()
    if isinstance(fn, str):
        k = triton.compile(fn, target=gpu_target(target))
    else:
        # A Gluon kernel (triton.experimental.gluon.jit) is built by its own AST source.
        source = ASTSource
        if type(fn).__name__ == "GluonJITFunction":
            from triton.experimental.gluon._runtime import GluonASTSource as source
        src = source(fn, signature, constexprs=constexprs, attrs=attrs)
        k = triton.compile(src, target=gpu_target(target), options=options)
    return k, time.perf_counter() - t0


METADATA_KEYS = ["shared", "tmem_size", "num_warps", "num_ctas", "global_scratch_size",
                 "global_scratch_align", "profile_scratch_size", "name"]


def metadata_of(k):
    out = {}
    for key in METADATA_KEYS:
        if hasattr(k.metadata, key):
            v = getattr(k.metadata, key)
            if isinstance(v, (int, str, float, bool)) or v is None:
                out[key] = v
    return out


def triton_versions():
    import platform
    import triton
    return {"triton": triton.__version__, "python": platform.python_version()}


def set_cache_dir(path):
    # Triton 3.9 warns that its FP-fusion default will change; keep the default (fusion on) and
    # say so, so every version compiles with the same setting.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.makedirs(path, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = path


# ----------------------------------------------------------------------------------------------
# Fixture sets (tests/data/triton/<set>/<version>.{tsv,tar.gz})
# ----------------------------------------------------------------------------------------------
def write_fixture_set(default_cache, header, entries):
    """The main of a fixture-set script: parses --out and --cache, compiles every entry of
    entries(), an iterable of (id, fields, fn, signature, constexprs, attrs, target, options)
    (fn a JITFunction or a TTGIR file's path: compile_kernel),
    and writes <out>/<version>/<id>.ttgir and <out>/<version>.tsv (header, then one line of id,
    fields and metadata.shared per kernel). A configuration Triton refuses is skipped and said."""
    import argparse
    import triton
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache", default=default_cache)
    args = ap.parse_args()
    version = triton.__version__
    set_cache_dir(os.path.join(args.cache, version))
    install_stop_hook(True)
    ttgir_dir = os.path.join(args.out, version)
    os.makedirs(ttgir_dir, exist_ok=True)
    lines = ["\t".join(["id"] + header + ["shared"])]
    for fid, fields, fn, sig, cons, attrs, target, options in entries():
        try:
            k, _ = compile_kernel(fn, sig, cons, attrs, target, options)
        except Exception as e:  # noqa: BLE001 - reported, and the set goes on
            print("skipped", fid, type(e).__name__, flush=True)
            continue
        with open(os.path.join(ttgir_dir, fid + ".ttgir"), "w") as f:
            f.write(k.asm["ttgir"])
        lines.append("\t".join([fid] + [str(x) for x in fields] + [str(k.metadata.shared)]))
        print(lines[-1], flush=True)
    with open(os.path.join(args.out, version + ".tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
