"""scratchsim.simulate / simulate_ttgir / plan / devices: the CLI's reports and messages."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import scratchsim

H100_SMEM = 232448


def cli(*args):
    """`python -m scratchsim ARGS` (the simulate command through the package)."""
    p = subprocess.run([sys.executable, "-m", "scratchsim", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def violation(report):
    """The first fatal violation's message (the toolchain's words)."""
    return [v for v in report["violations"] if v.get("fatal")][0]["message"]


def test_seed_002_from_a_path(mlp_graph):
    r = scratchsim.simulate("h100", mlp_graph)
    assert r["fits"] is False
    assert violation(r) == "out of resource: shared memory, Required: 526336, Hardware limit: 232448"


def test_the_report_is_the_cli_json(mlp_graph):
    code, out, _ = cli("--device", "h100", "--graph", mlp_graph, "--format", "json")
    assert code == 1
    assert scratchsim.simulate("h100", mlp_graph) == json.loads(out)


def test_params_are_set(mlp_graph):
    r = scratchsim.simulate("H100", mlp_graph, {"tile_t": 32, "tile_h": 32})
    assert "Required: 1056768" in violation(r)
    r = scratchsim.simulate("h100", mlp_graph, {"I_RED": 1024, "num_stages": 2})
    assert r["fits"] is True
    assert not [v for v in r["violations"] if v.get("fatal")]


def test_graph_as_text_bytes_json_and_pathlike(repo, mlp_graph):
    text = open(mlp_graph).read()
    expected = scratchsim.simulate("h100", mlp_graph)
    from_text = scratchsim.simulate("h100", text)
    assert violation(from_text) == violation(expected)
    assert from_text["spaces"] == expected["spaces"]
    assert violation(scratchsim.simulate("h100", repo / "models" / "graphs" / "mlp.pbtxt")) == violation(expected)
    # The same graph as JSON text and as a dict, through the CLI's own --graph x.json reading.
    gemm = scratchsim.simulate("b200", str(repo / "models" / "graphs" / "gemm.pbtxt"))
    assert gemm["fits"] in (True, False)


def test_binary_graph(repo, mlp_graph):
    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.skip("protoc is not installed (Debian's protobuf-compiler, .ci/install) to encode a .pb")
    with open(mlp_graph, "rb") as f:
        pb = subprocess.run([protoc, "--encode=scratchsim.KernelGraph", f"--proto_path={repo / 'proto'}",
                             str(repo / "proto" / "graph.proto")], stdin=f, capture_output=True, check=True).stdout
    r = scratchsim.simulate("h100", pb)
    assert violation(r) == violation(scratchsim.simulate("h100", mlp_graph))
    assert scratchsim.simulate("h100", bytearray(pb))["fits"] is False
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate("h100", b"\x0a\xff\xff\xff\xff\x0fgarbage")
    assert "<graph bytes>" in str(e.value)


def test_errors_are_value_errors_with_the_cli_message(tmp_path, mlp_graph):
    assert issubclass(scratchsim.Error, ValueError)
    cases = [
        (["--device", "nosuch", "--graph", mlp_graph], lambda: scratchsim.simulate("nosuch", mlp_graph)),
        (["--device", "h100", "--graph", str(tmp_path / "missing.pbtxt")],
         lambda: scratchsim.simulate("h100", str(tmp_path / "missing.pbtxt"))),
    ]
    for args, call in cases:
        code, _, err = cli(*args)
        assert code == 2
        with pytest.raises(scratchsim.Error) as e:
            call()
        assert err.strip() == f"simulate: error: {e.value}"


# The same message as the command line's, with the override named as Python wrote it.
def test_params_errors_name_the_python_argument(mlp_graph):
    cases = [("nosuch=3", {"nosuch": 3}, "params={'nosuch': 3}"),
             ("tile_t=abc", {"tile_t": "abc"}, "params={'tile_t': 'abc'}")]
    for flag, params, spelled in cases:
        _, _, err = cli("--device", "h100", "--graph", mlp_graph, "--set", flag)
        with pytest.raises(scratchsim.Error) as e:
            scratchsim.simulate("h100", mlp_graph, params)
        assert str(e.value).startswith(spelled + ":")
        assert "--set" not in str(e.value)
        assert err.strip() == f"simulate: error: {e.value}".replace(spelled, f"--set {flag}")


def test_param_errors_name_the_python_argument():
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.plan("h100", scratchsim.graph_path("triton_matmul"), param={"BLOCK_Q": 1})
    assert str(e.value).startswith("param={'BLOCK_Q': '1'}:")
    assert "--param" not in str(e.value)


def test_plan_names_itself_for_an_unknown_keyword():
    with pytest.raises(TypeError, match=r"plan\(\) got an unexpected keyword argument 'bogus_option'"):
        scratchsim.plan("h100", scratchsim.graph_path("triton_matmul"), bogus_option=1)


def test_bad_text_names_the_line():
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate("h100", 'name: "x"\nbuffers { name: "a" size_bytes: "1 +" memory_space: "smem" }\n')
    assert str(e.value)
    with pytest.raises(scratchsim.Error):
        scratchsim.simulate("h100", "name: \"x\"\nnot a field: 3\n")
    with pytest.raises(scratchsim.Error):
        scratchsim.simulate("h100", '{"name": "x", "buffers": [{"name": 1')


@pytest.mark.parametrize("bad", [b"", b"\x00" * 64, bytes(range(256)) * 4, "\n", "{}", "{\n}", 12, None, 3.5])
def test_bad_input_never_crashes(bad):
    try:
        scratchsim.simulate("h100", bad)
    except scratchsim.Error:
        pass


def test_definitions_from_text_has_no_directory_and_says_so():
    # A graph given as text has no file whose directory definitions_from is relative to: an error
    # naming the field, never the definitions silently missing.
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate("h100", 'definitions_from: "rules/triton_mma.pbtxt"\n'
                                    'buffers { name: "a" size_bytes: "4" memory_space: "smem" }\n')
    assert "definitions_from: 'rules/triton_mma.pbtxt' is not resolved" in str(e.value)


def test_a_shipped_graph_finds_its_definitions_files(tmp_path):
    # The package ships the rules files beside the graphs; a copy elsewhere names the missing file.
    report = scratchsim.simulate("h100", scratchsim.graph_path("triton_matmul"), {"M": 64, "N": 4096, "K": 4096})
    assert report["fits"] is True
    copy = tmp_path / "triton_matmul.pbtxt"
    copy.write_text(open(scratchsim.graph_path("triton_matmul")).read())
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate("h100", str(copy))
    assert "definitions_from[0] 'rules/triton_dot.pbtxt'" in str(e.value)


def test_devices():
    devices = scratchsim.devices()
    names = {d["name"] for d in devices}
    assert {"h100", "b200", "mi300x", "tpu_v5e"} <= names
    h100 = scratchsim.device("H100")
    assert h100["arch"] == "sm_90"
    smem = [s for s in h100["memory_spaces"] if s["name"] == "smem"][0]
    assert smem["per_block_optin_bytes"] == H100_SMEM
    with pytest.raises(scratchsim.Error):
        scratchsim.device("nosuch")


def test_models_dirs_of_the_user_come_first(tmp_path, monkeypatch):
    h100 = open(os.path.join(os.path.dirname(scratchsim.__file__), "models", "devices", "h100.textproto")).read()
    # h100's aliases stay h100's: a user model that took them too would be refused by name
    mine = "\n".join(line for line in h100.replace('name: "h100"', 'name: "mygpu"').splitlines()
                     if not line.lstrip().startswith("aliases"))
    (tmp_path / "mine.textproto").write_text(mine)
    monkeypatch.setenv("SCRATCHSIM_MODELS", str(tmp_path))
    assert scratchsim.device("mygpu")["arch"] == "sm_90"
    assert "mygpu" in {d["name"] for d in scratchsim.devices()}


def smem_peak(report):
    return [s for s in report["spaces"] if s["space"] == "smem"][0]["peak_bytes"]


def test_simulate_ttgir_path_and_text(sm90_ttgir):
    path, text, shared = sm90_ttgir
    by_path = scratchsim.simulate_ttgir("h100", str(path))
    by_text = scratchsim.simulate_ttgir("h100", text, name=path.name)
    assert by_path["fits"] and by_text["fits"]
    assert smem_peak(by_path) == smem_peak(by_text) == shared
    assert by_path["spaces"] == by_text["spaces"]
    code, out, _ = cli("--device", "h100", "--ttgir", str(path), "--format", "json")
    assert json.loads(out) == by_path


def test_simulate_ttgir_checks_the_target(sm90_ttgir):
    _, text, shared = sm90_ttgir
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate_ttgir("b200", text, name="k.ttgir")
    assert "k.ttgir: ttg.target: the kernel was compiled for sm_90" in str(e.value)
    assert smem_peak(scratchsim.simulate_ttgir("b200", text, any_target=True)) == shared
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.simulate_ttgir("h100", "module {\n  tt.func @k( {\n")
    assert "<ttgir text>" in str(e.value)


def _untold_reduce(repo):
    """A gfx942 reduction whose TTGIR does not say its Triton release; 3.6 places 16384 bytes,
    3.9 places 8192 (tests/ttgir_cli_test.cc's UntoldReduce: the catalogue kernel without its
    `#loc` table, whose kernel location column would tell)."""
    import tarfile
    with tarfile.open(repo / "tests" / "data" / "triton" / "catalogue" / "3.6.0" / "gfx942.tar.gz") as t:
        text = t.extractfile("reduce2d_gfx942_jit_0db0c50a24.ttgir").read().decode()
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#loc"))


def lds_peak(report):
    return [s for s in report["spaces"] if s["space"] == "lds"][0]["peak_bytes"]


@pytest.mark.parametrize("release,peak", [("3.6.0", 16384), ("3.9.0", 8192)])
def test_simulate_ttgir_applies_the_release_the_caller_names(repo, monkeypatch, release, peak):
    monkeypatch.delenv("SCRATCHSIM_TRITON_RELEASE", raising=False)
    report = scratchsim.simulate_ttgir("mi300x", _untold_reduce(repo), name="r.ttgir", triton_release=release)
    assert lds_peak(report) == peak
    assert any(f"Triton {release} named by the caller" in n for n in report["notes"])
    assert not any("3.9 places" in n for n in report["notes"])


def test_simulate_ttgir_names_an_unmodelled_release_and_keeps_both_figures(repo, monkeypatch):
    monkeypatch.delenv("SCRATCHSIM_TRITON_RELEASE", raising=False)
    report = scratchsim.simulate_ttgir("mi300x", _untold_reduce(repo), name="r.ttgir", triton_release="3.7.1")
    assert lds_peak(report) == 16384  # the larger of the releases' figures, as with nothing named
    notes = " ".join(report["notes"])
    assert "Triton 3.7.1, named by the caller" in notes and "not modelled" in notes
    assert "Triton 3.6 places 16384 bytes, 3.9 places 8192" in notes


def test_the_environment_overrides_the_callers_release(repo, monkeypatch):
    monkeypatch.setenv("SCRATCHSIM_TRITON_RELEASE", "3.9")
    report = scratchsim.simulate_ttgir("mi300x", _untold_reduce(repo), name="r.ttgir", triton_release="3.6.0")
    assert lds_peak(report) == 8192


def test_plan_matches_the_cli(repo):
    graph = str(repo / "models" / "graphs" / "triton_matmul.pbtxt")
    sizes = {"M": 4096, "N": 4096, "K": 4096, "ELT": 2}
    configs = scratchsim.plan("h100", graph, sizes, top=5, compute_dtype="f16")
    assert len(configs) == 5 and [c["rank"] for c in configs] == [1, 2, 3, 4, 5]
    code, out, _ = cli("plan", "--device", "h100", "--graph", graph, "--set", "M=4096", "--set", "N=4096",
                       "--set", "K=4096", "--set", "ELT=2", "--compute-dtype", "f16", "--top", "5", "--format", "json")
    assert code == 0
    assert json.loads(out)["configs"] == configs
    report = scratchsim.plan_report("h100", graph, sizes, top=3, compute_dtype="f16",
                                    param={"BLOCK_M": [64, 128], "NUM_STAGES": range(2, 5)})
    assert report["axes"][0]["name"] == "BLOCK_M" or any(a["name"] == "BLOCK_M" for a in report["axes"])
    assert {a["name"]: a["values"] for a in report["axes"]}["NUM_STAGES"] == [2, 3, 4]


def test_plan_errors():
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.plan("h100", scratchsim.graph_path("triton_matmul"), top=-1)
    assert str(e.value).startswith("top: must be 0..100000")
    with pytest.raises(scratchsim.Error):
        scratchsim.graph_path("nosuch")
    # A problem no tiling can build is refused before the sweep, naming the sizes.
    with pytest.raises(scratchsim.Error) as e:
        scratchsim.plan("h100", scratchsim.graph_path("triton_matmul"), {"M": 16, "N": 0, "K": 4096})
    assert "at --set M=16 --set N=0 --set K=4096 --set ELT=2: no tiling makes this problem a kernel" in str(e.value)


def test_seed_002_plan_finds_nothing_at_whole_i_red(mlp_graph):
    configs = scratchsim.plan("h100", mlp_graph, top=3)
    report = scratchsim.plan_report("h100", mlp_graph, top=3)
    assert report["fitting"] == len(configs) or report["fitting"] >= len(configs)


def test_run_is_the_command_line(mlp_graph):
    code, out, err = scratchsim.run(["--device", "h100", "--graph", mlp_graph])
    assert code == 1 and "DOES NOT FIT" in out and err == ""
    code, out, err = scratchsim.run(["--device"])
    assert code == 2 and err.startswith("simulate: error:")


def test_submodules_import_without_their_frameworks():
    import scratchsim.helion
    import scratchsim.pallas
    assert callable(scratchsim.helion.config_filter) and callable(scratchsim.pallas.check)


def test_the_packaged_models_are_used_wherever_python_runs(tmp_path, mlp_graph):
    """A ./models/devices of the working directory (another checkout's) is not searched."""
    (tmp_path / "models" / "devices").mkdir(parents=True)
    (tmp_path / "models" / "devices" / "broken.textproto").write_text("not a device {\n")
    code = f"import scratchsim; print(scratchsim.simulate('h100', {mlp_graph!r})['fits'])"
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
