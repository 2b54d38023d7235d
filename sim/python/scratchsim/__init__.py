"""scratchsim: predicts, before you compile, whether a GPU or TPU kernel fits on chip.

The same C++ core as the ``simulate`` command (built by ``pip install .``), with the same
reports and the same messages::

    import scratchsim
    report = scratchsim.simulate("h100", "models/graphs/mlp.pbtxt")
    report["fits"]                 # False
    report["violations"][0]["message"]
    # 'out of resource: shared memory, Required: 526336, Hardware limit: 232448'

Bad input raises :class:`scratchsim.Error` (a ``ValueError``) with the command line's message.
Submodules: :mod:`scratchsim.triton` (check a @triton.jit config, early_prune for
triton.autotune), :mod:`scratchsim.helion` (a config filter for Helion's autotuner),
:mod:`scratchsim.pallas` (trace a pallas_call and check it for a TPU). See docs/python.md.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterable, Mapping

from . import _ext
from ._ext import Error

__all__ = ["Error", "simulate", "simulate_ttgir", "plan", "plan_report", "devices", "device", "graph_path",
           "run", "plan_map"]
__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODELS = os.path.join(_HERE, "models", "devices")
_GRAPHS = os.path.join(_HERE, "graphs")


def __getattr__(name: str):
    """scratchsim.triton, .helion and .pallas load on first use (each imports its framework lazily)."""
    if name in ("triton", "helion", "pallas"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'scratchsim' has no attribute '{name}'")


# The device models shipped in the package are the shipped models (the native module's search
# for a source tree or ./models/devices is replaced); SCRATCHSIM_MODELS's directories still come
# first and win on a name clash, as for `simulate`.
if os.path.isdir(_MODELS):
    _ext.set_shipped_models_dir(_MODELS)


def graph_path(name: str) -> str:
    """The path of a graph shipped with the package: "triton_matmul" (the Triton matmul family
    the planner was validated on) or "mlp" (seed 002's GeGLU)."""
    path = os.path.join(_GRAPHS, name if name.endswith(".pbtxt") else name + ".pbtxt")
    if not os.path.isfile(path):
        known = sorted(f[:-len(".pbtxt")] for f in os.listdir(_GRAPHS)
                       if f.endswith(".pbtxt")) if os.path.isdir(_GRAPHS) else []
        raise Error(f"no shipped graph '{name}' (shipped: {', '.join(known) or 'none'})")
    return path


def _looks_like_text(s: str) -> bool:
    return "\n" in s or "{" in s or ": " in s


def _kernel_input(value: Any, what: str, reader: str):
    """(reader, path, contents, format, origin) for a kernel given as a path, text or bytes."""
    if isinstance(value, os.PathLike):
        return reader, os.fspath(value), None, "", ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return reader, "", bytes(value), "binary", f"<{what} bytes>"
    if isinstance(value, Mapping):
        return reader, "", json.dumps(value).encode(), "json", f"<{what} dict>"
    if hasattr(value, "SerializeToString"):  # a protobuf message of proto/graph.proto
        return reader, "", value.SerializeToString(), "binary", f"<{what} message>"
    if isinstance(value, str):
        if os.path.isfile(os.path.expanduser(value)) or not _looks_like_text(value):
            return reader, os.path.expanduser(value), None, "", ""
        fmt = "json" if value.lstrip().startswith("{") else "text"
        return reader, "", value.encode(), fmt, f"<{what} text>"
    raise Error(f"{what}: expected a path, text or bytes, got {type(value).__name__}")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _sets(params: Mapping[str, Any] | None) -> list[str]:
    """`--set NAME=VALUE` overrides as the pipeline takes them: NAME=VALUE."""
    return [f"{name}={_value(value)}" for name, value in (params or {}).items()]


def simulate(device: str, graph: Any, params: Mapping[str, Any] | None = None, *, policy: str | None = None,
             suggest: bool = True, any_target: bool = False, timeline: bool = False, trace: bool = False,
             confirm: str | None = None) -> dict:
    """Simulates one configuration of a kernel graph on a device.

    device: a shipped model's name in any case ("h100", "b200", "mi300x", "tpu_v5e"; see
        devices()) or a path to a DeviceModel textproto.
    graph: a path to a KernelGraph (.pb, .pbtxt/.textproto, .json), its text (textproto or JSON),
        its binary serialization (bytes), or a dict in its JSON mapping.
    params: parameter overrides, {"NAME": VALUE} (the command line's `--set NAME=VALUE`).
    Returns the report as `simulate --format json` prints it (docs/architecture.md: the JSON
    mapping): "fits", "violations" (with the toolchain's message), "spaces", "occupancy",
    "suggestions", ...
    timeline=True adds "timeline_svg", the memory timeline as SVG text (`simulate --timeline`);
    trace=True adds "trace_json", the Chrome trace as JSON text (`--trace`). docs/pictures.md.
    confirm="always" or "at_risk" (`--confirm`): a Pallas graph the tracer wrote is compiled with
    libtpu (its pallas.jax_export), every time or when the verdict is AT_RISK, and the report's
    "verdict" is libtpu's, with "confirmation" saying what it said and the model's verdict
    (docs/tpu.md, "The compiler in the loop"). libtpu runs in $SCRATCHSIM_PYTHON, which this
    sets to this interpreter where it is unset.
    """
    if confirm is not None:
        if confirm not in ("always", "at_risk"):
            raise Error(f"confirm={confirm!r}: use 'always' or 'at_risk'")
        os.environ.setdefault("SCRATCHSIM_PYTHON", sys.executable)
    return _simulate(device, _kernel_input(graph, "graph", "graph"), params=params, policy=policy,
                     suggest=suggest, any_target=any_target, confirm=confirm, timeline=timeline, trace=trace)


def simulate_ttgir(device: str, ttgir: Any, *, suggest: bool = True, any_target: bool = False,
                   name: str | None = None, timeline: bool = False, trace: bool = False,
                   triton_release: str | None = None) -> dict:
    """Simulates a kernel Triton compiled: `ttgir` is the path of a .ttgir file (Triton's cache
    writes one per kernel) or its text. Shared memory is placed as Triton's allocator places it,
    so the figure equals Triton's metadata.shared. A kernel compiled for another target than
    `device` is an Error unless any_target. `name` names text input in messages. timeline and
    trace as for simulate(). `triton_release` is the version of the Triton that wrote the TTGIR
    where the caller knows it (triton.__version__): its allocation rules apply where the TTGIR
    does not say; an unmodelled release is named in the notes (docs/triton.md, "Releases")."""
    if isinstance(ttgir, (bytes, bytearray)):
        ttgir = bytes(ttgir).decode()
    if isinstance(ttgir, str) and "\n" in ttgir:
        kernel = ("ttgir", "", ttgir.encode(), "text", name or "<ttgir text>")
    elif isinstance(ttgir, (str, os.PathLike)):
        kernel = ("ttgir", os.path.expanduser(os.fspath(ttgir)), None, "", "")
    else:
        raise Error(f"ttgir: expected a path or the TTGIR text, got {type(ttgir).__name__}")
    return _simulate(device, kernel, suggest=suggest, any_target=any_target, timeline=timeline, trace=trace,
                     producer_release=triton_release)


def _param_flag(name: str, values: Any) -> str:
    if isinstance(values, str):
        return f"{name}={values}"
    if isinstance(values, range) and values.step == 1:
        return f"{name}={values.start}..{values.stop - 1}"
    if isinstance(values, Iterable):
        return f"{name}=" + ",".join(_value(v) for v in values)
    return f"{name}={_value(values)}"


def plan_report(device: str, graph: Any, params: Mapping[str, Any] | None = None, top: int = 10, *,
                param: Mapping[str, Any] | None = None, threads: int | None = None,
                compute_dtype: str | None = None, allow_spills: bool = False, policy: str | None = None,
                map_axes: Iterable[str] | None = None, registers: Iterable[Any] | None = None) -> dict:
    """The whole of `simulate plan --format json`: the space, how many fit, the ranked
    configurations ("configs"), the autotuning shortlist ("shortlist": the order to time them
    in, its hedges marked "hedge"), what pruned the rest ("pruned") and notes. See plan().
    A list of graphs plans them as kernel families of one problem (one --graph each): every
    config names its "family", and "families" and "choice" say which family wins and why.
    map_axes=("BLOCK_M", "BLOCK_N") adds "map_svg": the plan map over those two swept parameters
    as SVG text (`simulate plan --map`, docs/pictures.md; one graph only).
    registers: a compiler's registers per configuration (`simulate plan --registers`): each a
    CompiledRegisters dict (scratchsim.triton.compiled_registers) or a path to such a file; a
    configuration it names has its occupancy and spills from them ("registers_from": "compiler")."""
    graphs = list(graph) if isinstance(graph, (list, tuple)) else [graph]
    kernels = [_kernel_input(g, "graph", "graph") for g in graphs]
    sets = _sets(params)
    axes_flags = [_param_flag(name, values) for name, values in (param or {}).items()]
    map_text = None if map_axes is None else ",".join(str(a) for a in map_axes)
    _, text, map_svg = _ext.plan(str(device), kernels, sets, axes_flags, int(top),
                                 0 if threads is None else int(threads), compute_dtype or "", bool(allow_spills),
                                 policy or "", map_text, [_registers_input(r, i) for i, r in enumerate(registers or ())])
    report = json.loads(text)
    if map_axes is not None:
        report["map_svg"] = map_svg
    return report


def _registers_input(figures: Any, index: int) -> tuple:
    """(origin, JSON text) of one registers= entry: a CompiledRegisters dict or a file's path."""
    if isinstance(figures, Mapping):
        return f"registers[{index}]", json.dumps(figures)
    if isinstance(figures, (str, os.PathLike)):
        path = os.fspath(figures)
        try:
            with open(path) as f:
                return path, f.read()
        except OSError as e:
            raise Error(f"registers[{index}]: cannot read {path}: {e.strerror}") from None
    raise Error(f"registers[{index}]: a CompiledRegisters dict or a JSON file's path, not {type(figures).__name__}")


def plan(device: str, graph: Any, params: Mapping[str, Any] | None = None, top: int = 10, *,
         param: Mapping[str, Any] | None = None, threads: int | None = None, compute_dtype: str | None = None,
         allow_spills: bool = False, policy: str | None = None) -> list:
    """Sweeps the graph's tuning parameters on `device` and returns the `top` configurations
    that fit, fastest first by the analytic model: each a dict with "rank", "params",
    "estimated_us", "peak_bytes", "blocks_per_core", "why", ... (as `simulate plan --format
    json` lists them).

    graph: one graph, or a list of graphs that compute the same result in different ways
        (kernel families: the plain and the split-K matmul), ranked together; each config then
        names its "family", and params and param apply to every family that has the parameter.
    params: fixed values, e.g. the problem size {"M": 4096, "N": 4096, "K": 4096}.
    param: {"BLOCK_M": [64, 128], "NUM_STAGES": "2..5", ...} (the axes to sweep; without it the
        graph's own ranges); threads=N, compute_dtype="f16", allow_spills=True, policy="best-fit".
    """
    return plan_report(device, graph, params, top, param=param, threads=threads, compute_dtype=compute_dtype,
                       allow_spills=allow_spills, policy=policy)["configs"]


def plan_map(device: str, graph: Any, axes: Iterable[str], params: Mapping[str, Any] | None = None, *,
             param: Mapping[str, Any] | None = None, threads: int | None = None, compute_dtype: str | None = None,
             allow_spills: bool = False, policy: str | None = None) -> str:
    """The plan map as SVG text: a grid over the two swept parameters `axes` (e.g. ("BLOCK_M",
    "BLOCK_N")), the others at the best configuration's values, each cell its estimated time or
    the limit that pruned it. params and the keyword arguments as for plan()."""
    return plan_report(device, graph, params, param=param, threads=threads, compute_dtype=compute_dtype,
                       allow_spills=allow_spills, policy=policy, map_axes=axes)["map_svg"]


def _simulate(device: str, kernel: tuple, *, params: Mapping[str, Any] | None = None, policy: str | None = None,
              suggest: bool = True, any_target: bool = False, confirm: str | None = None, timeline: bool = False,
              trace: bool = False, producer_release: str | None = None) -> dict:
    """The analysis pipeline on `kernel` (reader, path, contents, format, origin), with the
    pictures asked for as text ("timeline_svg", "trace_json")."""
    reader, path, contents, fmt, origin = kernel
    sets = _sets(params)
    _, text, timeline_svg, trace_json = _ext.simulate(
        str(device), reader, path, contents, fmt, origin, sets, policy or "", suggest, any_target,
        confirm or "", timeline, trace, producer_release or "")
    report = json.loads(text)
    if timeline:
        report["timeline_svg"] = timeline_svg
    if trace:
        report["trace_json"] = trace_json
    return report


def devices() -> list:
    """Every device model (shipped, and SCRATCHSIM_MODELS's), each as a dict of its DeviceModel
    fields: "name", "arch", "vendor", "display_name", "limits", "memory_spaces", ..."""
    return json.loads(_ext.devices())


def device(name: str) -> dict:
    """One device model (a name in any case, or a path to a DeviceModel textproto)."""
    return json.loads(_ext.device(str(name)))


def run(args: Iterable[str]) -> tuple:
    """Runs the `simulate` command line itself: returns (exit code, stdout, stderr)."""
    return _ext.run([str(a) for a in args])
