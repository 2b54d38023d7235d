"""scratchsim.inductor without torch: the kernels Inductor generated on the GPU machine (PyTorch 2.11,
tests/data/inductor/README.md) replayed through the pruning, the FlexAttention chooser and the model
report, and checked against what Triton itself did there."""
import collections
import itertools
import json
import sys
import tarfile
import time
import types

import pytest

import scratchsim
import scratchsim.inductor as ssi
from conftest import REPO

DATA = REPO / "tests" / "data" / "inductor"


@pytest.fixture(scope="module")
def recorded():
    """name -> parsed JSON (or text) of every member of tests/data/inductor/inductor_data.tar.gz."""
    out = {}
    with tarfile.open(DATA / "inductor_data.tar.gz") as t:
        for m in t.getmembers():
            if m.isfile():
                text = t.extractfile(m).read().decode()
                out[m.name] = json.loads(text) if m.name.endswith(".json") else text
    return out


def by_id(records):
    return {(r["template"], json.dumps(r["params"], sort_keys=True)): r for r in records}


def test_every_kernel_of_the_output_code_is_found(recorded):
    """The model report's kernels are those the output code defines, in order, each once."""
    code = recorded["run2/block_on.code.py"]
    kernels = ssi.kernels_from_output_code(code)
    names = [n for n, _ in kernels]
    assert names == [r["name"] for r in recorded["run2/block_on.model_records.json"]]
    assert len(names) == len(set(names)) and len(names) >= 3
    for name, src in kernels:
        assert "@triton.jit" in src and f"def {name}(" in src
    assert ssi.kernels_from_output_code("def f(): pass\n") == []


@pytest.mark.parametrize("member", ["run1/flex_on.records.json", "run2/block_on.records.json"])
def test_pruner_figure_is_tritons_metadata_shared(recorded, member):
    """Each checked template choice, replayed: scratchsim's figure for its TTGIR equals the
    metadata.shared Triton wrote when it compiled the same TTGIR on the H200 (where it did), and
    the verdict is the one the hook acted on."""
    records = recorded[member]
    compared = 0
    for r in records:
        (arch, ttgir), = r["ttgir"].items()
        v = ssi.judge(ttgir, arch, "h200", name=r["template"])
        assert v["shared"] == r["shared"], r["params"]
        assert v["verdict"] == r["verdict"], r["params"]
        if r.get("triton_shared") is not None:
            assert v["shared"] == r["triton_shared"], r["params"]
            compared += 1
    assert compared >= 1


def test_dropped_configs_are_the_ones_triton_refused(recorded):
    """The decoder block in one run: without the hook Triton raised OutOfResources on the H200 for
    some mm configs; with it, scratchsim dropped configs before compiling with exactly those
    Required figures, and none was raised."""
    results = recorded["run2/inductor_gpu.json"]["parts"]
    refused = collections.Counter(o["required"] for o in results["block_off"]["oor_logged"] if "required" in o)
    records = recorded["run2/block_on.records.json"]
    dropped = collections.Counter(r["shared"] for r in records if r["verdict"] == "DOES_NOT_FIT")
    # Records hold each generated module once; ops of the same shape share one, so the hook's own
    # count of drops (one per op) is the one to set against Triton's refusals (one per op).
    assert refused and set(dropped) == set(refused)
    assert results["block_on"]["oor_logged"] == []
    assert results["block_on"]["pruner"]["stats"]["dropped"] == sum(refused.values())
    for r in records:
        v = ssi.judge(next(iter(r["ttgir"].values())), "sm_90", "h200")
        assert (v["verdict"] == "DOES_NOT_FIT") == (r["shared"] > 232448)


def test_prune_keeps_order_and_drops_only_what_cannot_fit(recorded):
    records = recorded["run2/block_on.records.json"]

    def verdict_of(r):
        return None if r is None else ssi.judge(next(iter(r["ttgir"].values())), "sm_90", "h200")
    items = [None] + records  # None stands for an ATen choice: never dropped
    kept, dropped = ssi.prune(items, verdict_of)
    assert kept[0] is None
    assert [r for r in records if r in kept] == [r for r in records if r["verdict"] != "DOES_NOT_FIT"]
    assert all(v["message"].startswith("out of resource: shared memory, Required: ") for _, v in dropped)
    assert len(dropped) == sum(r["verdict"] == "DOES_NOT_FIT" for r in records)


def test_chooser_picks_the_first_config_that_fits_an_rtx4090(recorded):
    """FlexAttention without max-autotune, judged for sm_89 on the RTX 4090 model (101376 B): the
    candidates in the order the chooser saw them, replayed; the pick is the GPU run's."""
    part = recorded["run1/inductor_gpu.json"]["parts"]["chooser"]
    records = recorded["run1/chooser.records.json"]
    for template in ("flex_attention", "flex_attention_backward"):
        cands = [r for r in records if r["template"] == template]
        assert cands, template

        def verdict_of(r):
            return ssi.judge(r["ttgir"]["sm_89"], "sm_89", "rtx4090")
        pick = ssi.first_fit(cands, verdict_of)
        chosen = [c for c in part["pruner"]["chosen"] if c["template"] == template]
        assert pick is not None and chosen and chosen[0]["params"] == pick["params"]
        v = verdict_of(pick)
        assert v["fits"] and v["shared"] <= 101376
        assert ssi.flex_kernel_options(pick["params"])["num_stages"] == pick["params"]["num_stages"]
    assert max(part["max_abs_diff_vs_eager"]) < 0.1


