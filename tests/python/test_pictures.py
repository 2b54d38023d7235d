"""The pictures through the package (docs/pictures.md): simulate(timeline=True, trace=True) and
plan_map() return the SVG and trace text the command line writes."""
import json

import pytest

import scratchsim


def test_simulate_returns_the_timeline_svg(mlp_graph):
    r = scratchsim.simulate("h100", mlp_graph, timeline=True)
    svg = r["timeline_svg"]
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    for name in ("gate_tile", "up_tile", "x_tile", "limit 227.0 KiB"):
        assert name in svg


def test_the_svg_is_the_command_lines(mlp_graph, tmp_path):
    path = tmp_path / "mlp.svg"
    code, _, err = scratchsim.run(["--device", "h100", "--graph", mlp_graph, "--timeline", str(path)])
    assert code == 1, err
    assert scratchsim.simulate("h100", mlp_graph, timeline=True)["timeline_svg"] == path.read_text()


def test_simulate_returns_the_trace(mlp_graph):
    trace = json.loads(scratchsim.simulate("h100", mlp_graph, trace=True)["trace_json"])
    slices = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] > 0]
    assert sorted(slices) == ["gate_tile", "gate_tile", "up_tile", "up_tile", "x_tile", "x_tile"]


def test_the_report_is_the_same_with_pictures(mlp_graph):
    r = scratchsim.simulate("h100", mlp_graph, timeline=True, trace=True)
    del r["timeline_svg"], r["trace_json"]
    assert r == scratchsim.simulate("h100", mlp_graph)


def test_no_picture_unless_asked(mlp_graph):
    r = scratchsim.simulate("h100", mlp_graph)
    assert "timeline_svg" not in r and "trace_json" not in r


def test_a_ttgir_kernel_has_a_timeline(sm90_ttgir):
    path, _, shared = sm90_ttgir
    svg = scratchsim.simulate_ttgir("h100", path, timeline=True)["timeline_svg"]
    assert "smem" in svg


def test_plan_map_returns_the_svg(repo):
    svg = scratchsim.plan_map("b200", str(repo / "models" / "graphs" / "gemm.pbtxt"), ("BLOCK_M", "BLOCK_N"))
    assert svg.startswith("<svg")
    assert "BLOCK_M by BLOCK_N" in svg and "pruned by" in svg


def test_plan_report_carries_the_map(repo):
    r = scratchsim.plan_report("b200", str(repo / "models" / "graphs" / "gemm.pbtxt"), top=3,
                               map_axes=["BLOCK_M", "BLOCK_N"])
    assert len(r["configs"]) == 3
    assert "#1" in r["map_svg"]


def test_a_map_over_a_parameter_not_swept_is_an_error(repo):
    with pytest.raises(scratchsim.Error, match="'M' is not a swept parameter"):
        scratchsim.plan_map("b200", str(repo / "models" / "graphs" / "gemm.pbtxt"), ("BLOCK_M", "M"))
