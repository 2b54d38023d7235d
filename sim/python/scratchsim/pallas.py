"""Pallas (TPU): trace a pallas_call into a KernelGraph and check it for a TPU generation.

Tracing runs on the CPU (jax.make_jaxpr; no TPU needed) and reads each pallas_call's grid,
BlockSpecs (block shapes, index maps, pipeline_mode buffering), scratch shapes, scalar prefetch
and vmem_limit_bytes. The graph is then lowered as Mosaic allocates ((sublane, lane) padding,
double buffering) and judged against scoped and total VMEM with XLA's words::

    import jax, jax.numpy as jnp
    import scratchsim.pallas as ssp
    report = ssp.check(fn, jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16), ..., device="tpu_v5e")
    report["fits"], report["violations"][0]["message"]   # 'RESOURCE_EXHAUSTED: ... vmem ...'

The tracer is scratchsim._pallas_trace (its command line: bench/tpu/pallas_to_graph.py).

Where libtpu is installed (pip install "jax[tpu]"), check() puts the real compiler in the loop
by default for the verdicts the model cannot settle (confirm="auto": "at_risk" with libtpu,
nothing without), as scratchsim.simulate(confirm=) and `simulate --confirm` do, through the same
code: an AT RISK kernel (within the register-spill estimate's band of the limit) or an unsettled
FITS (its high bound within the model's uncertainty of the limit, or traced beside a libtpu the
model was not fitted on: report["unsettled"]) has its exported call compiled ahead of time for
the generation's topology on this CPU (backends/tpu/tpu_aot.py), libtpu's verdict is the
report's verdict and the model's stays beside it in "confirmation".
"""
from __future__ import annotations

import importlib.util
from typing import Any, Mapping

import scratchsim
from scratchsim import Error

__all__ = ["trace", "to_graph", "check", "check_all"]


def _tracer():
    try:
        import jax  # noqa: F401
    except ImportError as e:
        raise Error("scratchsim.pallas needs JAX (pip install jax)") from e
    from scratchsim import _pallas_trace
    return _pallas_trace


def trace(fn, *args, name: str | None = None, device: str | None = None) -> list:
    """The KernelGraph textproto of every pallas_call that fn(*args) makes (args may be
    jax.ShapeDtypeStruct), in call order.

    device: a TPU generation ("tpu_v6e") whose device the kernels are traced and exported under
    (needs libtpu): each graph's exported call (pallas.jax_export, what `simulate --confirm`
    compiles) is then lowered for that generation. Kernels whose lowering asks the TPU's device
    kind (ragged paged attention) export only so; the others export without it, for any
    generation."""
    tracer = _tracer()
    graph_name = name or getattr(fn, "__name__", None) or "pallas_kernel"
    try:
        if device is None:
            return tracer.graphs_from_function(fn, args, graph_name)
        import jax
        aot, gen, why = _aot(device)
        if aot is None:
            raise Error(f"device={device!r}: {why}")
        with jax.default_device(aot.device(gen)):
            return tracer.graphs_from_function(fn, args, graph_name)
    except ValueError as e:
        raise Error(str(e)) from None


def to_graph(fn, *args, name: str | None = None, index: int | None = None, device: str | None = None) -> str:
    """The graph of fn's pallas_call (the `index`th when it makes several); device as trace()'s."""
    graphs = trace(fn, *args, name=name, device=device)
    if index is None:
        if len(graphs) != 1:
            raise Error(f"fn makes {len(graphs)} pallas_calls: pass index=, or use check_all()")
        index = 0
    if not 0 <= index < len(graphs):
        raise Error(f"index {index}: fn makes {len(graphs)} pallas_calls")
    return graphs[index]


def _generation(device: str) -> str:
    """"tpu_v5e" / "v5e" / "TPU_V5E" -> "v5e"."""
    name = device.lower()
    return name[4:] if name.startswith("tpu_") else name