def test_model_report_text_and_json(recorded):
    records = recorded["run2/block_on.model_records.json"]
    rep = ssi.report(records, ssi.TARGETS, devices={"sm_89": "rtx4090"})
    assert rep["targets"] == list(ssi.TARGETS)
    for t in ssi.TARGETS:
        s = rep["summary"][t]
        assert s["kernels"] == len(records)
        assert s["fits"] + s["at_risk"] + s["does_not_fit"] + s["not_checked"] == len(records)
    assert rep["summary"]["sm_89"]["device"] == "rtx4090"
    assert rep["summary"]["gfx942"]["device"] == "mi300x"
    text = ssi.report_text(rep)
    for t in ssi.TARGETS:
        assert f"\n{t} " in "\n" + text
    again = json.loads(ssi.dumps(rep))
    assert again["summary"] == json.loads(json.dumps(rep["summary"]))
    gpu = recorded["run2/inductor_gpu.json"]["parts"]["block_on"]["model_report"]["summary"]
    for t in ssi.TARGETS:
        assert {k: v for k, v in rep["summary"][t].items() if k != "device"} == \
            {k: v for k, v in gpu[t].items() if k != "device"} or t == "sm_89"


def test_model_report_pictures_show_the_kernels_that_do_not_fit(recorded):
    records = recorded["run2/block_on.model_records.json"]
    rep = ssi.report(records, ["sm_90", "gfx942"])
    svgs = ssi.pictures(records, ["sm_90", "gfx942"])
    unfit = {f"{k['name']} on {t}" for k in rep["kernels"] for t, v in k["targets"].items()
             if v["verdict"] == "DOES_NOT_FIT"}
    assert unfit and set(svgs) == unfit
    for svg in svgs.values():
        assert svg.lstrip().startswith("<") and "<svg" in svg
    assert len(ssi.pictures(records, ["sm_90"], only_unfit=False)) == len(records)


def test_a_kernel_with_some_configs_over_the_limit_is_at_risk():
    assert ssi._kernel_verdict([{"verdict": "FITS"}, {"verdict": "DOES_NOT_FIT"}]) == "AT_RISK"
    assert ssi._kernel_verdict([{"verdict": "DOES_NOT_FIT"}]) == "DOES_NOT_FIT"
    assert ssi._kernel_verdict([{"verdict": "FITS"}, {"verdict": "FITS"}]) == "FITS"


def test_bad_ttgir_is_a_clear_error():
    with pytest.raises(scratchsim.Error):
        ssi.report([{"name": "k", "configs": [{"params": {}, "ttgir": {"sm_90": "not ttgir at all"}}]}], ["sm_90"])


def test_unsupported_torch_is_refused(monkeypatch):
    """Inductor's internals are read for the versions in SUPPORTED_TORCH only; another version is
    refused before anything of it is touched."""
    fake = types.ModuleType("torch")
    fake.__version__ = "2.9.1+cu128"
    monkeypatch.setitem(sys.modules, "torch", fake)
    with pytest.raises(scratchsim.Error, match=r"PyTorch 2\.11.*2\.9\.1"):
        ssi._Torch()
    with pytest.raises(scratchsim.Error, match="PyTorch 2.11"):
        ssi.install(target="sm_90")


def test_recorded_with_a_supported_torch(recorded):
    info = recorded["run1/inductor_gpu.json"]["configs"]
    assert info["torch"].split("+")[0].rsplit(".", 1)[0] in ssi.SUPPORTED_TORCH


# ------------------------------------------------------------------------------------------------
# The hook's control flow on the CPU with real Triton lowering. torch is not installed in CI, so
# the few Inductor objects the hook reads stand in as plain objects: a choice's bmreq
# (module_path, kernel_name), the generated module's autotuner (configs, fn, and the
# _create_compile_meta / _create_compile_options Inductor 2.11 has; the tile sizes written into the
# kernel body, as Inductor's templates write them), the preprocessing-function
# list and the config. The Triton kernel, its lowering and the verdicts are real.

TEMPLATE = '''
import triton
import triton.language as tl


class Autotuner:
    def __init__(self, fn, configs):
        self.fn, self.configs = fn, configs

    def _create_compile_meta(self, cfg):
        sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
        return {"signature": sig, "constants": {}, "configs": [{(i,): [["tt.divisibility", 16]] for i in range(6)}]}

    def _create_compile_options(self, cfg, meta):
        return {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages, "debug": True,
                "sanitize_overflow": False}


@triton.jit
def triton_mm(a_ptr, b_ptr, c_ptr, M, N, K):
    BLOCK_M : tl.constexpr = BM
    BLOCK_N : tl.constexpr = BN
    BLOCK_K : tl.constexpr = BK
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


# As Inductor's @triton_heuristics.template(...) decorator states them, one per line.
LAUNCH = dict(
num_stages=STAGES,
num_warps=WARPS,
)
kernel = Autotuner(triton_mm, [triton.Config({}, **LAUNCH)])
'''


