"""Triton: check one config of a @triton.jit kernel before compiling it, and prune an autotuner's
configs to those that fit.

The kernel is lowered with Triton's own front end and TTGIR passes only (make_ttir, make_ttgir:
no LLVM, no ptxas, no GPU needed) for the local GPU or any named target ("sm_90", "sm_100",
"sm_120", "gfx942", "gfx950", ...), and its TTGIR is simulated with Triton's allocation: the
shared-memory figure is Triton's metadata.shared, the verdict Triton's OutOfResources.

    import scratchsim.triton as sst
    r = sst.check(matmul_kernel, triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128},
                  num_warps=8, num_stages=5), {"a_ptr": "*fp16", ..., "M": "i32"}, target="sm_90")
    r["fits"], r["violations"][0]["message"]

    @triton.autotune(configs=configs, key=["M", "N", "K"],
                     prune_configs_by={"early_config_prune": sst.early_prune()})
    @triton.jit
    def matmul_kernel(...): ...

Works with Triton 3.6 and later (tested on 3.6.0 and 3.9.0).
"""
from __future__ import annotations

import inspect
import logging
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Mapping, Sequence

import scratchsim
from scratchsim import Error
from scratchsim import _to_fit

__all__ = ["check", "lower", "lower_compiled", "early_prune", "device_for_arch", "tensor", "target_of",
           "device_for", "default_workers", "load_source_module", "Lowered", "map_by_role", "dot_shapes",
           "EarlyPrune", "installed_release", "compiled_registers"]

log = logging.getLogger("scratchsim.triton")

# The device model a target is judged on when none is named: the shipped model of that arch.
_DEVICE_FOR_ARCH = {
    "sm_70": "v100", "sm_75": "t4", "sm_80": "a100", "sm_86": "a10", "sm_89": "l40s", "sm_90": "h100",
    "sm_100": "b200", "sm_120": "rtx5090", "gfx942": "mi300x", "gfx950": "mi355x",
}


def _triton():
    try:
        import triton  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise Error("scratchsim.triton needs Triton (pip install triton)") from e
    return triton


def installed_release() -> str:
    """The version of the installed Triton, the one that lowers kernels here: the core applies
    that release's allocation rules to what it lowered (simulate_ttgir's triton_release)."""
    return _triton().__version__


