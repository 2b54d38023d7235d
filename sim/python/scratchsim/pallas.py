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
"""
from __future__ import annotations

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


def trace(fn, *args, name: str | None = None) -> list:
    """The KernelGraph textproto of every pallas_call that fn(*args) makes (args may be
    jax.ShapeDtypeStruct), in call order."""
    tracer = _tracer()
    graph_name = name or getattr(fn, "__name__", None) or "pallas_kernel"
    try:
        return tracer.graphs_from_function(fn, args, graph_name)
    except ValueError as e:
        raise Error(str(e)) from None


def to_graph(fn, *args, name: str | None = None, index: int | None = None) -> str:
    """The graph of fn's pallas_call (the `index`th when it makes several)."""
    graphs = trace(fn, *args, name=name)
    if index is None:
        if len(graphs) != 1:
            raise Error(f"fn makes {len(graphs)} pallas_calls: pass index=, or use check_all()")
        index = 0
    if not 0 <= index < len(graphs):
        raise Error(f"index {index}: fn makes {len(graphs)} pallas_calls")
    return graphs[index]


def check(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None, name: str | None = None,
          index: int | None = None, keep_graph: bool = False) -> dict:
    """Traces fn(*args)'s pallas_call and simulates it on the TPU generation `device` ("tpu_v4",
    "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7x" or an alias such as "v6e"). Returns the report
    (scratchsim.simulate's), with the graph under "graph" when keep_graph."""
    graph = to_graph(fn, *args, name=name, index=index)
    report = scratchsim.simulate(device, graph, params)
    if keep_graph:
        report["graph"] = graph
    return report


def check_all(fn, *args, device: str = "tpu_v5e", params: Mapping[str, Any] | None = None,
              name: str | None = None) -> list:
    """check() for every pallas_call fn makes, in call order."""
    return [scratchsim.simulate(device, g, params) for g in trace(fn, *args, name=name)]