@pytest.fixture
def inductor_stand_in(monkeypatch, tmp_path):
    """torch 2.11's module names with what the hook reads; returns make_choice(BM, BN, BK, stages)."""
    pytest.importorskip("triton", reason="Triton is not installed (pip install triton)")
    mods = {name: types.ModuleType(name) for name in ("torch", "torch._inductor", "torch._inductor.config",
                                                      "torch._inductor.select_algorithm")}
    mods["torch"].__version__ = "2.11.0+cpu"
    mods["torch._inductor.config"].max_autotune = True
    fns = []
    mods["torch._inductor.select_algorithm"].add_preprocessing_fn = fns.append
    mods["torch._inductor.select_algorithm"].get_algorithm_selector_cache = \
        lambda: types.SimpleNamespace(preprocessing_fns=fns)
    mods["torch._inductor"].config = mods["torch._inductor.config"]
    mods["torch._inductor"].select_algorithm = mods["torch._inductor.select_algorithm"]
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(ssi, "_VERDICTS", {})  # each test starts from a process with no verdicts

    def make_choice(bm, bn, bk, stages, warps=8, template="mm"):
        path = tmp_path / f"{template}_{bm}_{bn}_{bk}_{stages}_{warps}.py"
        path.write_text(TEMPLATE.replace("BM", str(bm)).replace("BN", str(bn)).replace("BK", str(bk))
                        .replace("WARPS", str(warps)).replace("STAGES", str(stages))
                        .replace("def triton_mm", f"def triton_{template}").replace("(triton_mm,", f"(triton_{template},")
                        .replace("kernel = Autotuner", f"triton_{template} = Autotuner"))
        bmreq = types.SimpleNamespace(module_path=str(path), kernel_name=f"triton_{template}", module_cache_key="k")
        return types.SimpleNamespace(bmreq=bmreq, name=path.stem)
    make_choice.fns = fns
    return make_choice


def test_hook_drops_what_cannot_fit_and_keeps_the_rest(inductor_stand_in):
    small, big = inductor_stand_in(64, 64, 32, 3), inductor_stand_in(256, 256, 128, 5)
    aten = types.SimpleNamespace(name="aten_mm")  # not a Triton template: never checked, never dropped
    pruner = ssi.install(target="sm_90", device="h200", keep_ttgir=True)
    assert inductor_stand_in.fns == [pruner]
    kept = inductor_stand_in.fns[0]([aten, big, small])
    assert kept == [aten, small]
    (template, params, verdict), = pruner.dropped
    assert template == "mm" and params["BLOCK_M"] == 256 and params["num_stages"] == 5
    assert verdict["message"].startswith("out of resource: shared memory, Required: ")
    assert verdict["shared"] > 232448 and pruner.stats["dropped"] == 1 and pruner.stats["checked"] == 2
    assert len(pruner.records) == 2 and all("sm_90" in r["ttgir"] for r in pruner.records)
    with pytest.raises(scratchsim.Error, match="none of the 1 mm configs fits on h200"):
        pruner([big])
    pruner.uninstall()
    assert inductor_stand_in.fns == []


def test_hook_first_fit_keeps_one_flex_choice(inductor_stand_in):
    """The chooser's rule outside max-autotune: of an op's FlexAttention choices, only the first
    that fits is compiled (here judged for an RTX 4090)."""
    sys.modules["torch._inductor.config"].max_autotune = False
    over = inductor_stand_in(256, 256, 64, 3, template="flex_attention")
    fits1 = inductor_stand_in(64, 64, 32, 3, template="flex_attention")
    fits2 = inductor_stand_in(32, 32, 32, 2, template="flex_attention")
    pruner = ssi.install(target="sm_89", device="rtx4090")
    pruner.first_fit = True
    assert pruner([over, fits1, fits2]) == [fits1]
    assert pruner.chosen[0]["fits"] and pruner.chosen[0]["device"] == "rtx4090"
    pruner.uninstall()


def test_install_has_this_process_use_the_workers_ptxas(inductor_stand_in, monkeypatch):
    """Inductor's compile workers pick PyTorch's ptxas at start; the hook makes this process pick
    the same, so the benchmark here finds the workers' compiles in Triton's cache."""
    calls = []
    runtime = types.ModuleType("torch._inductor.runtime")
    tasks = types.ModuleType("torch._inductor.runtime.compile_tasks")
    tasks._set_triton_ptxas_path = lambda: calls.append("set")
    runtime.compile_tasks = tasks
    monkeypatch.setitem(sys.modules, "torch._inductor.runtime", runtime)
    monkeypatch.setitem(sys.modules, "torch._inductor.runtime.compile_tasks", tasks)
    pruner = ssi.install(target="sm_90", device="h200")
    assert calls == ["set"]
    pruner.uninstall()


def test_a_cpu_checked_torch_is_accepted_with_a_warning(monkeypatch, caplog):
    """PyTorch 2.15's internals were checked on the CPU only: accepted, and the log says so."""
    fake = types.ModuleType("torch")
    fake.__version__ = "2.15.0+cu132"
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(ssi, "_WARNED", set())
    with caplog.at_level("WARNING", logger="scratchsim.inductor"):
        assert ssi._Torch().version == "2.15.0+cu132"
    assert "checked on the CPU only" in caplog.text


def test_a_choice_whose_bmreq_raises_is_not_a_template():
    """PyTorch 2.15's SubgraphChoiceCaller.bmreq raises unless pipeline_max_autotune_gemm is on: such a
    choice is kept unchecked, as ATen's are; so is a request not named triton_<template>."""
    class Subgraph:
        @property
        def bmreq(self):
            raise AssertionError("bmreq accessed but pipeline_max_autotune_gemm was not enabled")
    assert ssi._Torch.template_name(Subgraph()) is None
    flydsl = types.SimpleNamespace(bmreq=types.SimpleNamespace(kernel_name="flydsl_mm", module_path="/tmp/m.py"))
    assert ssi._Torch.template_name(flydsl) is None
    triton_mm = types.SimpleNamespace(bmreq=types.SimpleNamespace(kernel_name="triton_mm", module_path="/tmp/m.py"))
    assert ssi._Torch.template_name(triton_mm) == "mm"


class _FlexConfig(types.SimpleNamespace):
    def __eq__(self, other):
        return vars(self) == vars(other)

    __hash__ = None


def _flex_conf(bm, bn, stages, warps):
    return _FlexConfig(block_m=bm, block_n=bn, num_stages=stages, num_warps=warps)


