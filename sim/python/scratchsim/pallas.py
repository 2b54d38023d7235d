"""Pallas (TPU): trace a pallas_call into a KernelGraph and check it for a TPU generation.

Tracing runs on the CPU (jax.make_jaxpr; no TPU needed) and reads each pallas_call's grid,
BlockSpecs (block shapes, index maps, pipeline_mode buffering), scratch shapes, scalar prefetch
and vmem_limit_bytes. The graph is then lowered as Mosaic allocates ((sublane, lane) padding,
double buffering) and judged against scoped and total VMEM with XLA's words::

    import jax, jax.numpy as jnp
    import scratchsim.pallas as ssp
    report = ssp.check(fn, jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16), ..., device="tpu_v5e")
    report["fits"], report["violations"][0]["message"]   # 'RESOURCE_EXHAUSTED: ... vmem ...'

The tracer is bench/tpu/pallas_to_graph.py itself, packaged (scratchsim._pallas_to_graph).

Where libtpu is installed (pip install "jax[tpu]"), check(..., confirm="at_risk") puts the real
compiler in the loop for the verdicts the model cannot settle: an AT RISK kernel (within the
register-spill estimate's band of the limit) is compiled ahead of time for the generation's
topology on this CPU (scratchsim._tpu_aot, bench/tpu/tpu_aot.py packaged) and the report says
what libtpu said.
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
    from scratchsim import _pallas_to_graph
    return _pallas_to_graph


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
    """(scratchsim._tpu_aot, generation, None) for `device`, the module imported before anything
    initializes libtpu (it sets the environment libtpu needs off a TPU host); (None, generation,
    why) where libtpu cannot compile for it here."""
    gen = _generation(device)
    if importlib.util.find_spec("libtpu") is None:
        return None, gen, 'libtpu is not installed (pip install "jax[tpu]")'
    from scratchsim import _tpu_aot
    if gen not in _tpu_aot.TOPOLOGIES:
        return None, gen, f"libtpu has no topology for {device} here (known: {', '.join(_tpu_aot.TOPOLOGIES)})"
    return _tpu_aot, gen, None


def _confirm(report: dict, fn, args, device: str) -> None:
    """Compiles fn(*args) with libtpu for `device` and adds what it said to `report`."""
    aot, gen, why = _aot(device)
    if aot is None:
        report["libtpu"] = {"error": f"{why}: the verdict stands unconfirmed"}
        return
    try:
        r = aot.compile_kernel(fn, args, gen)
    except Exception as e:  # libtpu refused to start (another process holds it, a bad install, ...)
        report["libtpu"] = {"error": f"libtpu could not compile here: {type(e).__name__}: {e}"[:600]}
        return
    need = {}
    if r["verdict"].startswith("vmem"):
        # what it needs: the same function exported, its kernels' limit raised to the whole VMEM
        try:
            import jax
            from jax import export
            with jax.default_device(aot.device(gen)):
                exported = export.export(jax.jit(fn), platforms=["tpu"])(*args)
            need = aot.requirement(exported, gen, r)
        except Exception as e:  # a function jax.export cannot run
            need = {"requirement_error": f"not measured: {type(e).__name__}: {e}"[:300]}
    report["libtpu"] = aot.confirmation(r, gen, need)
    report["confirmed_verdict"] = report["libtpu"].pop("confirmed_verdict")


def check(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None, name: str | None = None,
          index: int | None = None, keep_graph: bool = False, confirm: bool | str = False) -> dict:
    """Traces fn(*args)'s pallas_call and simulates it on the TPU generation `device` ("tpu_v4",
    "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7x" or an alias such as "v6e"). Returns the report
    (scratchsim.simulate's), with the graph under "graph" when keep_graph.

    confirm: "at_risk" (or True) compiles fn(*args) with libtpu when the verdict is AT_RISK,
    "always" every time (seconds to a minute a compile, on the CPU). The report then has
    "libtpu" (its verdict: fits, vmem_scoped, vmem_capacity, vmem_alloc or error; the scoped VMEM
    it reports for the kernel when it fits, else its figure, limit and message, and what it needs:
    requirement_bytes, its scoped VMEM with the kernels' limit raised to the whole VMEM
    (capacity_bytes), or exceeds_capacity; the topology and versions) and "confirmed_verdict" (FITS, DOES_NOT_FIT or NOT_COMPILABLE). Where libtpu cannot
    be used, "libtpu" has "error" saying why, and the model's verdict stands. libtpu compiles
    the function as it is: `params` do not reach it."""
    if confirm not in (False, True, "at_risk", "always"):
        raise Error(f"confirm={confirm!r}: use False, True / 'at_risk' or 'always'")
    if confirm:
        _aot(device)  # before tracing: libtpu reads its environment once
    graph = to_graph(fn, *args, name=name, index=index)
    report = scratchsim.simulate(device, graph, params)
    if keep_graph:
        report["graph"] = graph
    if confirm == "always" or (confirm and report.get("verdict") == "AT_RISK"):
        _confirm(report, fn, args, device)
    return report


def check_all(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None,
              name: str | None = None) -> list:
    """check() for every pallas_call fn makes, in call order."""
    return [scratchsim.simulate(device, g, params) for g in trace(fn, *args, name=name)]