def _aot(device: str):
    """(scratchsim._tpu_aot, generation, None) for `device`, the TPU backend's runner imported
    before anything initializes libtpu (it sets the environment libtpu needs off a TPU host);
    (None, generation, why) where libtpu cannot compile for it here."""
    gen = _generation(device)
    if importlib.util.find_spec("libtpu") is None:
        return None, gen, 'libtpu is not installed (pip install "jax[tpu]")'
    from scratchsim import _tpu_aot
    if gen not in _tpu_aot.TOPOLOGIES:
        return None, gen, f"libtpu has no topology for {device} here (known: {', '.join(_tpu_aot.TOPOLOGIES)})"
    return _tpu_aot, gen, None


def _exported(graph: str) -> bool:
    """Whether the tracer wrote the kernel's exported call (pallas.jax_export) into `graph`."""
    return "\n  jax_export: " in graph


def _why_not_exported(graph: str) -> str:
    """The tracer's comment on why `graph` carries no exported call (pallas.jax_export)."""
    for line in graph.splitlines():
        if line.startswith("# not exported ("):
            return line[2:]
    return "the graph carries no exported call (pallas.jax_export)"


def check(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None, name: str | None = None,
          index: int | None = None, keep_graph: bool = False, confirm: bool | str = "auto") -> dict:
    """Traces fn(*args)'s pallas_call and simulates it on the TPU generation `device` ("tpu_v4",
    "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7x" or an alias such as "v6e"). Returns the report
    (scratchsim.simulate's), with the graph under "graph" when keep_graph.

    confirm: "auto" (the default) is "at_risk" where libtpu is importable and False where it is
    not; "at_risk" (or True) compiles the kernel with libtpu when the model cannot settle the
    verdict (AT_RISK, or a FITS the report calls "unsettled"), "always" every time, False never (seconds to a minute a compile, on the CPU): scratchsim.simulate(graph,
    confirm=) on the traced graph, whose exported call (pallas.jax_export) libtpu compiles. The
    report's "verdict" and "fits" are then libtpu's, its limit fix is the one libtpu measured,
    and "confirmation" holds what libtpu said (its outcome under "verdict", "confirmed_verdict",
    "scoped_vmem_bytes" or the error's "size_bytes", "limit_bytes" and "message",
    "requirement_bytes" or "exceeds_capacity", the topology and versions) and the model's own
    verdict ("model_verdict"). Where libtpu cannot compile it (not installed, no exported call),
    "confirmation" has "error" saying why and the model's verdict stands. libtpu compiles the
    kernel as it is: `params` do not reach it."""
    if confirm not in (False, True, "auto", "at_risk", "always"):
        raise Error(f"confirm={confirm!r}: use 'auto', False, True / 'at_risk' or 'always'")
    if confirm == "auto":
        confirm = "at_risk" if importlib.util.find_spec("libtpu") is not None else False
    mode = "at_risk" if confirm is True else confirm or None
    aot = why = None
    if mode:
        aot, _, why = _aot(device)  # before tracing: libtpu reads its environment once
    graph = to_graph(fn, *args, name=name, index=index)
    if mode and aot is not None and not _exported(graph):
        # a kernel whose lowering asks the TPU's device kind exports only when traced under it
        graph = to_graph(fn, *args, name=name, index=index, device=device)
    if mode and _exported(graph):
        report = scratchsim.simulate(device, graph, params, confirm=mode)
    else:
        report = scratchsim.simulate(device, graph, params)
        if mode == "always" or (mode and (report.get("verdict") == "AT_RISK" or report.get("unsettled"))):
            # nothing for libtpu to compile: the confirmation says why, as simulate's does when
            # libtpu cannot run, and the model's verdict stands
            why = f"{why}: the verdict stands unconfirmed" if why else _why_not_exported(graph)
            report["confirmation"] = {"error": why, "model_verdict": report["verdict"]}
    if keep_graph:
        report["graph"] = graph
    return report


def check_all(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None,
              name: str | None = None) -> list:
    """check() for every pallas_call fn makes, in call order."""
    return [scratchsim.simulate(device, g, params) for g in trace(fn, *args, name=name)]