def _choices_stand_in(monkeypatch, version: str):
    """torch.<version>'s InductorChoices as the chooser reads it: 2.11's forward takes (head_dim,
    dtype, device_type), 2.15's (head_dim, seq_len, dtype, device_type); one default config, and
    the heuristic's autotune list."""
    default, autotune = [_flex_conf(128, 64, 3, 4)], [_flex_conf(128, 64, 3, 4), _flex_conf(64, 64, 2, 4),
                                                         _flex_conf(128, 128, 3, 8)]
    heuristic = types.SimpleNamespace(flex_attn_fwd_autotune_configs=autotune, flex_attn_bwd_autotune_configs=[],
                                      flex_decode_autotune_configs=[])
    seen = []

    class InductorChoices:
        def get_config_heuristics(self, device_type="cuda"):
            seen.append(device_type)
            return heuristic

        if version == "2.15":
            def get_flex_attention_fwd_configs(self, head_dim, seq_len, dtype, device_type="cuda"):
                return list(default)
        else:
            def get_flex_attention_fwd_configs(self, head_dim, dtype, device_type="cuda"):
                return list(default)

        def get_flex_attention_bwd_configs(self, head_dim, dtype, device_type="cuda"):
            return []

        def get_flex_decode_configs(self, head_dim, dtype, device_type="cuda"):
            return []

    class Restore:
        def __init__(self, previous):
            self.previous = previous

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            handler["current"] = self.previous

    config = sys.modules["torch._inductor.config"]
    config.inductor_choices_class = None
    handler = {"current": None}

    def set_choices_handler(obj):
        # As virtualized.py: the thread's prior handler, made from inductor_choices_class if none.
        previous = handler["current"]
        if previous is None:
            previous = (config.inductor_choices_class or InductorChoices)()
        handler["current"] = obj
        return Restore(previous)
    choices = types.ModuleType("torch._inductor.choices")
    choices.InductorChoices = InductorChoices
    virtualized = types.ModuleType("torch._inductor.virtualized")
    virtualized.V = types.SimpleNamespace(set_choices_handler=set_choices_handler)
    monkeypatch.setitem(sys.modules, "torch._inductor.choices", choices)
    monkeypatch.setitem(sys.modules, "torch._inductor.virtualized", virtualized)
    sys.modules["torch"].__version__ = f"{version}.0+cpu"
    return handler, seen, autotune


@pytest.mark.parametrize("version", ["2.11", "2.15"])
def test_the_chooser_widens_the_forward_list_as_each_torch_calls_it(inductor_stand_in, monkeypatch, version):
    sys.modules["torch._inductor.config"].max_autotune = False
    handler, seen, autotune = _choices_stand_in(monkeypatch, version)
    pruner = ssi.choose_flex(target="sm_89", device="rtx4090")
    fit = handler["current"]
    args = (128, 2048, "bf16", "cuda") if version == "2.15" else (128, "bf16", "cuda")
    got = fit.get_flex_attention_fwd_configs(*args)
    # The default first, then the autotune list's others, larger tiles first.
    assert got == [_flex_conf(128, 64, 3, 4), _flex_conf(128, 128, 3, 8), _flex_conf(64, 64, 2, 4)]
    assert seen == ["cuda"]
    assert fit.uuid()[0] == "scratchsim.inductor.FitChoices"  # 2.15 keys its FX graph cache by it
    pruner.uninstall()
    # The thread's prior handler is put back, and it is not the chooser's.
    assert sys.modules["torch._inductor.config"].inductor_choices_class is None
    assert type(handler["current"]).__name__ == "InductorChoices"


def test_compile_threads_are_read_where_inductor_keeps_them(monkeypatch):
    """get_compile_threads lives in torch._inductor.async_compile (2.11 and 2.15), not in utils:
    read elsewhere it failed, and in_pool=True never used Inductor's pool."""
    async_compile = types.ModuleType("torch._inductor.async_compile")
    async_compile.get_compile_threads = lambda: 16
    monkeypatch.setitem(sys.modules, "torch._inductor", types.ModuleType("torch._inductor"))
    monkeypatch.setitem(sys.modules, "torch._inductor.async_compile", async_compile)
    assert ssi._Torch.compile_threads() == 16


def test_install_refuses_a_device_of_another_target(inductor_stand_in):
    with pytest.raises(scratchsim.Error, match="device 'h100' is sm_90, the target sm_89"):
        ssi.install(target="sm_89", device="h100")


def dominance_pairs(groups):
    """(big, small) of every pair of rows ({"params", "shared"}) of one group where big dominates small."""
    return [(b, s) for rs in groups for b in rs for s in rs if b is not s and ssi.dominates(b["params"], s["params"])]


def test_dominance_holds_on_every_recorded_pair(recorded):
    """dominates() is the hook's reason to keep a choice unchecked: on every pair of recorded
    choices of one family (template, source up to tiles and stages, num_warps) where one
    dominates the other, Triton's figure of the smaller is at most the larger's."""
    pairs = 0
    for member in ("run1/flex_on.records.json", "run2/block_on.records.json", "run1/chooser.records.json"):
        families = collections.defaultdict(list)
        for r in recorded[member]:
            families[(r["template"], ssi._skeleton(r["source"]), r["params"]["num_warps"])].append(r)
        found = dominance_pairs(families.values())
        pairs += len(found)
        assert [(b["params"], s["params"]) for b, s in found if s["shared"] > b["shared"]] == [], member
    assert pairs >= 200
    assert ssi.dominates({"BLOCK_M": 64, "num_stages": 3, "num_warps": 4}, {"BLOCK_M": 32, "num_stages": 3, "num_warps": 4})
    assert not ssi.dominates({"BLOCK_M": 64, "num_stages": 2, "num_warps": 4}, {"BLOCK_M": 32, "num_stages": 3, "num_warps": 4})
    assert not ssi.dominates({"BLOCK_M": 64, "num_stages": 3, "num_warps": 8}, {"BLOCK_M": 32, "num_stages": 3, "num_warps": 4})
    assert not ssi.dominates({"BLOCK_M": 64, "GROUP_M": 8}, {"BLOCK_M": 32, "GROUP_M": 4})


