"""scratchsim.pallas: a pallas_call traced on the CPU and checked for TPU generations."""
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
pytest.importorskip("jax.experimental.pallas.tpu", reason="this JAX has no Pallas TPU")

import scratchsim  # noqa: E402
import scratchsim.pallas as ssp  # noqa: E402
from scratchsim import _pallas_to_graph as p2g  # noqa: E402  (bench/tpu/pallas_to_graph.py, packaged)


def fatal(report):
    return [v["message"] for v in report["violations"] if v.get("fatal")]


def test_the_tracer_is_bench_tpus(repo):
    assert open(p2g.__file__).read() == (repo / "bench" / "tpu" / "pallas_to_graph.py").read_text()


def test_the_body_reader_is_bench_tpus(repo):
    from scratchsim import _pallas_body
    assert open(_pallas_body.__file__).read() == (repo / "bench" / "tpu" / "pallas_body.py").read_text()


def test_traced_graphs_carry_the_body_and_get_a_spill_estimate():
    fn, args = p2g.example_matmul(bm=1024, bn=1024, bk=1024)
    graph = ssp.to_graph(fn, *args)
    assert "body not read" not in graph
    assert "dots {" in graph
    report = ssp.check(fn, *args, device="tpu_v5e")
    vmem = {s["space"]: s for s in report["spaces"]}["vmem"]
    assert vmem["has_estimates"] and vmem["estimated_bytes"] > 0


def test_matmul_2048_blocks_do_not_fit_v5e_scoped_vmem():
    fn, args = p2g.example_matmul()
    report = ssp.check(fn, *args, device="tpu_v5e")
    assert report["fits"] is False
    assert "Ran out of memory in memory space vmem" in fatal(report)[0]


def test_smaller_blocks_fit_and_match_the_graph_route():
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    report = ssp.check(fn, *args, device="v6e", keep_graph=True)
    assert report["fits"] is True
    again = scratchsim.simulate("tpu_v6e", report["graph"])
    assert again["spaces"] == report["spaces"]


def test_e1001_seed_shape():
    fn, args = p2g.example_e1001()
    graph = ssp.to_graph(fn, *args)
    assert 'name: "my-custom-kernel"' in graph
    assert ssp.check(fn, *args, device="tpu_v5e")["fits"] is False


def test_prefetch_buffering_and_vmem_limit():
    fn, args = p2g.example_prefetch()
    graph = ssp.to_graph(fn, *args)
    assert "buffer_count: 1" in graph and "vmem_limit_bytes" in graph
    assert ssp.check(fn, *args, device="tpu_v5e")["fits"] is True


def test_no_pallas_call_is_an_error():
    import jax.numpy as jnp
    with pytest.raises(scratchsim.Error):
        ssp.check(lambda x: x + 1, jax.ShapeDtypeStruct((8, 128), jnp.float32))