def target_of(target: Any = None):
    """A triton GPUTarget: None is the local GPU (Triton's active driver); "sm_90", "sm90a",
    "cuda:90", 90 are NVIDIA targets; "gfx942", "hip:gfx950" AMD ones; a GPUTarget is kept."""
    _triton()
    from triton.backends.compiler import GPUTarget
    if isinstance(target, GPUTarget):
        return target
    if target is None:
        try:
            from triton.runtime import driver
            return driver.active.get_current_target()
        except Exception as e:
            raise Error(f"no GPU here for Triton to target ({e}); name a target, e.g. target=\"sm_90\"") from None
    text = str(target).strip().lower()
    if text.startswith("hip:"):
        text = text[4:]
    if text.startswith("gfx"):
        # CDNA (gfx9xx) runs 64-thread wavefronts; RDNA (gfx10+) 32.
        return GPUTarget("hip", text, 64 if text.startswith("gfx9") else 32)
    for prefix in ("cuda:", "sm_", "sm"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    text = text.rstrip("af")  # sm_90a, sm_100f: the same compute capability
    if not text.isdigit():
        raise Error(f"target '{target}': expected sm_NN, cuda:NN, gfxNNN or hip:gfxNNN")
    return GPUTarget("cuda", int(text), 32)


def _arch(target) -> str:
    return f"sm_{target.arch}" if target.backend == "cuda" else str(target.arch)


_DOT = re.compile(r"\b(tt\.dot|tt\.dot_scaled|ttng\.warp_group_dot|ttng\.tc_gen5_mma|ttng\.tc_gen5_mma_scaled)\s")
_SHAPE = re.compile(r"(?:memdesc|tensor)<(\d+(?:x\d+)*)x[a-z]")


def dot_shapes(ttgir: str) -> list:
    """(M, N, K) of every matrix product in lowered TTIR or TTGIR (tt.dot; sm_90's warp_group_dot
    and sm_100's tc_gen5_mma, which Triton lowers it to): A is the first operand type (M x K), B
    the second (K x N); a batched product's leading dimension is dropped. The TTIR's tt.dot is the
    product as the kernel wrote it; Triton 3.9's TTGIR for sm_80 splits it along K in 16s."""
    out = []
    for line in ttgir.splitlines():
        m = _DOT.search(line)
        if not m:
            continue
        types = line[m.end():]
        colon = re.search(r":\s*(?:!ttg\.memdesc|tensor)<", types)
        if not colon:
            continue
        shapes = [tuple(int(d) for d in s.split("x")) for s in _SHAPE.findall(types[colon.start():])]
        if len(shapes) < 2 or len(shapes[0]) < 2 or len(shapes[1]) < 2:
            continue
        (m_, k), (k2, n) = shapes[0][-2:], shapes[1][-2:]
        if k == k2:
            out.append((m_, n, k))
    return out


_DOT_PRECISION = re.compile(r"\btt\.dot\s[^\n]*?\binputPrecision\s*=\s*(\w+)")


def dot_input_precision(ttir: str) -> str | None:
    """The input precision Triton gives the first tt.dot of lowered TTIR (tl.dot's
    input_precision, or the backend's default: "tf32" for 32-bit operands on NVIDIA targets,
    "ieee" on AMD's), or None where no product states one."""
    m = _DOT_PRECISION.search(ttir or "")
    return m.group(1) if m else None


def _compute_dtype(problem: dict, precision: str | None = None) -> str | None:
    """The planner's peak for the product's operands: their element size (ELT), and for 32-bit
    operands the precision the TTIR gives the dot: "tf32" on the tensor cores, else the CUDA cores'
    f32 (ieee, and tf32x3, which runs several products of the tf32 rate the graph does not count)."""
    if "ELT" not in problem:
        return None
    if problem["ELT"] == 4 and precision == "tf32":
        return "tf32"
    return {1: "f8", 2: "f16", 4: "f32"}.get(problem["ELT"], "f16")


def _ttgir_dims(ttgir: str) -> frozenset:
    """Every dimension of a tensor or shared-memory type in lowered TTGIR."""
    return frozenset(int(d) for s in _SHAPE.findall(ttgir) for d in s.split("x"))


def device_for(target) -> str:
    """The shipped device model a target is judged on (sm_90: h100, sm_100: b200, gfx950: mi355x...)."""
    return device_for_arch(_arch(target))


def device_for_arch(arch: str) -> str:
    """device_for() by architecture name ("sm_90", "gfx942"), without Triton."""
    if arch in _DEVICE_FOR_ARCH:
        return _DEVICE_FOR_ARCH[arch]
    for d in scratchsim.devices():
        if d.get("arch") == arch:
            return d["name"]
    raise Error(f"no device model for target {arch}: pass device=NAME or a DeviceModel path")


def _jit_function(kernel):
    """The JITFunction under autotune/heuristics wrappers."""
    from triton.runtime.jit import JITFunction
    fn = kernel
    seen = 0
    while not isinstance(fn, JITFunction):
        inner = getattr(fn, "fn", None)
        if inner is None or seen > 16:
            raise Error(f"{kernel!r} is not a @triton.jit kernel")
        fn, seen = inner, seen + 1
    return fn


def _config_kwargs(config) -> dict:
    """A triton.Config (or a dict of its kwargs with num_warps/num_stages/...) as launch kwargs."""
    if config is None:
        return {}
    if hasattr(config, "all_kwargs"):
        return dict(config.all_kwargs())
    if isinstance(config, Mapping):
        return dict(config)
    raise Error(f"config: expected a triton.Config or a dict, got {type(config).__name__}")


_SCALARS = (str, int, float, bool, type(None))


def _constexpr_names(fn) -> set:
    """The names of a JITFunction's tl.constexpr parameters."""
    return {p.name for p in getattr(fn, "params", []) if p.is_constexpr}


def _is_signature(value) -> bool:
    """{arg: "type"} (constexpr values may sit beside the types) rather than launch arguments."""
    return (isinstance(value, Mapping) and any(isinstance(v, str) for v in value.values())
            and all(isinstance(v, _SCALARS) for v in value.values()))


class TensorSpec:
    """A stand-in for a tensor argument (no torch, no GPU): its dtype and whether its data
    pointer is 16-byte aligned, which is all Triton's JIT specializes a tensor on."""

    def __init__(self, dtype, aligned: bool = True):
        self.dtype = _tl_dtype(dtype)
        self._ptr = 0 if aligned else 8

    def data_ptr(self):
        return self._ptr

    def __repr__(self):
        return f"tensor({self.dtype}, aligned={self._ptr == 0})"


def _tl_dtype(dtype):
    if not isinstance(dtype, str):
        return dtype
    import triton.language as tl
    names = {"fp16": "float16", "f16": "float16", "bf16": "bfloat16", "fp32": "float32", "f32": "float32",
             "fp64": "float64", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
             "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "i1": "int1"}
    name = names.get(dtype, dtype)
    value = getattr(tl, name, None)
    if value is None:
        raise Error(f"tensor dtype '{dtype}': not a triton.language dtype (fp16, bf16, fp32, fp8e4nv, i8, ...)")
    return value


def tensor(dtype, aligned: bool = True) -> TensorSpec:
    """A tensor argument for check()/early_prune() without torch: tensor("fp16")."""
    return TensorSpec(dtype, aligned)


def _runtime_kwargs(fn) -> dict:
    """What JITFunction.run adds to the launch kwargs before it specializes (debug, instrumentation)."""
    from triton import knobs
    kw = {"debug": getattr(fn, "debug", None) or knobs.runtime.debug}
    if hasattr(knobs.compilation, "instrumentation_mode"):
        kw["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    if hasattr(knobs.compilation, "fpsan_homomorphic_casts"):
        kw["fpsan_homomorphic_casts"] = knobs.compilation.fpsan_homomorphic_casts
    return kw


def _source_from_signature(fn, backend, signature: Mapping[str, str], kwargs: dict):
    """ASTSource pieces from {arg: type}: pointers ("*fp16") are taken 16-byte aligned as the JIT
    finds torch's allocations ("tt.divisibility" 16, and "tt.pointer_range" 32 on AMD); an integer
    type with ":16" ("i32:16") is divisible by 16."""
    sig, constexprs, attrs = {}, {}, {}
    hip = getattr(getattr(backend, "target", None), "backend", "") == "hip"
    for i, p in enumerate(fn.params):
        name = p.name
        if p.is_constexpr or name in kwargs:
            if name in kwargs:
                value = kwargs[name]
            elif p.has_default:
                value = p.default
            else:
                raise Error(f"{fn.__name__}: constexpr '{name}' has no value (give it in the config)")
            sig[name] = "constexpr"
            constexprs[(i, )] = value
            continue
        if name in signature and not isinstance(signature[name], str):
            sig[name] = "constexpr"
            constexprs[(i, )] = signature[name]
            continue
        if name not in signature:
            if p.has_default and p.default is None:
                sig[name] = "constexpr"
                constexprs[(i, )] = None
                continue
            raise Error(f"{fn.__name__}: the signature gives no type for '{name}'")
        ty = signature[name].strip()
        if ty == "constexpr":
            raise Error(f"{fn.__name__}: constexpr '{name}' has no value (give it in the config or as a keyword)")
        div16 = ty.endswith(":16")
        if div16:
            ty = ty[:-3]
        sig[name] = ty
        desc = ""
        if ty.startswith("*"):
            desc = "DS" if hip else "D"
        elif div16:
            desc = "D"
        if desc:
            attrs[(i, )] = backend.parse_attr(desc)
    options = backend.parse_options({k: v for k, v in kwargs.items() if k not in sig})
    return options, sig, constexprs, attrs


def _source_from_args(fn, backend, args, kwargs: dict):
    """ASTSource pieces as the JIT's own binder makes them from launch arguments (tensors, ints,
    floats, torch dtypes standing for tensors)."""
    from triton.runtime.jit import MockTensor, create_function_from_signature
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    if isinstance(args, Mapping):
        call_kwargs = {**{k: MockTensor.wrap_dtype(v) for k, v in args.items()}, **kwargs}
        bound_args, specialization, options = binder(**call_kwargs)
    else:
        bound_args, specialization, options = binder(*[MockTensor.wrap_dtype(a) for a in args], **kwargs)
    # _pack_args checks the options against the launch kwargs only (not the arguments).
    launch = {k: v for k, v in kwargs.items()}
    return fn._pack_args(backend, launch, bound_args, specialization, options)


class Lowered:
    """One config lowered to TTGIR: .ttgir (text), .target, .name, .seconds, .options, and .ttir
    (the TTIR on the way, whose tt.dot is the product as the kernel wrote it; None where not kept)."""

    def __init__(self, ttgir: str, target, name: str, seconds: float, options, ttir: str | None = None):
        self.ttgir, self.target, self.name, self.seconds, self.options = ttgir, target, name, seconds, options
        self.ttir = ttir


class _Source:
    """One config of a kernel, specialized as Triton's JIT would, ready to lower: what lower()
    needs besides the kernel itself, all of it picklable (a worker process lowers it too)."""

    def __init__(self, fn, target, options, signature, constexprs, attrs):
        self.fn, self.target, self.options = fn, target, options
        self.signature, self.constexprs, self.attrs = signature, constexprs, attrs


def _prepare(kernel, config, signature_or_args, target, launch_kwargs) -> _Source:
    fn = _jit_function(kernel)
    tgt = target_of(target)
    from triton.compiler.compiler import make_backend
    backend = make_backend(tgt)
    kwargs = {**_runtime_kwargs(fn), **_config_kwargs(config), **launch_kwargs}
    if signature_or_args is None:
        signature_or_args = {}
    if _is_signature(signature_or_args):
        options, signature, constexprs, attrs = _source_from_signature(fn, backend, signature_or_args, kwargs)
    else:
        options, signature, constexprs, attrs = _source_from_args(fn, backend, signature_or_args, kwargs)
    return _Source(fn, tgt, options, signature, constexprs, attrs)


def _run_stages(source: _Source, until: str):
    """triton.compile's steps on one specialized config, stopped after stage `until` ("ttgir",
    "cubin", ...): (that stage's module, the TTIR text on the way, the options, seconds)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import ASTSource, make_backend
    tgt = source.target
    backend = make_backend(tgt)
    t0 = time.perf_counter()
    src = ASTSource(source.fn, source.signature, source.constexprs, source.attrs)
    opts = backend.parse_options(dict(source.options.__dict__, **src.parse_options()))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen_fns = backend.get_codegen_implementation(opts)
    module_map = backend.get_module_map()
    module = src.make_ir(tgt, opts, codegen_fns, module_map, context)
    stages: dict = {}
    backend.add_stages(stages, opts, src.language)
    metadata = {"hash": "scratchsim", "target": tgt, **opts.__dict__}
    # As triton.compile: an AST source starts at its own stage (make_ttir), an IR source after it.
    ttir = None
    for ext in list(stages)[list(stages).index(src.ext):]:
        module = stages[ext](module, metadata)
        if ext == "ttir":
            ttir = str(module)
        if ext == until:
            return module, ttir, opts, time.perf_counter() - t0
    raise Error(f"Triton's pipeline for {_arch(tgt)} has no {until} stage")


def _lower_source(source: _Source) -> Lowered:
    """triton.compile's first steps on one specialized config, stopped after the TTGIR stage."""
    module, ttir, opts, seconds = _run_stages(source, "ttgir")
    return Lowered(str(module), source.target, source.fn.__name__, seconds, opts, ttir)


# ptxas -v's lines (Triton passes -v and keeps the log: knobs.nvidia.dump_ptxas_log prints it).
_PTXAS_REGISTERS = re.compile(r"Used (\d+) registers")
_PTXAS_SPILL_STORES = re.compile(r"(\d+) bytes spill stores")


def _compiled_figure(source: _Source) -> dict:
    """{"registers", "spill_bytes"} ptxas allocates for one specialized config: Triton's whole
    NVIDIA pipeline, its own ptxas command (options as Triton's release sets them), read from the
    log Triton keeps with knobs.nvidia.dump_ptxas_log. No GPU is needed."""
    import contextlib
    import io
    if getattr(source.target, "backend", None) != "cuda":
        raise Error(f"registers come from ptxas's log: NVIDIA targets only, not {_arch(source.target)}")
    from triton import knobs
    log_text = io.StringIO()
    before = knobs.nvidia.dump_ptxas_log
    knobs.nvidia.dump_ptxas_log = True
    try:
        with contextlib.redirect_stdout(log_text):
            _run_stages(source, "cubin")
    finally:
        knobs.nvidia.dump_ptxas_log = before
    text = log_text.getvalue()
    registers = _PTXAS_REGISTERS.search(text)
    if registers is None:
        raise Error(f"{source.fn.__name__}: ptxas's log names no register count:\n{text[-2000:]}")
    spills = _PTXAS_SPILL_STORES.search(text)
    return {"registers": int(registers.group(1)), "spill_bytes": int(spills.group(1)) if spills else 0}


def _ptxas_version(target) -> str:
    try:
        from triton.backends.nvidia.compiler import get_ptxas_version
        return "ptxas " + get_ptxas_version(target.arch).strip().splitlines()[-1].replace("Build ", "")
    except Exception as e:  # a Triton without the helper: the report names Triton alone
        log.debug("scratchsim: no ptxas version (%s)", e)
        return ""


def lower(kernel, config=None, signature_or_args=None, target=None, **launch_kwargs) -> Lowered:
    """Lowers one config of `kernel` to TTGIR with Triton's front end and TTGIR passes only.

    signature_or_args: {arg: type} ("*fp16", "i32", "fp32"; "i32:16" divisible by 16; a
    non-string value is a constexpr, e.g. a unit stride: 1), or the launch arguments (a sequence
    in parameter order or a dict by name: tensors, tensor("fp16") or torch dtypes standing for
    tensors, ints, floats), specialized as Triton's JIT specializes them.
    launch_kwargs: further constexprs or options given at launch.
    """
    _triton()
    return _lower_source(_prepare(kernel, config, signature_or_args, target, launch_kwargs))


def lower_compiled(fn, signature: Mapping[str, str], constants: Mapping, attrs: Mapping, target=None,
                   options: Mapping[str, Any] | None = None) -> Lowered:
    """Lowers to TTGIR what a caller would hand triton.compile as ASTSource(fn, signature,
    constants, attrs) with `options` (num_warps, num_stages, debug, ...), for `target` (None: the
    local GPU). For code that already holds those pieces (Inductor's CachingAutotuner does): the
    same module Triton would compile, with no JIT specialization redone here. Options the target's
    backend does not know are left out, as its parse_options leaves them out."""
    _triton()
    from triton.compiler.compiler import make_backend
    jit = _jit_function(fn)
    tgt = target_of(target)
    backend = make_backend(tgt)
    opts = backend.parse_options(dict(options or {}))
    return _lower_source(_Source(jit, tgt, opts, dict(signature), dict(constants), dict(attrs)))


def compiled_registers(kernel, configs: Sequence, signature_or_args=None, target=None, *,
                       graph: str = "triton_matmul", param_names: Mapping[str, str] | None = None,
                       fixed: Mapping[str, int] | None = None, compiled_where: Sequence[str] = (),
                       **launch_kwargs) -> dict:
    """The registers ptxas allocates to each config of `kernel` for `target` (None: the local GPU;
    "sm_90" needs no GPU), each compiled by Triton's whole NVIDIA pipeline, as the CompiledRegisters
    dict scratchsim.plan_report(registers=[...]) and `simulate plan --registers FILE` (as JSON)
    take: {"graph", "target", "compiler", "configs": [{"sets", "registers", "spill_bytes"}]}. The
    planner then has each config's occupancy and spills from what was allocated, not from the
    graph's estimate (docs/planner.md, "A compiler's registers").

    graph: the name of the graph planned with them. param_names: config names -> the graph's
    parameters (num_warps and num_stages are NUM_WARPS and NUM_STAGES); without it the tile
    constexprs are mapped by their role in the kernel's product, as early_prune(top_k=...) maps
    them. fixed: graph parameters every compile shares, added to each config's sets (the element
    size: {"ELT": 2}). compiled_where: what the compiles assumed of the problem, as expressions
    over the graph's parameters ("N % 16 == 0" where the arguments had Triton's JIT specialize N as
    divisible by 16); a problem that breaks one keeps the graph's estimate, since the JIT compiles
    another kernel for it. signature_or_args and launch_kwargs: as lower()."""
    _triton()
    fn = _jit_function(kernel)
    configs = list(configs)
    if param_names is not None:
        names = {**_LAUNCH_OPTION_NAMES, **param_names}
    else:
        def dots_of(c):
            lowered = lower(fn, c, signature_or_args, target, **launch_kwargs)
            return dot_shapes(lowered.ttir or lowered.ttgir)
        names = {**_LAUNCH_OPTION_NAMES, **map_by_role(configs, _constexpr_names(fn), dots_of, "compiled_registers")}
    figures = [(c, _compiled_figure(_prepare(fn, c, signature_or_args, target, launch_kwargs))) for c in configs]
    registers = _registers_dict(graph, target_of(target), figures, names, fixed)
    if compiled_where:
        registers["compiled_where"] = [str(c) for c in compiled_where]
    return registers


def _registers_dict(graph: str, tgt, figures: Sequence, names: Mapping[str, str],
                    fixed: Mapping[str, int] | None = None) -> dict:
    """A CompiledRegisters message as a dict (proto/graph.proto), naming the Triton and ptxas:
    each (config, figure) of `figures` keyed by the graph parameters `names` maps its values to,
    and the `fixed` ones every compile shares."""
    import triton
    ptxas = _ptxas_version(tgt)
    shared = [f"{k}={int(v)}" for k, v in sorted((fixed or {}).items())]
    entries = [{"sets": [f"{k}={v}" for k, v in _graph_key(c, names)] + shared, **figure} for c, figure in figures]
    return {"graph": graph, "target": _arch(tgt), "configs": entries,
            "compiler": f"Triton {triton.__version__}" + (f", {ptxas}" if ptxas else "")}


def _graph_name(graph) -> str:
    """The name a graph states (its `name:` field): a shipped graph's name, a file's or text's."""
    if isinstance(graph, str) and "\n" not in graph and not graph.endswith((".pbtxt", ".textproto")):
        return graph
    text = graph
    if isinstance(graph, (str, os.PathLike)) and "\n" not in str(graph):
        with open(graph) as f:
            text = f.read()
    found = re.search(r'^name:\s*"([^"]+)"', str(text), re.M)
    if found is None:
        raise Error("registers: the graph states no name (name: \"...\"), so the compiler's registers cannot name it")
    return found.group(1)


def load_source_module(code: str, prefix: str = "source"):
    """Imports generated Python code (a Helion or Inductor kernel module) from a file of its own,
    as a fresh module named by the code's hash: @triton.jit reads its function's source from the
    file, and objects made at import (Inductor's CachingAutotuner with its configs) are new, not
    ones a framework has compiled and emptied since."""
    import hashlib
    import importlib.util
    digest = hashlib.sha256(code.encode()).hexdigest()[:24]
    directory = os.path.join(tempfile.gettempdir(), f"scratchsim_{prefix}_{os.getuid()}")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"h{digest}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(code)
        os.replace(tmp, path)
    name = f"scratchsim_{prefix}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _kernel_ref(fn):
    """(module, attribute) under which a worker process imports `fn`, or None where it cannot: a
    kernel of __main__ (a worker would run the script's top level again) or not at a module's top
    level."""
    py = getattr(fn, "fn", None)
    module = getattr(py, "__module__", None)
    if not module or module in ("__main__", "__mp_main__") or module not in sys.modules:
        return None
    namespace = vars(sys.modules[module])
    names = [n for n in (getattr(fn, "__name__", None), getattr(py, "__name__", None)) if n] + list(namespace)
    for name in names:
        obj = namespace.get(name)
        if obj is None:
            continue
        try:
            if _jit_function(obj) is fn:
                return module, name
        except Error:
            continue
    return None


def default_workers() -> int:
    """Worker processes early_prune lowers with when not told: the cores this process may use
    less one, at most 16."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(16, cores - 1))


def _lower_in_workers(sources: Sequence[_Source], ref, workers: int) -> list:
    """Lowers `sources` (configs of one kernel) in `workers` processes of
    scratchsim._lower_worker, each given an equal share in order. Returns per source a Lowered, or
    ("error", message, scratchsim_refused); None for a share whose worker failed (lower it here)."""
    chunks = [list(range(i, len(sources), workers)) for i in range(workers)]
    chunks = [c for c in chunks if c]
    results: list = [None] * len(sources)
    # The worker finds scratchsim and the kernel's module where this process does.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if isinstance(p, str) and p))
    with tempfile.TemporaryDirectory(prefix="scratchsim_lower_") as tmp:
        procs = []
        for n, chunk in enumerate(chunks):
            jobs = []
            for i in chunk:
                s = sources[i]
                bare = _Source(None, s.target, s.options, s.signature, s.constexprs, s.attrs)
                jobs.append((ref[0], ref[1], s.fn.cache_key, bare))
            job_path, out_path = os.path.join(tmp, f"jobs{n}"), os.path.join(tmp, f"out{n}")
            with open(job_path, "wb") as f:
                pickle.dump(jobs, f)
            procs.append((chunk, out_path, subprocess.Popen(
                [sys.executable, "-m", "scratchsim._lower_worker", job_path, out_path], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
        for chunk, out_path, proc in procs:
            _, err = proc.communicate()
            try:
                with open(out_path, "rb") as f:
                    out = pickle.load(f)
            except (OSError, EOFError, pickle.UnpicklingError):
                log.warning("scratchsim early_prune: a lowering worker failed (exit %s: %s); lowering its configs "
                            "here", proc.returncode, err.decode(errors="replace").strip()[-500:])
                continue
            for i, r in zip(chunk, out):
                if r[0] == "ok":
                    s = sources[i]
                    results[i] = Lowered(r[1], s.target, s.fn.__name__, r[2], r[3], r[4] if len(r) > 4 else None)
                else:
                    results[i] = r
    return results


def _simulate(lowered: Lowered, device: str | None, suggest: bool, any_target: bool) -> dict:
    """The lowered TTGIR judged on `device` (None: the target's model). A device of another
    architecture than the target is refused by the core, as `simulate --ttgir` refuses it, unless
    any_target."""
    dev = device or device_for(lowered.target)
    t0 = time.perf_counter()
    report = scratchsim.simulate_ttgir(dev, lowered.ttgir, suggest=suggest, any_target=any_target,
                                       name=f"{lowered.name}.ttgir", triton_release=installed_release())
    report["triton"] = {
        "kernel": lowered.name,
        "target": _arch(lowered.target),
        "device": dev,
        "num_warps": getattr(lowered.options, "num_warps", None),
        "num_stages": getattr(lowered.options, "num_stages", None),
        "num_ctas": getattr(lowered.options, "num_ctas", None),
        "lower_s": lowered.seconds,
        "simulate_s": time.perf_counter() - t0,
    }
    return report


def check(kernel, config=None, signature_or_args=None, target=None, *, device: str | None = None,
          any_target: bool = False, suggest: bool = True, keep_ttgir: bool = False, to_fit: int = 2,
          max_lowerings: int = _to_fit.MAX_LOWERINGS, **launch_kwargs) -> dict:
    """Lowers one config of a @triton.jit kernel to TTGIR (no LLVM, no ptxas) for `target` (None:
    the local GPU) and simulates it on the target's device model (or `device`; one of another
    architecture than the target is an Error unless any_target, as `simulate --ttgir` refuses it
    without --any-target).

    Returns the report (as scratchsim.simulate_ttgir: "fits", "violations" with Triton's
    OutOfResources words, "spaces", "occupancy", ...) with a "triton" entry: kernel, target,
    device, num_warps, num_stages, lower_s, simulate_s (and "ttgir" with keep_ttgir).
    A config that does not fit gains "to_fit": the `to_fit` nearest configs that fit, each
    lowered and simulated (at most `max_lowerings` lowerings), and "to_fit_search" (0: none;
    suggest=False: none). docs/python.md, "To fit".
    """
    lowered = lower(kernel, config, signature_or_args, target, **launch_kwargs)
    report = _simulate(lowered, device, suggest, any_target)
    if keep_ttgir:
        report["triton"]["ttgir"] = lowered.ttgir
    _note_divisibility(report, kernel, config, signature_or_args, target, device, any_target, launch_kwargs)
    if suggest and to_fit and not report.get("fits"):
        _check_to_fit(report, lowered, kernel, config, signature_or_args, target, device, any_target, launch_kwargs,
                      to_fit, max_lowerings)
    return report


def _verdict(report: dict, lowered: "Lowered") -> dict:
    """What early_prune keeps of a config's report, and what the to-fit search reads: the verdict,
    Triton's words, the bytes and limit of every space, the space the first fatal violation
    overflowed, and from the TTGIR its products' shapes (roles) and every shape's dimensions."""
    space = None
    for v in report.get("violations", []):
        if v.get("fatal") and v.get("space"):
            space = v["space"]
            break
    return {"fits": bool(report.get("fits")), "message": "" if report.get("fits") else _message(report),
            "shared": _shared_required(report), "lower_s": lowered.seconds, "space": space,
            "spaces": {s["space"]: (s.get("peak_bytes"), s.get("limit_bytes")) for s in report.get("spaces", [])},
            "num_stages": getattr(lowered.options, "num_stages", None),
            "num_warps": getattr(lowered.options, "num_warps", None),
            "dots": dot_shapes(lowered.ttir or lowered.ttgir), "dims": _ttgir_dims(lowered.ttgir),
            "dot_precision": dot_input_precision(lowered.ttir or lowered.ttgir)}


def _nearest_configs(fn, config, original: dict, judge: Callable[[dict], dict], want: int, max_lowerings: int,
                     estimate=None) -> dict:
    """The configs nearest to `config` that fit (scratchsim._to_fit's search over num_stages and
    the tile constexprs), each judged by judge(config kwargs) -> a _verdict dict (with "cached"
    where it cost no lowering). `original` is the config's own _verdict."""
    kwargs0 = _config_kwargs(config)
    constexprs = _constexpr_names(fn)
    ints = {k: v for k, v in kwargs0.items() if k in constexprs and isinstance(v, int) and not isinstance(v, bool)}
    values = {**ints, "num_stages": int(kwargs0.get("num_stages") or original.get("num_stages") or 1)}
    space = original.get("space")

    def as_fit(v: dict) -> "_to_fit.Verdict":
        required, limit = (v.get("spaces") or {}).get(space, (None, None))
        return _to_fit.Verdict(fits=v["fits"], required_bytes=required, limit_bytes=limit, space=space,
                               lowered=not v.get("cached"), message=v.get("message"))

    def build(vals: dict) -> dict:
        whole = {k: v for k, v in kwargs0.items() if k in constexprs}
        whole.update(vals)
        whole["num_warps"] = kwargs0.get("num_warps") or original.get("num_warps")
        return whole

    return _to_fit.nearest(values, stage="num_stages", tiles=_to_fit.tile_knobs(ints, original.get("dims")),
                           verify=lambda vals: as_fit(judge({**kwargs0, **vals})), build=build, want=want,
                           max_lowerings=max_lowerings, original=as_fit(original), estimate=estimate)


def _attach_to_fit(report: dict, result: dict) -> None:
    """The search's answer in a report: "to_fit", "to_fit_search", and a note where the bound
    cut the search short or nothing fits."""
    report["to_fit"] = result["to_fit"]
    report["to_fit_search"] = result["search"]
    search = result["search"]
    if search.get("skipped"):
        report.setdefault("notes", []).append(f"to fit: not searched: {search['skipped']}")
    elif search["bound_reached"]:
        report.setdefault("notes", []).append(
            f"to fit: the search stopped at its bound of {search['max_lowerings']} lowerings "
            f"({len(result['to_fit'])} found); nearer configs may exist (max_lowerings= raises it)")
    elif not result["to_fit"]:
        report.setdefault("notes", []).append(
            "to fit: no config fits at any pipeline depth with its tile dimensions halved down to "
            f"{_to_fit.MIN_TILE}")


def _named_args(fn, args) -> dict | None:
    """The launch arguments by name (None for the signature form, which gives no sizes)."""
    if args is None or _is_signature(args):
        return None
    if isinstance(args, Mapping):
        return dict(args)
    return dict(zip(fn.arg_names, args))


def _check_to_fit(report, lowered, kernel, config, args, target, device, any_target, launch_kwargs, want,
                  max_lowerings) -> None:
    """check()'s "to_fit": its nearest fitting configs, each lowered and simulated, with the
    planner's estimate where the kernel's product maps onto the Triton matmul graph by role and
    the launch arguments give M, N, K."""
    fn = _jit_function(kernel)
    original = _verdict(report, lowered)
    dots: dict = {_config_key(config): original["dots"]}

    def judge(kwargs: dict) -> dict:
        try:
            low = lower(kernel, kwargs, args, target, **launch_kwargs)
        except Error:
            raise
        except Exception as e:  # Triton refused the candidate itself: it does not fit
            return {"fits": False, "message": f"{type(e).__name__}: {e}".splitlines()[0], "spaces": {}}
        v = _verdict(_simulate(low, device, False, any_target), low)
        dots[_config_key(kwargs)] = v["dots"]
        return v

    named = _named_args(fn, args)
    estimator = _Estimator(fn, config, named, _matmul_problem, "triton_matmul", None,
                           device or device_for(lowered.target), lambda c: dots.get(_config_key(c)),
                           original["dot_precision"])
    result = _nearest_configs(fn, config, original, judge, want, max_lowerings, estimator)
    result["search"]["estimate"] = estimator.why
    _attach_to_fit(report, result)


_PLAIN_INTS = ("i32", "i64", "u32", "u64")


def _note_divisibility(report, kernel, config, signature, target, device, any_target, launch_kwargs):
    """A signature's plain integers ("i32") say nothing of divisibility, while a launch with
    M=4096 specializes M as divisible by 16 ("i32:16"), under which Triton may stage more loads in
    shared memory. Where it does, the report says so with both figures ("divisibility" in the
    "triton" entry and a note): the check answered for a launch the kernel may never see."""
    if not _is_signature(signature):
        return
    plain = [k for k, v in signature.items() if isinstance(v, str) and v.strip() in _PLAIN_INTS]
    if not plain:
        return
    divided = {k: (f"{v.strip()}:16" if k in plain else v) for k, v in signature.items()}
    other = _simulate(lower(kernel, config, divided, target, **launch_kwargs), device, False, any_target)
    given, specialized = _shared_required(report), _shared_required(other)
    if given == specialized and report.get("fits") == other.get("fits"):
        return
    verdict = "fits" if other.get("fits") else f"does not fit ({_message(other)})"
    report["triton"]["divisibility"] = {"arguments": plain, "shared": specialized, "fits": bool(other.get("fits"))}
    report.setdefault("notes", []).append(
        f"the integer arguments {', '.join(plain)} were given without divisibility (\"i32\"); a launch whose "
        f"values are multiples of 16 specializes them as \"i32:16\", and then Triton needs {specialized} B of "
        f"shared memory instead of {given} B and the kernel {verdict}: check with \"i32:16\" or the launch "
        "arguments themselves")


def _message(report: dict) -> str:
    """The toolchain's words for the first fatal violation, and the nearest one or two configs
    that fit where the report has them."""
    text = "does not fit"
    violations = report.get("violations", [])
    for v in [v for v in violations if v.get("fatal")] + violations:
        if v.get("message"):
            text = v["message"]
            break
    if report.get("to_fit"):
        text += f"; to fit: {_to_fit.summary(report['to_fit'])}"
    return text


def _freeze(value):
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _arg_key(value):
    """What the JIT specializes an argument on: a tensor's dtype and 16-byte alignment, an int's
    value class (1, divisible by 16, 32/64-bit), other values as they are."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        try:
            aligned = value.data_ptr() % 16 == 0
        except Exception:
            aligned = True
        return ("tensor", str(value.dtype), aligned)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value == 1, value % 16 == 0, -2**31 <= value < 2**31)
    if isinstance(value, float):
        return ("float", )
    return _freeze(value)


def _config_key(config) -> tuple:
    return _freeze(_config_kwargs(config))


def _find_autotuner():
    """The triton Autotuner calling early_config_prune (it passes no kernel)."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            owner = frame.f_locals.get("self")
            if owner is not None and hasattr(owner, "configs") and hasattr(owner, "fn") and hasattr(owner, "keys"):
                return owner
            frame = frame.f_back
    finally:
        del frame
    return None


def _matmul_problem(named_args: Mapping[str, Any]) -> dict:
    """The problem size of the shipped Triton matmul graph from the launch: M, N, K, and ELT the
    element size of the first tensor argument."""
    out = {}
    for name in ("M", "N", "K"):
        if name not in named_args:
            raise Error(f"top_k: the launch has no '{name}' (give problem=callable(named_args) -> dict)")
        out[name] = int(named_args[name])
    for value in named_args.values():
        if hasattr(value, "element_size"):
            out["ELT"] = int(value.element_size())
            break
        if hasattr(value, "dtype") and hasattr(value.dtype, "itemsize"):
            out["ELT"] = int(value.dtype.itemsize)
            break
    return out


# The launch options -> the Triton matmul graph's parameters (models/graphs/triton_matmul.pbtxt);
# the tile constexprs are mapped by their role in the kernel's product (map_by_role).
_LAUNCH_OPTION_NAMES = {"num_stages": "NUM_STAGES", "num_warps": "NUM_WARPS"}
_ROLE_PARAMS = {"M": "BLOCK_M", "N": "BLOCK_N", "K": "BLOCK_K"}


def _int_constexprs(config, constexprs) -> dict:
    return {k: v for k, v in _config_kwargs(config).items()
            if k in constexprs and isinstance(v, int) and not isinstance(v, bool)}


def _role_candidates(ints: dict, dots, refuse) -> dict:
    """{role: the constexprs whose value is the product's dimension in that role} for one config."""
    shapes = sorted(set(dots))
    if not shapes:
        refuse("the lowered kernel has no matrix product (tt.dot), so its constexprs have no tile role")
    if len(shapes) > 1:
        refuse(f"its {len(shapes)} matrix products have different shapes (M, N, K: "
               f"{', '.join(str(d) for d in shapes)}), so which one the graph family models is unknown")
    out = {}
    for role, dim in zip("MNK", shapes[0]):
        out[role] = {k for k, v in ints.items() if v == dim}
        if not out[role]:
            refuse(f"the product's {role} dimension ({dim}) is the value of no constexpr of the config "
                   f"({', '.join(f'{k}={v}' for k, v in sorted(ints.items()))})")
    return out


def _tangled(cand: dict) -> set:
    """The constexprs a role cannot be told by: in a role's set of several, or in two roles' sets."""
    names = [k for c in cand.values() for k in c]
    return {k for c in cand.values() for k in c if len(c) > 1 or names.count(k) > 1}


def map_by_role(configs: Sequence, constexprs, dots_of: Callable[[Any], Any], who: str = "top_k") -> dict:
    """{constexpr: "BLOCK_M" | "BLOCK_N" | "BLOCK_K"}: which constexpr is the tile of which role in
    the kernel's matrix product, read from the lowering of the first config (dots_of(config):
    dot_shapes of its TTIR, None where it did not lower), where A is M x K and B is K x N. Where
    two constexprs hold the same value, the config of the list that tells the most of them apart
    is lowered too; constexprs equal in every config rank the same under either role. Raises
    Error naming the param_names it needs where the roles cannot be told."""
    configs = list(configs)
    ints = [_int_constexprs(c, constexprs) for c in configs]
    varying = sorted({k for i in ints for k in i if len({repr(j.get(k)) for j in ints}) > 1})

    def refuse(why):
        named = varying or sorted(ints[0] if ints else [])
        raise Error(f"{who}: cannot map the kernel's constexprs to the graph's BLOCK_M, BLOCK_N, BLOCK_K by their "
                    f"role: {why}; give param_names={{{', '.join(f'{k!r}: ...' for k in named)}}} naming each's "
                    "graph parameter")

    memo: dict = {}

    def dots(i):
        if i not in memo:
            memo[i] = dots_of(configs[i])
        return memo[i]
    first = next((i for i in range(len(configs)) if dots(i) is not None), None)
    if first is None:
        refuse("no config of the list lowered")
    cand = _role_candidates(ints[first], dots(first), refuse)
    tangled = _tangled(cand)
    if tangled:
        spread = [(len({ints[i].get(k) for k in tangled}), -i) for i in range(len(configs))]
        best = max(range(len(configs)), key=lambda i: spread[i])
        if spread[best][0] > 1 and dots(best) is not None:
            other = _role_candidates(ints[best], dots(best), refuse)
            cand = {r: cand[r] & other[r] for r in cand}
    mapping: dict = {}
    while cand:
        role = next((r for r, c in cand.items() if len(c - set(mapping)) == 1), None)
        if role is None:
            break
        mapping[(cand.pop(role) - set(mapping)).pop()] = _ROLE_PARAMS[role]
    if cand:
        left = sorted({k for c in cand.values() for k in c} - set(mapping))
        if not left or any(len({i.get(k) for k in left}) > 1 for i in ints) or len(left) < len(cand):
            refuse(f"the product's {', '.join(sorted(cand))} dimensions are held by "
                   f"{', '.join(left) or 'constexprs already mapped'} with the same values in the configs lowered")
        for role, k in zip(sorted(cand), left):  # equal in every config: either role ranks the same
            mapping[k] = _ROLE_PARAMS[role]
    return mapping


def _graph_key(config, names: Mapping[str, str]) -> tuple:
    out = {}
    for k, v in _config_kwargs(config).items():
        if k in names:
            out[names[k]] = int(v)
    return tuple(sorted(out.items()))


def _plan_configs(configs, names: Mapping[str, str], problem: dict, graph, device: str, registers=None,
                  allow_spills: bool = False, precision: str | None = None) -> dict:
    """{graph key: the planner's entry} for the configs' own values of the graph's parameters
    (names maps config names to them) at the problem size: one plan over their product
    (registers: a compiler's, as plan_report takes them; allow_spills: rank the configs an estimate
    spills too; precision: the dot's input precision in the TTIR, which sets 32-bit operands' peak)."""
    axes: dict = {}
    for c in configs:
        for k, v in _config_kwargs(c).items():
            if k in names:
                axes.setdefault(names[k], set()).add(int(v))
    if isinstance(graph, str) and not graph.endswith((".pbtxt", ".pb", ".json", ".textproto")) and "\n" not in graph:
        graph = scratchsim.graph_path(graph)
    space = math.prod(len(v) for v in axes.values()) if axes else 1
    options = {}
    compute_dtype = _compute_dtype(problem, precision)
    if compute_dtype:  # the dot's operand type: the planner's peak for it
        options["compute_dtype"] = compute_dtype
    report = scratchsim.plan_report(device, graph, problem, top=min(space, 100000),
                                    param={k: sorted(v) for k, v in axes.items()}, registers=registers,
                                    allow_spills=allow_spills, **options)
    plan = {tuple(sorted(c["params"].items())): c for c in report["configs"]}
    # Each config's place in the planner's autotuning shortlist (the order to time them in).
    for position, c in enumerate(report.get("shortlist", []), 1):
        key = tuple(sorted(c["params"].items()))
        plan[key] = dict(plan.get(key, c), shortlist=position)
    return plan


def _places(plan: dict) -> dict:
    """{graph key: place}: the autotuning shortlist's order, then the ranking's for any it leaves out."""
    return {key: c.get("shortlist", len(plan) + c["rank"]) for key, c in plan.items()}


class _Estimator:
    """The planner's estimate for the to-fit search's configs: the graph family at the launch's
    problem size, the kernel's constexprs mapped by `names` (a user's param_names) or by role.
    .why says where the estimates come from, or why there are none."""

    def __init__(self, fn, config, named_args, problem, graph, names, device, dots_of, precision=None):
        self.fn, self.config, self.named_args, self.problem = fn, config, named_args, problem
        self.graph, self.names, self.device, self.dots_of = graph, names, device, dots_of
        self.precision = precision
        self.why = "absent: no config to estimate"

    def __call__(self, values_list: list) -> list:
        none = [None] * len(values_list)
        if self.named_args is None:
            self.why = "absent: the signature form gives no problem size (check with the launch arguments)"
            return none
        kwargs0 = _config_kwargs(self.config)
        configs = [{**kwargs0, **v} for v in values_list]
        try:
            problem = self.problem(self.named_args)
            names = self.names
            if names is None:
                names = {**_LAUNCH_OPTION_NAMES, **map_by_role([self.config] + configs, _constexpr_names(self.fn),
                                                                self.dots_of, "estimate")}
            plan = _plan_configs(configs, names, problem, self.graph, self.device, precision=self.precision)
        except Error as e:
            self.why = f"absent: {e}"
            return none
        graph_name = self.graph if isinstance(self.graph, str) and "\n" not in self.graph else "graph"
        self.why = f"the planner on {graph_name} at {problem}"
        constexprs = _constexpr_names(self.fn)
        # A config that changes a constexpr nothing maps would be estimated as if it had not.
        return [None if any(k in constexprs and k not in names and v != kwargs0.get(k) for k, v in c.items())
                else plan.get(_graph_key(c, names), {}).get("estimated_us") for c in configs]


class EarlyPrune:
    """The callable early_prune() returns (see there). Its .stats and .last say what it did."""

    def __init__(self, kernel=None, signature_or_args=None, target=None, device=None, top_k=None, graph=None,
                 param_names=None, problem=None, on_empty="raise", verbose=False, workers=None, any_target=False,
                 to_fit=1, max_lowerings=_to_fit.MAX_LOWERINGS, registers=False):
        self.kernel = kernel
        self.signature_or_args = signature_or_args
        self.target = target
        self.device = device
        self.any_target = bool(any_target)
        self.top_k = top_k
        self.graph = graph if graph is not None else ("triton_matmul" if top_k else None)
        # A user's names add to the launch options' (num_stages, num_warps), which every config has;
        # without them the tile constexprs are mapped by their role in the kernel's product.
        self.param_names = {**_LAUNCH_OPTION_NAMES, **param_names} if param_names else None
        self._role_names: dict = {}
        if not isinstance(to_fit, int) or isinstance(to_fit, bool) or to_fit < 0:
            raise Error(f"to_fit: how many fitting configs to name per dropped config (0: none), got {to_fit!r}")
        self.to_fit, self.max_lowerings = to_fit, max_lowerings
        self._to_fit_cache: dict = {}
        if not isinstance(registers, bool):
            raise Error(f"registers: True (rank with ptxas's registers, each config compiled) or False, got {registers!r}")
        self.registers = registers
        self._figures: dict = {}  # compiled registers by (kernel, config, specialization, target)
        self.problem = problem or _matmul_problem
        if on_empty not in ("raise", "keep"):
            raise Error("on_empty: 'raise' or 'keep'")
        self.on_empty = on_empty
        self.verbose = verbose
        if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 0):
            raise Error(f"workers: a count of processes (0 or 1: lower here), got {workers!r}")
        self.workers = default_workers() if workers is None else workers
        self._cache: dict = {}
        self._lock = threading.Lock()
        self.stats = {"calls": 0, "lowered": 0, "cached": 0, "kept": 0, "dropped": 0, "lower_s": 0.0,
                      "simulate_s": 0.0, "plan_s": 0.0, "workers": 0, "parallel_s": 0.0, "to_fit_lowered": 0,
                      "compiled": 0, "compile_s": 0.0,
                      "to_fit_s": 0.0}
        self.last: list = []  # (config, verdict dict) of the last call

    # -- the verdict of one config, cached ------------------------------------------------------
    def _key(self, fn, config, args, launch: dict) -> tuple:
        sig = args if _is_signature(args) else None
        if sig is not None:
            args_key = _freeze(sig)
        elif isinstance(args, Mapping):
            args_key = tuple(sorted((k, _arg_key(v)) for k, v in args.items()))
        else:
            args_key = tuple(_arg_key(v) for v in args)
        return (id(fn), getattr(fn, "cache_key", None), _config_key(config), args_key,
                tuple(sorted((k, _arg_key(v)) for k, v in launch.items())), _arch(target_of(self.target)),
                self.device)

    def _judge(self, lowered) -> dict:
        """The verdict of a lowered config, or of ("error", message, scratchsim_refused)."""
        if isinstance(lowered, Lowered):
            self.stats["lowered"] += 1
            self.stats["lower_s"] += lowered.seconds
            report = _simulate(lowered, self.device, False, self.any_target)
            self.stats["simulate_s"] += report["triton"]["simulate_s"]
            return _verdict(report, lowered)
        _, message, refused_by_scratchsim = lowered
        if refused_by_scratchsim:
            raise Error(message)
        # Triton refused the config itself (it would not compile either).
        self.stats["lowered"] += 1
        return {"fits": False, "message": message, "shared": None, "lower_s": None, "spaces": {}, "dots": None,
                "dims": None}

    def verdict(self, fn, config, args, launch: dict) -> dict:
        key = self._key(fn, config, args, launch)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            self.stats["cached"] += 1
            return {**hit, "cached": True}
        try:
            lowered = lower(fn, config, args, target_of(self.target), **launch)
        except Error:
            raise
        except Exception as e:
            lowered = ("error", f"{type(e).__name__}: {e}".splitlines()[0], False)
        result = self._judge(lowered)
        with self._lock:
            self._cache[key] = result
        return result

    def _lower_ahead(self, fn, configs, args, launch: dict) -> None:
        """Lowers the configs not yet cached in worker processes, when there are enough of them to
        gain (four or more per worker, sixteen in all) and the kernel can be imported by a worker;
        verdict() then finds them cached. The verdicts are the serial path's, config for config."""
        if self.workers < 2:
            return
        ref = _kernel_ref(fn)
        if ref is None:
            return
        todo, keys = [], []
        for c in configs:
            key = self._key(fn, c, args, launch)
            with self._lock:
                if key in self._cache or key in keys:
                    continue
            keys.append(key)
            todo.append(c)
        workers = min(self.workers, len(todo) // 4)
        if len(todo) < 16 or workers < 2:
            return
        t0 = time.perf_counter()
        sources, kept_keys = [], []
        for c, key in zip(todo, keys):
            try:
                sources.append(_prepare(fn, c, args, target_of(self.target), launch))
                kept_keys.append(key)
            except Error:
                raise
            except Exception:
                continue  # verdict() meets the same refusal and words it
        results = _lower_in_workers(sources, ref, workers)
        self.stats["workers"] = max(self.stats["workers"], workers)
        for key, lowered in zip(kept_keys, results):
            if lowered is None:
                continue  # its worker failed: verdict() lowers it here
            result = self._judge(lowered)
            with self._lock:
                self._cache[key] = result
        self.stats["parallel_s"] += time.perf_counter() - t0

    # -- the planner's ranking (top_k) --------------------------------------------------------------
    def _names(self, fn, configs, args, launch: dict) -> dict:
        """The config names -> graph parameters the planner ranks by: the user's param_names, or
        the tile constexprs mapped by their role in the kernel's product (map_by_role, reading
        the TTGIR of a config or two of the list, lowered through the cache)."""
        if self.param_names is not None:
            return self.param_names
        key = (id(fn), getattr(fn, "cache_key", None))
        if key not in self._role_names:
            def dots_of(c):
                return self.verdict(fn, c, args, launch).get("dots")
            self._role_names[key] = {**_LAUNCH_OPTION_NAMES, **map_by_role(configs, _constexpr_names(fn), dots_of,
                                                                            f"early_prune(top_k={self.top_k})")}
        return self._role_names[key]

    def _check_mapping(self, fn, configs, names):
        """The planner ranks only what the names map: a constexpr that differs between configs
        and maps to nothing would leave them tied, ordered by the list rather than the planner,
        so it is refused with the mapping it needs."""
        seen: dict = {}
        constexprs = _constexpr_names(fn)
        for c in configs:
            for k, v in _config_kwargs(c).items():
                if k not in _LAUNCH_OPTION_NAMES and k in constexprs:
                    seen.setdefault(k, set()).add(repr(v))
        unmapped = sorted(k for k, values in seen.items() if len(values) > 1 and k not in names)
        if unmapped:
            mapping = ", ".join(f"'{k}': ..." for k in unmapped)
            raise Error(f"early_prune(top_k={self.top_k}): the configs differ in {', '.join(unmapped)}, which map to no "
                        f"parameter of the graph family {self.graph!r}, so the planner cannot rank them; give "
                        f"param_names={{{mapping}}} naming each's graph parameter (for triton_matmul: BLOCK_M, "
                        "BLOCK_N, BLOCK_K)")

    def _plan_rank(self, fn, configs, named_args, names, args, launch: dict) -> dict:
        """{graph key: place} over the configs' own values, by the planner on the graph family:
        its autotuning shortlist's order (the pick, then the other block shapes within the model's
        ranking error, each followed by its occupancy twin, then by estimate), then the ranking's
        for any it leaves out."""
        t0 = time.perf_counter()
        device = self.device or device_for(target_of(self.target))
        problem = self.problem(named_args)
        precision = self._dot_precision(fn, configs, args, launch) if problem.get("ELT") == 4 else None
        if self.registers:
            plan = self._plan_with_registers(fn, configs, names, problem, device, args, launch, precision)
        else:
            plan = _plan_configs(configs, names, problem, self.graph, device, precision=precision)
        self.stats["plan_s"] += time.perf_counter() - t0
        return _places(plan)

    def _dot_precision(self, fn, configs, args, launch: dict) -> str | None:
        """The input precision the TTIR gives the kernel's product (the first config that lowers)."""
        for c in configs:
            v = self.verdict(fn, c, args, launch)
            if v.get("dots") is not None:
                return v.get("dot_precision")
        return None

    def _plan_with_registers(self, fn, configs, names, problem: dict, device: str, args, launch: dict,
                             precision: str | None) -> dict:
        """The plan with ptxas's registers where they can change its first top_k: the configs the
        estimate prunes for register spills alone (only a compile can bring one back), then the
        configs placed in the first 2 x top_k, compiled and ranked again until all of those are
        compiled. On the workload suite's fit part this gives the first top_k that compiling every
        config gives (docs/planner.md, "A compiler's registers": bench/planner/registers_on_demand.py)."""
        by_key = {_graph_key(c, names): c for c in configs}
        plan = _plan_configs(configs, names, problem, self.graph, device, precision=precision)
        spilling = _plan_configs(configs, names, problem, self.graph, device, allow_spills=True, precision=precision)
        compiled = {key: by_key[key] for key in spilling if key not in plan and key in by_key}
        with_figures = False
        while True:
            places = _places(plan)
            head = sorted(places, key=places.get)[:2 * self.top_k]
            missing = [key for key in head if key not in compiled and key in by_key]
            if not missing and (with_figures or not compiled):
                return plan
            compiled.update((key, by_key[key]) for key in missing)
            figures = self._compiled_registers(fn, list(compiled.values()), args, launch, names)
            plan = _plan_configs(configs, names, problem, self.graph, device, [figures], precision=precision)
            with_figures = True

    def _compiled_registers(self, fn, configs, args, launch: dict, names) -> dict:
        """ptxas's registers for the configs (compiled here once each, compiled_registers' way),
        keyed by the graph parameters the plan ranks them by."""
        t0 = time.perf_counter()
        figures = []
        for c in configs:
            key = self._key(fn, c, args, launch)
            if key not in self._figures:
                self._figures[key] = _compiled_figure(_prepare(fn, c, args, target_of(self.target), launch))
                self.stats["compiled"] += 1
            figures.append((c, self._figures[key]))
        self.stats["compile_s"] += time.perf_counter() - t0
        return _registers_dict(_graph_name(self.graph), target_of(self.target), figures, names)

    # -- to fit: the nearest configs that fit, for each dropped one -------------------------------
    def _to_fit_for(self, fn, config, verdict, args, launch, named_args) -> dict:
        key = (self._key(fn, config, args, launch), _freeze({k: _arg_key(v) for k, v in named_args.items()}))
        if key in self._to_fit_cache:
            return self._to_fit_cache[key]
        t0 = time.perf_counter()
        before = self.stats["lowered"]
        graph = self.graph or "triton_matmul"

        def dots_of(c):
            return self.verdict(fn, c, args, launch).get("dots")
        estimator = _Estimator(fn, config, named_args or None, self.problem, graph, self.param_names,
                               self.device or device_for(target_of(self.target)), dots_of,
                               verdict.get("dot_precision"))
        result = _nearest_configs(fn, config, verdict, lambda kw: self.verdict(fn, kw, args, launch), self.to_fit,
                                  self.max_lowerings, estimator)
        result["search"]["estimate"] = estimator.why
        self.stats["to_fit_lowered"] += self.stats["lowered"] - before
        self.stats["to_fit_s"] += time.perf_counter() - t0
        self._to_fit_cache[key] = result
        return result

    def _with_to_fit(self, fn, args, launch, named_args) -> None:
        """Each dropped config's record in .last gains "to_fit" and "to_fit_search", and its
        message the nearest one or two (a config Triton itself refused gets none)."""
        for i, (c, v) in enumerate(self.last):
            if v["fits"] or not v.get("space"):
                continue  # Triton refused it, or threads rather than bytes: nothing to search
            result = self._to_fit_for(fn, c, v, args, launch, named_args)
            record = dict(v, to_fit=result["to_fit"], to_fit_search=result["search"], reason=v["message"])
            if result["to_fit"]:
                record["message"] = f"{v['message']}; to fit: {_to_fit.summary(result['to_fit'])}"
            self.last[i] = (c, record)

    # -- the hook -------------------------------------------------------------------------------
    def __call__(self, configs, named_args, **kwargs):
        self.stats["calls"] += 1
        kernel = self.kernel
        if callable(kernel) and not hasattr(kernel, "params") and not hasattr(kernel, "fn"):
            kernel = kernel()  # a lambda naming a kernel defined later
        if kernel is None:
            tuner = _find_autotuner()
            if tuner is None:
                raise Error("early_prune: no kernel given and not called by triton.autotune")
            kernel = tuner.fn
        fn = _jit_function(kernel)
        # The autotuner passes its launch keywords on, grid and warmup among them (JITFunction.run
        # takes those two apart from the kernel's keywords).
        kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        args = self.signature_or_args
        launch = {}
        if args is None:
            # Triton passes the positional arguments by name and the launch's keywords.
            args = dict(named_args)
            for k, v in kwargs.items():
                if k in fn.arg_names:
                    args[k] = v
                else:
                    launch[k] = v
        else:
            launch = dict(kwargs)
        order = list(configs)
        if self.top_k:
            # Never the list's order in place of a ranking: a tile it cannot map or a failed plan is an Error.
            names = self._names(fn, order, args, launch)
            self._check_mapping(fn, order, names)
            rank = self._plan_rank(fn, order, {**named_args, **kwargs}, names, args, launch)
            if rank:
                worst = len(rank) + 1
                position = {id(c): i for i, c in enumerate(order)}
                order.sort(key=lambda c: (rank.get(_graph_key(c, names), worst), position[id(c)]))
        if not self.top_k:  # with top_k the planner's order decides how few are lowered at all
            self._lower_ahead(fn, order, args, launch)
        kept, self.last = [], []
        for c in order:
            v = self.verdict(fn, c, args, launch)
            self.last.append((c, v))
            if v["fits"]:
                kept.append(c)
                if self.top_k and len(kept) >= self.top_k:
                    break
        if self.to_fit:
            self._with_to_fit(fn, args, launch, {**named_args, **kwargs})
        if self.verbose:
            for c, v in self.last:
                if not v["fits"]:
                    log.warning("scratchsim: skipping %s: %s", c, v["message"])
        dropped = [v for _, v in self.last if not v["fits"]]
        self.stats["kept"] += len(kept)
        self.stats["dropped"] += len(dropped)
        if not kept:
            reasons = "; ".join(sorted({v.get("reason", v["message"]) for v in dropped}))[:2000]
            nearest = next((v["to_fit"] for v in dropped if v.get("to_fit")), None)
            if nearest:
                reasons += f"; the nearest config that fits: {_to_fit.summary(nearest, 1)}: {nearest[0]['config']}"
            if self.on_empty == "keep":
                log.warning("scratchsim early_prune: no config fits (%s); keeping them all", reasons)
                return list(configs)
            raise Error(f"no config of {fn.__name__} fits on {self.device or _arch(target_of(self.target))}: {reasons}")
        if not self.top_k:
            # Kept in the autotuner's order.
            keep = {id(c) for c in kept}
            kept = [c for c in configs if id(c) in keep]
        return kept


def _shared_required(report: dict):
    for s in report.get("spaces", []):
        if s.get("space") in ("smem", "lds"):
            return s.get("peak_bytes")
    return None


def early_prune(kernel=None, signature_or_args=None, target=None, *, device: str | None = None,
                top_k: int | None = None, graph=None, param_names: Mapping[str, str] | None = None,
                problem: Callable[[Mapping[str, Any]], dict] | None = None, on_empty: str = "raise",
                verbose: bool = False, workers: int | None = None, any_target: bool = False, to_fit: int = 1,
                max_lowerings: int = _to_fit.MAX_LOWERINGS, registers: bool = False) -> EarlyPrune:
    """A callable for triton.autotune(..., prune_configs_by={"early_config_prune": ...}).

    It lowers each config to TTGIR (for `target`, None: the local GPU), simulates it, drops every
    config that cannot fit (shared memory, tensor memory, threads: Triton's OutOfResources before
    it happens) and keeps the rest in the autotuner's order. Lowered configs are cached (per
    kernel, config, argument specialization and target), so a new problem size that specializes
    the same way costs nothing.

    kernel: the @triton.jit kernel; None finds it from the calling autotuner, a lambda names one
        defined later. signature_or_args: as check(); None takes the launch's own arguments.
    top_k: keep only the first K fitting configs of the planner's autotuning shortlist over a
        shipped graph family (`graph`, default "triton_matmul"; problem(named_args) gives M, N, K,
        ELT): its pick, then the fastest config of each other block shape within the model's
        ranking error, each followed by its occupancy twin, then by estimate (docs/planner.md,
        "The autotuning shortlist"); the tile
        constexprs are mapped to its BLOCK_M, BLOCK_N, BLOCK_K by their role in the kernel's
        product (map_by_role) unless param_names maps them; configs are lowered in the
        shortlist's order until K fit, and returned in it.
    registers: with top_k, rank with the registers ptxas allocates in place of the graph's
        estimate wherever they can change the first top_k: the configs the estimate prunes for
        spills and those the ranking places in its first 2 x top_k are compiled here (once each,
        as compiled_registers does: 0.3-0.7 s each on a CPU) until all of those are compiled;
        .stats["compiled"] and ["compile_s"] say what it cost.
    to_fit: each dropped config's record in .last names its `to_fit` nearest configs that fit
        (check()'s search, at most max_lowerings lowerings each beyond the cache; 0: none).
    on_empty: "raise" (scratchsim.Error naming why) or "keep" (return every config) when none fits.
    workers: processes that lower configs in parallel (Triton's front end holds the GIL, so
        threads would not): None is default_workers() (the usable cores less one, at most 16),
        0 or 1 lowers every config in this process. Workers are used for 16 or more configs, four
        or more each, and only for a kernel a worker can import (defined at the top level of a
        module other than __main__); the verdicts are the same either way.
    """
    return EarlyPrune(kernel, signature_or_args, target, device, top_k, graph, param_names, problem, on_empty,
                      verbose, workers, any_target, to_fit, max_lowerings, registers)