def test_skeleton_blanks_tiles_and_stages_only(recorded):
    """Choices of one op that differ only in tiles and stages share a skeleton; other warps or
    another op do not."""
    recs = [r for r in recorded["run1/flex_on.records.json"] if r["template"] == "flex_attention"]
    by_warps = collections.defaultdict(set)
    for r in recs:
        by_warps[r["params"]["num_warps"]].add(ssi._skeleton(r["source"]))
    assert {w: len(s) for w, s in by_warps.items()} == {4: 1, 8: 1}
    for r in recs:
        assert ssi._decorator_params(r["source"]) == {k: r["params"][k] for k in ("num_stages", "num_warps")}


def test_kin_joins_the_families_of_an_op_that_differ_in_warps_only(recorded):
    """The fast path's guess travels between families of one template module at other num_warps:
    the recorded FlexAttention forward choices at 4 and 8 warps are one kin, the backward another."""
    kins = collections.defaultdict(set)
    for r in recorded["run1/flex_on.records.json"]:
        kins[r["template"]].add(ssi._kin((r["template"], ssi._skeleton(r["source"]), r["params"]["num_warps"])))
    assert {t: len(k) for t, k in kins.items()} == {"flex_attention": 1, "flex_attention_backward": 1}


def test_hook_keeps_dominated_choices_unchecked(inductor_stand_in):
    """One lowering settles an op whose largest choice fits: the choices it dominates are kept
    without being lowered; a choice that does not fit is still lowered and dropped."""
    over, big = inductor_stand_in(256, 256, 128, 5), inductor_stand_in(128, 128, 64, 3)
    small1, small2 = inductor_stand_in(64, 64, 32, 2), inductor_stand_in(128, 64, 64, 3)
    pruner = ssi.install(target="sm_90", device="h200")
    assert pruner([small1, over, big, small2]) == [small1, big, small2]
    st = pruner.stats
    assert (st["checked"], st["dominated"], st["dropped"], st["cached"]) == (2, 2, 1, 0)
    assert sorted(why for _, _, why in pruner.unchecked) == ["dominated", "dominated"]
    assert pruner.verdict(small1) is None and pruner.verdict(big)["verdict"] == "FITS"
    pruner.uninstall()
    # The same modules again (a recompile): verdicts from this process's cache, nothing lowered.
    again = ssi.install(target="sm_90", device="h200")
    assert again([small1, over, big, small2]) == [small1, big, small2]
    assert (again.stats["checked"], again.stats["cached"]) == (0, 2)
    again.uninstall()


def test_hook_infers_unfit_from_a_dominated_choice(inductor_stand_in):
    """infer_unfit: the middle choice does not fit, so the one dominating it is dropped unlowered,
    its verdict naming the figure it was inferred from."""
    fits, mid = inductor_stand_in(128, 128, 64, 2, warps=4), inductor_stand_in(256, 256, 128, 4, warps=4)
    top, small = inductor_stand_in(256, 256, 128, 5, warps=4), inductor_stand_in(64, 64, 64, 2, warps=4)
    pruner = ssi.install(target="sm_90", device="h200", infer_unfit=True, fast=False, on_empty="keep")
    assert pruner([top, small, fits, mid]) == [small, fits]
    st = pruner.stats
    assert (st["checked"], st["inferred"], st["dominated"], st["dropped"]) == (2, 1, 1, 2)
    v = pruner.verdict(top)
    assert v["verdict"] == "DOES_NOT_FIT" and v["shared"] is None and v["inferred_from"]["num_stages"] == 4
    assert "Required: at least" in v["message"]
    pruner.uninstall()


def test_hook_budget_keeps_the_rest_unchecked(inductor_stand_in):
    a, b = inductor_stand_in(64, 64, 32, 2, warps=2), inductor_stand_in(256, 256, 128, 5, warps=2)
    pruner = ssi.install(target="sm_90", device="h200", budget_s=0)
    assert pruner([a, b]) == [a, b]
    assert (pruner.stats["checked"], pruner.stats["over_budget"]) == (0, 2)
    pruner.uninstall()


def test_hook_budget_bounds_a_round(inductor_stand_in, monkeypatch):
    """A round's lowerings stop at the budget: three choices of three families (all maximal, one
    round) with a first check that outlasts the budget leave two unchecked, kept."""
    a = inductor_stand_in(64, 64, 32, 2, warps=2)
    b, c = inductor_stand_in(64, 64, 32, 2, warps=4), inductor_stand_in(64, 64, 32, 2, warps=8)
    real_check = ssi.Pruner._check

    def slow_check(self, batch):
        out = real_check(self, batch)
        time.sleep(2.5)
        return out
    monkeypatch.setattr(ssi.Pruner, "_check", slow_check)
    pruner = ssi.install(target="sm_90", device="h200", budget_s=2.0)
    assert pruner([a, b, c]) == [a, b, c]
    assert (pruner.stats["checked"], pruner.stats["over_budget"]) == (1, 2)
    pruner.uninstall()


