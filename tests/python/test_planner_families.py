"""scratchsim.plan over kernel families (docs/planner.md, "Kernel families"): a list of graphs is
one `simulate plan` with a --graph each, the same library call."""
import json
import pathlib

import pytest

import scratchsim

DECODE = {"M": 16, "N": 4096, "K": 14336}


GRAPHS = pathlib.Path(__file__).resolve().parents[2] / "models" / "graphs"


@pytest.fixture
def graphs():
    return [str(GRAPHS / "triton_matmul.pbtxt"), str(GRAPHS / "triton_matmul_splitk.pbtxt")]


def test_a_list_of_graphs_is_the_command_with_a_graph_each(graphs):
    report = scratchsim.plan_report("h200", graphs, DECODE, top=5, threads=1)
    code, out, err = scratchsim.run(["plan", "--device", "h200", "--graph", graphs[0], "--graph", graphs[1],
                                     "--set", "M=16", "--set", "N=4096", "--set", "K=14336", "--top", "5",
                                     "--threads", "1", "--format", "json"])
    assert code == 0, err
    assert json.loads(out) == report


def test_the_split_k_family_wins_a_decode_shape(graphs):
    report = scratchsim.plan_report("h200", graphs, DECODE, top=5)
    assert report["choice"]["winner"] == "triton_matmul_splitk"
    assert [f["family"] for f in report["families"]] == ["triton_matmul_splitk", "triton_matmul"]
    assert report["configs"][0]["family"] == "triton_matmul_splitk"
    assert scratchsim.plan("h200", graphs, DECODE, top=1)[0]["family"] == "triton_matmul_splitk"


def test_a_parameter_no_family_has_is_an_error_naming_it(graphs):
    with pytest.raises(scratchsim.Error, match="no graph given has a parameter 'SPLITK'"):
        scratchsim.plan("h200", graphs, dict(DECODE, SPLITK=4))


def test_one_graph_in_a_list_is_that_graph_alone(graphs):
    assert scratchsim.plan_report("h200", graphs[:1], DECODE, top=3) == scratchsim.plan_report("h200", graphs[0],
                                                                                                DECODE, top=3)