def test_gpu_script_pins_the_chosen_kernels(recorded):
    """The GPU script's CPU side: the template kernels a compile chose, read from its output code,
    and the kernel_options that pin them for the interleaved timing."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpu_inductor", REPO / "bench" / "inductor" / "gpu_inductor.py")
    gpu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu)
    chosen = gpu._chosen(recorded["run1/flex_on.code.py"].split("# ---- next graph ----"))
    fwd, bwd = chosen
    assert fwd["kernel"].startswith("triton_tem_fused_flex_attention_") and "backward" in bwd["kernel"]
    assert (fwd["BLOCK_M"], fwd["BLOCK_N"], fwd["num_stages"], fwd["num_warps"]) == (64, 64, 3, 4)
    opts = gpu.kernel_options_of(chosen, backward=True)
    assert opts["fwd_BLOCK_M"] == 64 and opts["bwd_BLOCK_N1"] == bwd["BLOCK_N1"] and opts["bwd_num_warps"] == 8
    assert gpu.kernel_options_of(chosen, backward=False) == {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4,
                                                             "num_stages": 3}
    assert gpu.kernel_options_of(["mm"], backward=False) is None


# ---- the fast path (install(fast=True)) replayed over Inductor's exhaustive FlexAttention spaces,
# each config's exact figure recorded (tests/data/inductor/space_{fwd,bwd}_d*_sm90.json): the
# lowering answers from the record, and counts.

# The recorded spaces: the forward's at head dims 128 and 256 (144 configs, families of 48), the
# backward's at 256 (900 configs over BLOCK_M1/N1/M2/N2 and stages, families of 300).
SPACES = ("fwd_d128", "fwd_d256", "bwd_d256")


def space(name):
    return json.loads((DATA / f"space_{name}_sm90.json").read_text())


def space_rows(name):
    """A recorded space as (source, params, shared, verdict) rows: one op whose families are the
    num_warps, each source unique (its cache key) up to its tiles (_skeleton)."""
    return [(f"num_warps={r['params']['num_warps']},\n'BLOCK_ROW': {i}\n", r["params"], r["shared"], r["verdict"])
            for i, r in enumerate(space(name)["configs"])]


def recorded_rows(recorded, member, template):
    return [(r["source"], r["params"], r["shared"], r["verdict"]) for r in recorded[member] if r["template"] == template]


def fast_replay(monkeypatch, rows, deadline_s=None, pool=None, fast=True):
    """The Pruner's fast decision (fast=False: the default hook's) over recorded rows as one op,
    check_source answering from the record: (pruner, entries, truth by id(choice))."""
    monkeypatch.setattr(ssi, "_VERDICTS", {})
    by_source = {row[0]: row for row in rows}

    def check_source(source, *args):
        _, params, shared, verdict = by_source[source]
        return {"verdict": verdict, "fits": verdict == "FITS", "shared": shared, "limit": 232448,
                "params": dict(params), "message": f"out of resource: shared memory, Required: {shared}",
                "lower_s": 0.0, "simulate_s": 0.0}
    monkeypatch.setattr(ssi, "check_source", check_source)
    entries, truth = [], {}
    for row in rows:
        choice = types.SimpleNamespace(bmreq=types.SimpleNamespace(kernel_name="triton_t"))
        entries.append((choice, "flex_attention", row[0], dict(row[1])))
        truth[id(choice)] = row
    pruner = ssi.Pruner(None, "sm_90", "h200", False, "keep", False, deadline_s, True, fast=fast)
    pruner._pool = pool
    pruner._decide(entries, time.perf_counter() + (deadline_s or 0.0))
    return pruner, entries, truth


def dropped(pruner, entries):
    return {id(e[0]) for e in entries if (pruner.verdict(e[0]) or {}).get("verdict") == "DOES_NOT_FIT"}


class ImmediatePool:
    """A stand-in for the workers: each lowering done as it is submitted, `width` at a time."""
    def __init__(self, width):
        self.width, self.submitted = width, 0

    def ready(self):
        return True

    def submit(self, fn, *args):
        import concurrent.futures
        self.submitted += 1
        fut = concurrent.futures.Future()
        fut.set_result(fn(*args))
        return fut


@pytest.mark.parametrize("name", SPACES)
def test_fast_path_drops_only_configs_over_the_limit(monkeypatch, name):
    """Every config the fast path drops, lowered or inferred by dominance, is over the limit by
    Triton's exact figure."""
    pruner, entries, truth = fast_replay(monkeypatch, space_rows(name))
    drops = dropped(pruner, entries)
    assert drops and all(truth[i][2] > space(name)["limit"] for i in drops)


@pytest.mark.parametrize("name", SPACES)
def test_fast_path_keeps_every_config_that_fits(monkeypatch, name):
    """No config whose exact figure fits is dropped, and every one over the limit is (the space is
    settled: nothing left unchecked when there is no budget)."""
    pruner, entries, truth = fast_replay(monkeypatch, space_rows(name))
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[2] > space(name)["limit"]}
    assert pruner.stats["over_budget"] == 0


@pytest.mark.parametrize("name, most", [("fwd_d128", 17), ("fwd_d256", 26), ("bwd_d256", 49)])
def test_fast_path_lowers_few_configs(monkeypatch, name, most):
    """The lowerings that settle a recorded space, as measured (bench/inductor/hook_cost.py): 17 and
    26 of the forward's 144 configs (3 families of 48) at D=128 and 256, 49 of the backward's 900
    (3 families of 300) at 256, where no exact method needs fewer than 13, 23 and 31 (each family's
    maximal fitting and minimal unfit configs); the rest follow from dominance."""
    pruner, entries, _ = fast_replay(monkeypatch, space_rows(name))
    st = pruner.stats
    assert st["checked"] <= most
    assert st["checked"] + st["dominated"] + st["inferred"] == len(entries)


def test_fitted_guess_takes_the_larger_loop():
    """Tiles named with one index are one loop's, and the figure is the larger loop's sum of
    buffers (FlexAttention's backward: dK and dV, then dQ): fitted on 34 of 768 configs the guess is
    right on all of them, where one linear form over every tile misjudges dozens."""
    def figure(p):
        one = 512 * (p["BLOCK_N1"] * 2 + p["BLOCK_M1"] * 2 * p["num_stages"])
        two = 512 * (p["BLOCK_M2"] * 2 + p["BLOCK_N2"] * 2 * p["num_stages"])
        return max(one, two)
    sizes = (16, 32, 64, 128)
    grid = [{"BLOCK_M1": m1, "BLOCK_N1": n1, "BLOCK_M2": m2, "BLOCK_N2": n2, "num_stages": s, "num_warps": 4}
            for m1, n1, m2, n2, s in itertools.product(sizes, sizes, sizes, sizes, (1, 3, 4))]
    limit = 232448
    sample = [(p, figure(p), limit) for p in grid[::23]]
    over = ssi._fitted_guess(sample)
    assert [over(p) for p in grid] == [figure(p) > limit for p in grid]
    single = ssi._fit_linear([(p, f) for p, f, _ in sample], sorted(k for k in grid[0] if k.startswith("BLOCK_")))
    assert sum((single(p) > limit) != (figure(p) > limit) for p in grid) > 10


def test_kin_guess_gives_way_to_the_fit_once_contradicted():
    """A family follows its settled kin's verdicts until one of its own lowerings contradicts
    them; from then on the fit of the lowered figures guesses (kin at 4 warps, this family at 8,
    where every tile needs twice the bytes)."""
    pruner = ssi.Pruner(None, "sm_90", "h200", False, "keep", False, None, True, fast=True)
    kin, family = ("flex_attention", "num_warps=#", 4), ("flex_attention", "num_warps=#", 8)
    configs = [{"BLOCK_M": m, "num_stages": s} for m in (32, 64, 128) for s in (1, 2, 3)]
    pruner._settled[ssi._kin(kin)] = {ssi._tiles(c): c["BLOCK_M"] * c["num_stages"] * 1024 > 232448 for c in configs}
    undecided = [(None, "flex_attention", "", {**c, "num_warps": 8}) for c in configs]
    assert pruner._guess(family, undecided) == pruner._settled[ssi._kin(kin)]
    # Lowered at 8 warps: 64 x 2 needs 262144 B, over the limit where the kin's 4 warps fit.
    for c in ({"BLOCK_M": 64, "num_stages": 2}, {"BLOCK_M": 32, "num_stages": 1}, {"BLOCK_M": 32, "num_stages": 2}):
        pruner._figures.setdefault(family, []).append(({**c, "num_warps": 8}, c["BLOCK_M"] * c["num_stages"] * 2048, 232448))
    guess = pruner._guess(family, undecided)
    assert guess != pruner._settled[ssi._kin(kin)]
    assert guess == {ssi._tiles(c): c["BLOCK_M"] * c["num_stages"] * 2048 > 232448 for c in configs}


def test_fast_path_budget_keeps_the_rest_unchecked(monkeypatch):
    """Past the budget nothing more is lowered: every choice left is kept unchecked."""
    pruner, entries, _ = fast_replay(monkeypatch, space_rows("fwd_d256"), deadline_s=-1.0)
    assert pruner.stats["checked"] == 0 and pruner.stats["over_budget"] == len(entries)
    assert all(pruner.verdict(e[0]) is None for e in entries)


@pytest.mark.parametrize("member, template", [("run1/flex_on.records.json", "flex_attention"),
                                              ("run1/flex_on.records.json", "flex_attention_backward"),
                                              ("run2/block_on.records.json", "mm")])
def test_fast_path_lowers_no_more_than_the_default_on_recorded_ops(monkeypatch, recorded, member, template):
    """Where (almost) everything fits, as in the recorded D=128 FlexAttention and decoder-block
    ops, the fast path lowers the maximal choices first, as the default hook does, and no more."""
    rows = recorded_rows(recorded, member, template)
    default = fast_replay(monkeypatch, rows, fast=False)[0].stats["checked"]
    pruner, entries, truth = fast_replay(monkeypatch, rows)
    assert pruner.stats["checked"] <= default
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[3] == "DOES_NOT_FIT"}


@pytest.mark.parametrize("name, width, most", [("fwd_d256", 2, 40), ("fwd_d256", 8, 40), ("bwd_d256", 8, 70)])
def test_fast_path_with_workers_drops_the_same(monkeypatch, name, width, most):
    """With workers (several lowerings in flight, none comparable to another of its family), the
    drops are the same: exactly the configs over the limit, in a few more lowerings (a lowering
    answered while others fly settles fewer)."""
    pool = ImmediatePool(width)
    pruner, entries, truth = fast_replay(monkeypatch, space_rows(name), pool=pool)
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[2] > space(name)["limit"]}
    assert pool.submitted == pruner.stats["in_pool"] == pruner.stats["checked"] <= most


class InductorSide:
    """A stand-in for _Torch's view of Inductor's compile pool: `workers` threads, the pool handed
    out once `ready_after` calls have asked for it (each call is AsyncCompile.use_process_pool)."""
    def __init__(self, workers, ready_after=0):
        self.workers, self.ready_after, self.asked = workers, ready_after, 0
        self.pool = ImmediatePool(workers)

    def compile_threads(self):
        return self.workers

    def compile_pool(self):
        self.asked += 1
        return self.pool if self.asked > self.ready_after else None


def test_inductor_pool_is_started_when_the_pruner_is_made():
    """fast with in_pool asks for Inductor's pool at install(), which starts its workers, so they
    warm while Dynamo traces instead of at Inductor's first precompile."""
    side = InductorSide(16, ready_after=2)
    pool = ssi._InductorPool(side)
    assert side.asked == 1
    assert not pool.ready() and pool.ready() and pool.width == 16


def test_inductor_pool_is_not_used_without_compile_workers():
    """compile_threads 1 (Inductor compiles in this process): the Pruner lowers here."""
    side = InductorSide(1)
    assert not ssi._InductorPool(side).ready() and side.asked == 0


def test_fast_path_in_inductors_pool_drops_the_same(monkeypatch):
    """The fast path's lowerings in Inductor's workers (16 in flight): the same drops, every
    lowering done there once the pool is ready."""
    side = InductorSide(16)
    pruner, entries, truth = fast_replay(monkeypatch, space_rows("fwd_d256"), pool=ssi._InductorPool(side))
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[2] > space("fwd_d256")["limit"]}
    assert side.pool.submitted == pruner.stats["in_pool"] == pruner.stats["checked"]


def test_fast_path_lowers_here_until_inductors_pool_is_ready(monkeypatch):
    """A pool still starting never makes an op wait: the first lowerings run in this process."""
    side = InductorSide(16, ready_after=4)
    pruner, entries, truth = fast_replay(monkeypatch, space_rows("fwd_d256"), pool=ssi._InductorPool(side))
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[2] > space("fwd_d256")["limit"]}
    assert 0 < pruner.stats["in_pool"] < pruner.stats["checked"]


def test_fast_path_budget_bounds_the_wait_for_workers(monkeypatch):
    """Workers that do not answer in time: the op returns at its budget with every choice kept."""
    import concurrent.futures

    class Stuck(ImmediatePool):
        def submit(self, fn, *args):
            self.submitted += 1
            return concurrent.futures.Future()   # never done
    t0 = time.perf_counter()
    pruner, entries, _ = fast_replay(monkeypatch, space_rows("fwd_d256"), deadline_s=0.5, pool=Stuck(4))
    assert time.perf_counter() - t0 < 5.0
    assert pruner.stats["checked"] == 0 and pruner.stats["over_budget"] == len(entries)


def test_dominance_holds_on_the_exhaustive_spaces():
    """The order the fast path's drops rest on: within a num_warps family of a recorded space, a
    config that dominates another needs at least its shared memory."""
    pairs = 0
    for name in SPACES:
        found = dominance_pairs([space(name)["configs"]])
        pairs += len(found)
        assert [(b["params"], s["params"]) for b, s in found if s["shared"] > b["shared"]] == [], name
    assert pairs >= 45000


def test_frontier_pick_lowers_the_guessed_frontier_first():
    """With a kin family's verdicts as the guess, the maximal guessed-fitting or minimal
    guessed-over config goes first; without one, the config that splits the order best."""
    cfgs = [{"BLOCK_M": m, "num_stages": s, "num_warps": 4} for m in (32, 64, 128) for s in (1, 2, 3)]
    guess = {ssi._tiles(c): c["BLOCK_M"] * c["num_stages"] > 128 for c in cfgs}
    first = cfgs[ssi.frontier_pick(cfgs, guess)]
    assert (first["BLOCK_M"], first["num_stages"]) in {(32, 3), (64, 2), (128, 1), (64, 3), (128, 2)}
    assert cfgs[ssi.frontier_pick(cfgs)] == {"BLOCK_M": 64, "num_stages": 2, "num_warps": 4}


def test_hook_fast_path_drops_by_triton_figure_or_dominance(inductor_stand_in):
    """The fast path over real lowerings: what it drops is over the limit by the lowered figure or
    dominates a choice that is; what fits is kept."""
    fits, mid = inductor_stand_in(128, 128, 64, 2, warps=4), inductor_stand_in(256, 256, 128, 4, warps=4)
    top, small = inductor_stand_in(256, 256, 128, 5, warps=4), inductor_stand_in(64, 64, 64, 2, warps=4)
    pruner = ssi.install(target="sm_90", device="h200", fast=True, on_empty="keep")
    assert pruner([top, small, fits, mid]) == [small, fits]
    st = pruner.stats
    assert st["dropped"] == 2 and st["checked"] + st["dominated"] + st["inferred"] == 4 and st["checked"] <= 3
    for _, _, v in pruner.dropped:
        assert (v["shared"] or 0) > v["limit"] or "inferred_from" in v
    pruner.uninstall()


def test_fast_path_settles_a_space_of_hundreds_quickly(monkeypatch):
    """Inductor's exhaustive mm space (BLOCK_M/N/K 16-256 x stages 1-5 x warps 2/4/8: 1875
    configs, families of 625) with a stand-in figure monotone in the tiles (the operand ring:
    (BLOCK_M + BLOCK_N) x BLOCK_K x 2 B x stages): settled exactly with few lowerings, the
    picking itself (no lowering here) well inside 10 s."""
    import itertools
    rows = []
    for i, (m, n, k, s, w) in enumerate(itertools.product((16, 32, 64, 128, 256), (16, 32, 64, 128, 256),
                                                          (16, 32, 64, 128, 256), range(1, 6), (2, 4, 8))):
        shared = (m + n) * k * 2 * s
        rows.append((f"num_warps={w},\n'BLOCK_ROW': {i}\n",
                     {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "num_warps": w, "num_stages": s},
                     shared, "FITS" if shared <= 232448 else "DOES_NOT_FIT"))
    t0 = time.perf_counter()
    pruner, entries, truth = fast_replay(monkeypatch, rows)
    assert time.perf_counter() - t0 < 10.0
    assert dropped(pruner, entries) == {i for i, row in truth.items() if row[3] == "DOES_NOT_FIT"}
    assert pruner.stats["checked"] < len(rows) // 10
