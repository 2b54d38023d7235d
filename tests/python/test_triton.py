"""scratchsim.triton on the CPU with PyPI Triton: TTGIR lowering for named targets, the verdict
against Triton's own metadata.shared, early_prune through triton.autotune, top_k."""
import json
import sys
import time

import pytest

triton = pytest.importorskip("triton", reason="Triton is not installed (pip install triton)")

import scratchsim  # noqa: E402
import scratchsim.triton as sst  # noqa: E402
from conftest import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "bench" / "python"))
import triton_kernels as tk  # noqa: E402
tl = triton.language

H100_SMEM = 232448


def cfg(m, n, k, stages, warps):
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=stages, num_warps=warps)


def triton_shared(config, target):
    """Triton's own metadata.shared for the config: triton.compile through make_llir (where
    Triton allocates shared memory), ptx/cubin stubbed out (bench/triton/triton_compile.py's
    hook). No GPU needed."""
    from triton import knobs
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    sys.path.insert(0, str(REPO / "bench" / "triton"))
    import triton_compile
    fn = tk.matmul_kernel
    tgt = sst.target_of(target)
    backend = make_backend(tgt)
    kwargs = {**sst._runtime_kwargs(fn), **sst._config_kwargs(config)}
    options, sig, constexprs, attrs = sst._source_from_signature(fn, backend, tk.MATMUL_SIGNATURE, kwargs)
    old = knobs.runtime.add_stages_inspection_hook
    triton_compile.install_stop_hook(True)
    try:
        k = triton.compile(ASTSource(fn, sig, constexprs, attrs), target=tgt, options=options.__dict__)
    finally:
        knobs.runtime.add_stages_inspection_hook = old
    return k.metadata.shared


def test_target_names():
    assert sst.target_of("sm_90").arch == 90
    assert sst.target_of("sm_90a").arch == 90
    assert sst.target_of("cuda:100").arch == 100
    t = sst.target_of("gfx950")
    assert (t.backend, t.arch, t.warp_size) == ("hip", "gfx950", 64)
    assert sst.device_for(sst.target_of("sm_100")) == "b200"
    assert sst.device_for(sst.target_of("gfx942")) == "mi300x"
    with pytest.raises(scratchsim.Error):
        sst.target_of("tpu")


@pytest.mark.parametrize("config,target", [
    (cfg(128, 128, 64, 3, 4), "sm_90"),
    (cfg(256, 256, 128, 4, 8), "sm_90"),
    (cfg(64, 128, 64, 4, 4), "sm_80"),
    (cfg(128, 256, 64, 3, 8), "sm_100"),
])
def test_required_is_tritons_metadata_shared(config, target):
    report = sst.check(tk.matmul_kernel, config, tk.MATMUL_SIGNATURE, target)
    smem = [s for s in report["spaces"] if s["space"] == "smem"][0]
    assert smem["peak_bytes"] == triton_shared(config, target)
    assert report["triton"]["target"] == f"sm_{sst.target_of(target).arch}"
    assert report["triton"]["num_warps"] == config.num_warps


def test_far_over_the_limit_is_rejected_in_ttgir_with_no_llvm(monkeypatch):
    """Seeds 000/001: a config far over the limit never reaches LLVM (make_llir is not called)."""
    from triton.backends.nvidia.compiler import CUDABackend

    def no_llvm(*args, **kwargs):
        raise AssertionError("LLVM invoked")
    monkeypatch.setattr(CUDABackend, "make_llir", no_llvm)
    sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, "sm_90")  # warm Triton's imports
    t0 = time.perf_counter()
    report = sst.check(tk.matmul_kernel, cfg(256, 256, 128, 8, 8), tk.MATMUL_SIGNATURE, "sm_90", to_fit=0)
    seconds = time.perf_counter() - t0
    # The to-fit search lowers its candidates the same way: no LLVM either.
    assert sst.check(tk.matmul_kernel, cfg(256, 256, 128, 8, 8), tk.MATMUL_SIGNATURE, "sm_90")["to_fit"]
    assert report["fits"] is False
    message = sst._message(report)
    assert message.startswith("out of resource: shared memory, Required: ")
    assert int(message.split("Required: ")[1].split(",")[0]) > 4 * H100_SMEM
    assert seconds < 5.0  # ~0.05-0.1 s unloaded; generous for a busy CI machine


@pytest.mark.parametrize("target,space", [("sm_120", "smem"), ("gfx950", "lds"), ("gfx942", "lds")])
def test_other_targets(target, space):
    small = sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, target)
    assert small["fits"] is True
    assert any(s["space"] == space for s in small["spaces"])
    big = sst.check(tk.matmul_kernel, cfg(256, 256, 128, 5, 8), tk.MATMUL_SIGNATURE, target)
    assert big["fits"] is False


def test_args_form_matches_the_signature_form():
    args = (sst.tensor("fp16"), sst.tensor("fp16"), sst.tensor("fp16"), 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1)
    a = sst.check(tk.matmul_kernel, cfg(128, 128, 64, 3, 4), args, "sm_90", keep_ttgir=True)
    b = sst.check(tk.matmul_kernel, cfg(128, 128, 64, 3, 4), tk.MATMUL_SIGNATURE, "sm_90", keep_ttgir=True)
    assert a["spaces"] == b["spaces"]
    assert "ttg.target = \"cuda:90\"" in a["triton"]["ttgir"]


def test_attention():
    ok = sst.check(tk.attn_fwd_kernel, triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 128}, num_warps=8,
                                                     num_stages=3), tk.ATTN_SIGNATURE, "sm_90")
    assert ok["fits"] is True
    bad = sst.check(tk.attn_fwd_kernel, triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "HEAD_DIM": 128},
                                                      num_warps=8, num_stages=5), tk.ATTN_SIGNATURE, "sm_90")
    assert bad["fits"] is False


def test_bad_input_is_an_error():
    with pytest.raises(scratchsim.Error):
        sst.check(lambda x: x, {}, {}, "sm_90")
    with pytest.raises(scratchsim.Error):
        sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), {"a_ptr": "*fp16"}, "sm_90")  # missing types
    with pytest.raises(scratchsim.Error):
        sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, "nosuch")


# One rule with `simulate --ttgir`: sm_90 TTGIR is not judged against an MI300X's LDS unless asked.
def test_check_refuses_a_device_of_another_target():
    with pytest.raises(scratchsim.Error) as e:
        sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, "sm_90", device="mi300x")
    assert "compiled for sm_90" in str(e.value) and "any_target=True" in str(e.value)
    report = sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, "sm_90", device="mi300x",
                       any_target=True)
    assert report["triton"]["device"] == "mi300x"
    assert sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 4), tk.MATMUL_SIGNATURE, "sm_90", device="h200")["fits"]


# The signature trap: plain "i32" integers do not let Triton stage the loads a launch with
# M=4096 (divisible by 16) stages; the report says what the divisible launch needs.
def test_a_signature_without_divisibility_says_what_a_divisible_launch_needs():
    plain = {k: (v.replace(":16", "") if isinstance(v, str) else v) for k, v in tk.MATMUL_SIGNATURE.items()}
    report = sst.check(tk.matmul_kernel, cfg(128, 256, 64, 5, 8), plain, "sm_90")
    divided = sst.check(tk.matmul_kernel, cfg(128, 256, 64, 5, 8), tk.MATMUL_SIGNATURE, "sm_90")
    assert report["fits"] and not divided["fits"]
    d = report["triton"]["divisibility"]
    assert d["shared"] == sst._shared_required(divided) and not d["fits"]
    assert any("without divisibility" in n and "i32:16" in n for n in report["notes"])
    assert "divisibility" not in divided["triton"]


def smem(report):
    return [s for s in report["spaces"] if s["space"] == "smem"][0]["peak_bytes"]


def closeness(entry):
    return (entry["halvings"], -entry["config"]["num_stages"])


# Issue 38 item 1: a config over the limit names the nearest configs that fit, each of which
# lowers and fits (checked again here, independently), in the documented order.
def test_check_names_the_nearest_configs_that_fit():
    report = sst.check(tk.matmul_kernel, cfg(256, 256, 128, 5, 8), tk.MATMUL_SIGNATURE, "sm_90")
    assert not report["fits"]
    entries = report["to_fit"]
    assert len(entries) == 2
    assert [closeness(e) for e in entries] == sorted(closeness(e) for e in entries)
    for e in entries:
        c = e["config"]
        assert set(c) == {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages"}
        again = sst.check(tk.matmul_kernel, c, tk.MATMUL_SIGNATURE, "sm_90", to_fit=0)
        assert again["fits"] and smem(again) == e["required_bytes"] <= e["limit_bytes"] == H100_SMEM
        assert "estimate_us" not in e  # the signature form gives no problem size: absent, not 0
    assert entries[0]["changes"] == "num_stages 5 -> 1" and entries[0]["halvings"] == 0
    search = report["to_fit_search"]
    assert 0 < search["lowerings"] <= search["max_lowerings"] == 16 and not search["bound_reached"]
    assert search["estimate"].startswith("absent")
    assert sst._message(report).endswith("to fit: " + "; ".join(f"{e['changes']} ({e['required_bytes']} B)"
                                                                 for e in entries))


def test_to_fit_ranks_equally_close_configs_by_the_planners_estimate():
    a = sst.tensor("fp16")
    args = (a, a, a, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1)
    report = sst.check(tk.matmul_kernel, cfg(128, 256, 64, 6, 8), args, "sm_90", to_fit=4)
    entries = report["to_fit"]
    assert len(entries) == 4 and all(e["estimate_us"] > 0 for e in entries)
    keys = [(closeness(e), e["estimate_us"]) for e in entries]
    assert keys == sorted(keys)
    assert len({closeness(e) for e in entries}) < len(entries)  # a tie the estimate broke
    assert "the planner on triton_matmul" in report["to_fit_search"]["estimate"]
    assert "estimate" in sst._message(report)


def test_to_fit_says_when_its_bound_cut_the_search_short():
    report = sst.check(tk.matmul_kernel, cfg(256, 256, 128, 8, 8), tk.MATMUL_SIGNATURE, "sm_90", max_lowerings=2)
    search = report["to_fit_search"]
    assert search["bound_reached"] and search["lowerings"] == 2
    assert any("stopped at its bound of 2 lowerings" in n for n in report["notes"])
    for e in report["to_fit"]:  # what it found before the bound is verified all the same
        assert sst.check(tk.matmul_kernel, e["config"], tk.MATMUL_SIGNATURE, "sm_90", to_fit=0)["fits"]
    assert "to_fit" not in sst.check(tk.matmul_kernel, cfg(256, 256, 128, 8, 8), tk.MATMUL_SIGNATURE, "sm_90",
                                     to_fit=0)


def test_to_fit_on_amd_names_lds():
    report = sst.check(tk.matmul_kernel, cfg(128, 128, 64, 4, 4), tk.MATMUL_SIGNATURE, "gfx942")
    assert not report["fits"] and report["to_fit"]
    for e in report["to_fit"]:
        assert e["space"] == "lds" and e["required_bytes"] <= e["limit_bytes"]
        again = sst.check(tk.matmul_kernel, e["config"], tk.MATMUL_SIGNATURE, "gfx942", to_fit=0)
        assert again["fits"] and sst._shared_required(again) == e["required_bytes"]


def test_to_fit_does_not_search_what_stages_and_tiles_cannot_change():
    report = sst.check(tk.matmul_kernel, cfg(64, 64, 32, 2, 64), tk.MATMUL_SIGNATURE, "sm_90")  # 2048 threads
    assert not report["fits"] and report["to_fit"] == []
    assert report["to_fit_search"]["lowerings"] == 0 and "no memory space" in report["to_fit_search"]["skipped"]
    assert any(n.startswith("to fit: not searched") for n in report["notes"])


SPACE = [cfg(m, n, k, s, w) for m in (64, 256) for n in (64, 256) for k in (64, 128) for s in (2, 5) for w in (4, 8)]


def test_early_prune_drops_what_cannot_fit_and_keeps_order():
    prune = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90")
    kept = prune(SPACE, {})
    assert 0 < len(kept) < len(SPACE)
    assert kept == [c for c in SPACE if c in kept]  # the autotuner's order
    dropped = [c for c, v in prune.last if not v["fits"]]
    assert cfg(256, 256, 128, 5, 8) in dropped
    assert all("Required: " in v["message"] for _, v in prune.last if not v["fits"])
    # Each drop's record names the nearest config that fits (one, by default), and it fits.
    for c, v in prune.last:
        if not v["fits"]:
            assert len(v["to_fit"]) == 1 and "; to fit: " in v["message"]
            fit = v["to_fit"][0]["config"]
            assert sst.check(tk.matmul_kernel, fit, tk.MATMUL_SIGNATURE, "sm_90", to_fit=0)["fits"]
            assert v["to_fit"][0] == sst.check(tk.matmul_kernel, c, tk.MATMUL_SIGNATURE, "sm_90", to_fit=1)["to_fit"][0]
    lowered = prune.stats["lowered"]
    assert lowered - prune.stats["to_fit_lowered"] == len(SPACE)
    assert prune(SPACE, {}) == kept and prune.stats["lowered"] == lowered  # cached


def test_early_prune_through_triton_autotune():
    prune = sst.early_prune(signature_or_args=tk.MATMUL_SIGNATURE, target="sm_90")
    tuned = triton.autotune(configs=SPACE, key=["M", "N", "K"], prune_configs_by={"early_config_prune": prune})(
        tk.matmul_kernel)
    tuned.nargs = {}
    kept = tuned.prune_configs({"grid": (1, ), "warmup": False})  # as Autotuner.run passes them
    assert 0 < len(kept) < len(SPACE)
    assert prune.stats["calls"] == 1


def test_early_prune_when_nothing_fits():
    huge = [cfg(256, 256, 128, 6, 8), cfg(256, 256, 128, 7, 4)]
    with pytest.raises(scratchsim.Error) as e:
        sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90")(huge, {})
    assert "Required: " in str(e.value)
    assert sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", on_empty="keep")(huge, {}) == huge


def verdicts(prune):
    return [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_stages, c.num_warps, v["fits"],
             v["message"], v["shared"]) for c, v in prune.last]


def test_early_prune_in_worker_processes_gives_the_serial_verdicts():
    serial = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", workers=0, to_fit=0)
    parallel = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", workers=2, to_fit=0)
    assert parallel(SPACE, {}) == serial(SPACE, {})
    assert verdicts(parallel) == verdicts(serial)
    assert parallel.stats["workers"] == 2 and serial.stats["workers"] == 0
    assert parallel.stats["lowered"] == serial.stats["lowered"] == len(SPACE)


def test_early_prune_lowers_here_when_a_worker_fails(monkeypatch, caplog):
    serial = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", workers=0, to_fit=0)
    expected = serial(SPACE, {})
    monkeypatch.setattr(sst.sys, "executable", "/bin/false")  # every worker exits 1 and writes nothing
    parallel = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", workers=2, to_fit=0)
    assert parallel(SPACE, {}) == expected
    assert verdicts(parallel) == verdicts(serial)
    assert "lowering worker failed" in caplog.text


def test_early_prune_lowers_a_kernel_no_worker_can_import_here():
    @triton.jit
    def local_copy(x_ptr, BLOCK: triton.language.constexpr):
        offs = triton.language.arange(0, BLOCK)
        triton.language.store(x_ptr + offs, triton.language.load(x_ptr + offs) + 1)

    space = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=s) for b in (64, 128) for w in (1, 2, 4, 8)
             for s in (1, 2)]
    prune = sst.early_prune(local_copy, {"x_ptr": "*fp32"}, target="sm_90", workers=2)
    assert prune(space, {}) == space
    assert prune.stats["workers"] == 0 and prune.stats["lowered"] == len(space)


def test_early_prune_refuses_a_worker_count_that_is_not_one():
    for bad in (-1, 2.5, True, "4"):
        with pytest.raises(scratchsim.Error, match="workers"):
            sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", workers=bad)


@triton.jit
def _no_dot_kernel(x_ptr, M, N, K, BM: triton.language.constexpr, BN: triton.language.constexpr,
                   BK: triton.language.constexpr, GROUP_M: triton.language.constexpr):
    pass


@triton.jit
def _odd_names_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BK: triton.language.constexpr,
                      TN: triton.language.constexpr, TM: triton.language.constexpr):
    """A matmul whose tiles are named TM, TN and BK, K's first: mapped by role, not by name."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * TM + tl.arange(0, TM)
    offs_n = pid_n * TN + tl.arange(0, TN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


ODD_SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32:16", "N": "i32:16", "K": "i32:16",
                 "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
PROBLEM = {"a_ptr": sst.tensor("fp16"), "M": 4096, "N": 4096, "K": 4096}


def odd(tm, tn, bk, stages=3, warps=4):
    return triton.Config({"BK": bk, "TN": tn, "TM": tm}, num_warps=warps, num_stages=stages)


# Issue 38 item 6: top_k maps the constexprs by their role in the kernel's product (A is M x K,
# B is K x N in the lowered TTGIR), whatever their names and order.
def test_early_prune_top_k_maps_constexprs_by_their_role():
    space = [odd(m, n, k) for m in (64, 128) for n in (64, 128) for k in (32, 64)]
    prune = sst.early_prune(_odd_names_matmul, ODD_SIGNATURE, target="sm_90", top_k=2, to_fit=0)
    kept = prune(space, PROBLEM)
    assert len(kept) == 2
    names = prune._names(sst._jit_function(_odd_names_matmul), space, ODD_SIGNATURE, {})
    assert {k: names[k] for k in ("TM", "TN", "BK")} == {"TM": "BLOCK_M", "TN": "BLOCK_N", "BK": "BLOCK_K"}
    ranked = scratchsim.plan_report("h100", scratchsim.graph_path("triton_matmul"),
                                    {"M": 4096, "N": 4096, "K": 4096, "ELT": 2}, top=100, compute_dtype="f16",
                                    param={"BLOCK_M": [64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [32, 64],
                                           "NUM_STAGES": [3], "NUM_WARPS": [4]})["shortlist"]
    best = [(c["params"]["BLOCK_M"], c["params"]["BLOCK_N"], c["params"]["BLOCK_K"]) for c in ranked]
    got = [(c.kwargs["TM"], c.kwargs["TN"], c.kwargs["BK"]) for c in kept]
    assert got == [b for b in best if b in got]  # the planner's shortlist order over the mapped values


def test_map_by_role_tells_equal_values_apart_with_a_second_config():
    lowered = []

    def dots_of(c):
        lowered.append(c)
        return sst.dot_shapes(sst.lower(_odd_names_matmul, c, ODD_SIGNATURE, "sm_80").ttir)
    # TM == TN in the first config: the config that tells them apart is lowered too.
    names = sst.map_by_role([odd(64, 64, 32), odd(128, 64, 32)], {"TM", "TN", "BK"}, dots_of)
    assert names == {"TM": "BLOCK_M", "TN": "BLOCK_N", "BK": "BLOCK_K"}
    assert len(lowered) == 2
    # Equal in every config: either role ranks them the same, so one lowering decides.
    lowered.clear()
    names = sst.map_by_role([odd(64, 64, 32), odd(128, 128, 32)], {"TM", "TN", "BK"}, dots_of)
    assert sorted(names.values()) == ["BLOCK_K", "BLOCK_M", "BLOCK_N"] and names["BK"] == "BLOCK_K"
    assert len(lowered) == 1
    # The product as lowered for each kind of target (sm_90's warp_group_dot, sm_100's tc_gen5_mma).
    for target in ("sm_90", "sm_100", "gfx942"):
        low = sst.lower(_odd_names_matmul, odd(128, 64, 32), ODD_SIGNATURE, target)
        assert set(sst.dot_shapes(low.ttir)) == {(128, 64, 32)}
        assert all((m, n) == (128, 64) for m, n, _ in sst.dot_shapes(low.ttgir))


# Where the roles cannot be read (no product; two products of different shapes) top_k refuses,
# naming the param_names it needs; a user's param_names wins over the roles.
def test_early_prune_top_k_refuses_roles_it_cannot_read():
    named = {"M": 4096, "N": 4096, "K": 4096}
    space = [triton.Config({"BM": m, "BN": n, "BK": 32, "GROUP_M": 8}, num_warps=4, num_stages=3)
             for m in (64, 128) for n in (64, 128)]
    sig = {"x_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    with pytest.raises(scratchsim.Error, match=r"no matrix product.*param_names=\{'BM': \.\.\., 'BN': \.\.\.\}"):
        sst.early_prune(_no_dot_kernel, sig, target="sm_90", top_k=2)(space, named)
    attn = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "HEAD_DIM": 64}, num_warps=4, num_stages=2)
            for m in (64, 128) for n in (32, 64)]
    with pytest.raises(scratchsim.Error, match=r"2 matrix products.*param_names=\{'BLOCK_M': \.\.\., 'BLOCK_N'"):
        sst.early_prune(tk.attn_fwd_kernel, tk.ATTN_SIGNATURE, target="sm_90", top_k=2)(attn, named)
    mapped = sst.early_prune(_no_dot_kernel, sig, target="sm_90", top_k=2,
                             param_names={"BM": "BLOCK_M", "BN": "BLOCK_N", "BK": "BLOCK_K"})
    assert mapped.param_names["num_stages"] == "NUM_STAGES" and mapped.param_names["num_warps"] == "NUM_WARPS"
    assert mapped._names(None, space, sig, {}) is mapped.param_names


# top_k keeps the first configs of the planner's autotuning shortlist: the pick, then the fastest
# of each other block shape within the model's ranking error, then by estimate.
def test_early_prune_top_k_keeps_the_planners_shortlist():
    space = tk.matmul_configs(block_m=(64, 128, 256), block_n=(64, 128, 256), block_k=(32, 64), stages=(3, 4),
                              warps=(4, 8))
    named = {"a_ptr": sst.tensor("fp16"), "M": 4096, "N": 4096, "K": 4096}
    prune = sst.early_prune(tk.matmul_kernel, tk.MATMUL_SIGNATURE, target="sm_90", top_k=5)
    kept = prune(space, named)
    assert len(kept) == 5
    assert prune.stats["lowered"] < len(space)  # lowered in the shortlist's order until 5 fit
    report = scratchsim.plan_report("h100", scratchsim.graph_path("triton_matmul"),
                                    {"M": 4096, "N": 4096, "K": 4096, "ELT": 2}, top=1000, compute_dtype="f16",
                                    param={"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64],
                                           "NUM_STAGES": [3, 4], "NUM_WARPS": [4, 8]})

    def keys(configs):
        return [(c["params"]["BLOCK_M"], c["params"]["BLOCK_N"], c["params"]["BLOCK_K"], c["params"]["NUM_STAGES"],
                 c["params"]["NUM_WARPS"]) for c in configs]
    shortlist, ranking = keys(report["shortlist"]), keys(report["configs"])
    assert shortlist[:5] != ranking[:5] and any(c.get("hedge") for c in report["shortlist"][:5])
    got = [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_stages, c.num_warps) for c in kept]
    assert got == [b for b in shortlist if b in got][:5]
    assert got[0] == shortlist[0] == ranking[0] or prune.last[0][1]["fits"] is False


# A product of 32-bit operands runs at the precision Triton's TTIR gives its tl.dot: tf32 on the
# tensor cores by default on NVIDIA targets, so top_k plans it at the tf32 peak, not the CUDA cores'.
def test_early_prune_top_k_plans_a_tf32_product_at_the_tf32_peak():
    space = tk.matmul_configs(block_m=(32, 64, 128), block_n=(64, 128), block_k=(32, 64), stages=(3,), warps=(4,))
    lowered = sst.lower(tk.matmul_kernel, space[0], F32_SIGNATURE, "sm_90")
    assert sst.dot_input_precision(lowered.ttir) == "tf32"
    named = {"a_ptr": sst.tensor("fp32"), "M": 2048, "N": 2048, "K": 4096}
    prune = sst.early_prune(tk.matmul_kernel, F32_SIGNATURE, target="sm_90", top_k=3, to_fit=0)
    kept = prune(space, named)
    axes = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [32, 64], "NUM_STAGES": [3], "NUM_WARPS": [4]}

    def order(compute_dtype):
        report = scratchsim.plan_report("h100", scratchsim.graph_path("triton_matmul"),
                                        {"M": 2048, "N": 2048, "K": 4096, "ELT": 4}, top=100, param=axes,
                                        compute_dtype=compute_dtype)
        return [(c["params"]["BLOCK_M"], c["params"]["BLOCK_N"], c["params"]["BLOCK_K"]) for c in report["shortlist"]]
    tf32, f32 = order("tf32"), order("f32")
    assert tf32[:3] != f32[:3]  # the peak decides this product's order
    got = [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]) for c in kept]
    assert got == [b for b in tf32 if b in got][:3]


def test_dot_input_precision_reads_what_the_kernel_asks():
    ttir = "%acc = tt.dot %a, %b, %c, inputPrecision = ieee : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>"
    assert sst.dot_input_precision(ttir) == "ieee"
    assert sst.dot_input_precision("%x = arith.addf %a, %b : tensor<64xf32>") is None
    assert sst._compute_dtype({"ELT": 4}, "ieee") == "f32" and sst._compute_dtype({"ELT": 4}, "tf32") == "tf32"
    assert sst._compute_dtype({"ELT": 2}, "tf32") == "f16" and sst._compute_dtype({"M": 64}, "tf32") is None


# compiled_registers: ptxas's registers per config, compiled on the CPU for sm_90 (no GPU), equal
# to what the H200 sweeps' compiles of the same configs recorded (tests/data/planner/compiled-registers,
# bench/planner/sweep_registers.py), keyed by the graph parameters the constexprs' roles map to.
F32_SIGNATURE = {k: v.replace("fp16", "fp32") if isinstance(v, str) else v for k, v in tk.MATMUL_SIGNATURE.items()}


def _recorded_registers(graph: str) -> dict:
    with open(REPO / "tests" / "data" / "planner" / "compiled-registers" / f"{graph}.registers.json") as f:
        recorded = json.load(f)
    return {tuple(sorted(c["sets"])): c for c in recorded["configs"]}


def test_compiled_registers_are_the_recorded_ptxas_counts():
    configs = tk.matmul_configs(block_m=(32, 128), block_n=(256,), block_k=(32,), stages=(3, 4), warps=(4,))
    figures = sst.compiled_registers(tk.matmul_kernel, configs, F32_SIGNATURE, "sm_90", fixed={"ELT": 4})
    assert figures["graph"] == "triton_matmul" and figures["target"] == "sm_90"
    assert figures["compiler"].startswith(f"Triton {triton.__version__}")
    recorded = _recorded_registers("triton_matmul")
    assert len(figures["configs"]) == 4
    for entry in figures["configs"]:
        assert {s.split("=")[0] for s in entry["sets"]} == {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS",
                                                          "ELT"}
        key = tuple(sorted(entry["sets"]))
        if key in recorded and triton.__version__ == "3.6.0":  # recorded with Triton 3.6.0's ptxas
            assert (entry["registers"], entry["spill_bytes"] > 0) == \
                (recorded[key]["registers"], recorded[key]["spill_bytes"] > 0), key


def test_plan_report_takes_a_compilers_registers():
    configs = tk.matmul_configs(block_m=(32,), block_n=(256,), block_k=(32,), stages=(3, 4), warps=(4,))
    figures = sst.compiled_registers(tk.matmul_kernel, configs, F32_SIGNATURE, "sm_90", fixed={"ELT": 4})
    space = {"BLOCK_M": [32], "BLOCK_N": [256], "BLOCK_K": [32], "NUM_STAGES": [3, 4], "NUM_WARPS": [4]}
    report = scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"),
                                    {"M": 64, "N": 28672, "K": 8192, "ELT": 4}, top=5, param=space,
                                    compute_dtype="tf32", registers=[figures])
    by_stages = {c["params"]["NUM_STAGES"]: c for c in report["configs"]}
    for entry in figures["configs"]:
        stages = int(next(s for s in entry["sets"] if s.startswith("NUM_STAGES=")).split("=")[1])
        assert by_stages[stages]["registers_per_thread"] == entry["registers"]
        assert by_stages[stages]["registers_from"] == "compiler"
    assert any("registers of 2 compiled configurations of triton_matmul" in n for n in report["notes"])


def test_registers_compiled_for_aligned_sizes_do_not_stand_in_for_an_unaligned_n():
    # 32 x 128 (not 256, which an unaligned f32 B's 4-byte copies spill at 4 warps).
    configs = tk.matmul_configs(block_m=(32,), block_n=(128,), block_k=(32,), stages=(3,), warps=(4,))
    figures = sst.compiled_registers(tk.matmul_kernel, configs, F32_SIGNATURE, "sm_90", fixed={"ELT": 4},
                                     compiled_where=["N % 16 == 0"])
    assert figures["compiled_where"] == ["N % 16 == 0"]
    space = {"BLOCK_M": [32], "BLOCK_N": [128], "BLOCK_K": [32], "NUM_STAGES": [3], "NUM_WARPS": [4]}
    for n, compiler in ((28672, True), (28675, False)):
        report = scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"),
                                        {"M": 64, "N": n, "K": 8192, "ELT": 4}, top=5, param=space,
                                        compute_dtype="tf32", registers=[figures])
        assert (report["configs"][0].get("registers_from") == "compiler") == compiler, n
    assert any("this problem breaks N % 16 == 0" in note for note in report["notes"])


def test_plan_report_refuses_registers_it_cannot_read(tmp_path):
    with pytest.raises(scratchsim.Error, match="registers\\[0\\]: cannot read"):
        scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"), {"M": 64, "N": 64, "K": 64},
                               registers=[str(tmp_path / "missing.json")])
    with pytest.raises(scratchsim.Error, match="registers\\[0\\]: a CompiledRegisters dict"):
        scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"), {"M": 64, "N": 64, "K": 64},
                               registers=[42])
    with pytest.raises(scratchsim.Error, match="target: 'sm_80' is not the architecture of device 'h200'"):
        scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"), {"M": 64, "N": 64, "K": 64},
                               registers=[{"graph": "triton_matmul", "target": "sm_80", "configs": []}])
    with pytest.raises(scratchsim.Error, match="graph: 'triton_matmul' is named by --registers registers\\[0\\] too"):
        scratchsim.plan_report("h200", scratchsim.graph_path("triton_matmul"), {"M": 64, "N": 64, "K": 64},
                               registers=[{"graph": "triton_matmul", "target": "sm_90", "configs": []}] * 2)


def test_early_prune_top_k_ranks_with_ptxas_registers():
    space = tk.matmul_configs(block_m=(32, 64), block_n=(128, 256), block_k=(32,), stages=(3, 4), warps=(4,))
    named = {"a_ptr": sst.tensor("fp32"), "M": 64, "N": 28672, "K": 8192}
    prune = sst.early_prune(tk.matmul_kernel, F32_SIGNATURE, target="sm_90", top_k=3, registers=True, to_fit=0)
    kept = prune(space, named)
    assert len(kept) == 3
    compiled = prune.stats["compiled"]
    assert 0 < compiled <= len(space) and prune.stats["compile_s"] > 0
    again = prune(space, named)  # compiled once per config and specialization
    assert prune.stats["compiled"] == compiled and again == kept
    with pytest.raises(scratchsim.Error, match="registers: True"):
        sst.early_prune(tk.matmul_kernel, F32_SIGNATURE, target="sm_90", top_k=3, registers="yes")


# registers=True compiles what can change the first top_k (the configs the estimate prunes for
# spills, then the first 2 x top_k until all are compiled), not every config; the first top_k is
# what the plan with every config's compiled figure places first.
def test_early_prune_compiles_only_what_can_reach_its_top_k():
    space = tk.matmul_configs(block_m=(32, 64), block_n=(64, 128, 256), block_k=(32, 64), stages=(3, 4), warps=(4,))
    named = {"a_ptr": sst.tensor("fp32"), "M": 64, "N": 28672, "K": 8192}
    prune = sst.early_prune(tk.matmul_kernel, F32_SIGNATURE, target="sm_90", top_k=2, registers=True, to_fit=0)
    kept = prune(space, named)
    assert 0 < prune.stats["compiled"] < len(space)
    figures = sst.compiled_registers(tk.matmul_kernel, space, F32_SIGNATURE, "sm_90", fixed={"ELT": 4})
    report = scratchsim.plan_report(prune.device or sst.device_for_arch("sm_90"), scratchsim.graph_path("triton_matmul"),
                                    {"M": 64, "N": 28672, "K": 8192, "ELT": 4}, top=100, compute_dtype="tf32",
                                    param={"BLOCK_M": [32, 64], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64],
                                           "NUM_STAGES": [3, 4], "NUM_WARPS": [4]}, registers=[figures])
    every = [(c["params"]["BLOCK_M"], c["params"]["BLOCK_N"], c["params"]["BLOCK_K"], c["params"]["NUM_STAGES"])
             for c in report["shortlist"]]
    got = [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_stages) for c in kept]
    assert got == [b for b in every if b in got][:2] and got[0] == every[0]


def test_compiled_registers_refuse_a_target_without_ptxas():
    configs = tk.matmul_configs(block_m=(64,), block_n=(64,), block_k=(32,), stages=(2,), warps=(4,))
    with pytest.raises(scratchsim.Error, match="NVIDIA targets only"):
        sst.compiled_registers(tk.matmul_kernel, configs, tk.MATMUL_SIGNATURE, "gfx942",
                               param_names={"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "BLOCK_K": "BLOCK_K"})


def _lowered_for_sm90(fn, extra_args=()):
    """The TTGIR and LLIR of fn for sm_90 at 64/128/64, 3 stages, 4 warps (the compile stopped after
    make_llir; no GPU needed)."""
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    sys.path.insert(0, str(REPO / "bench" / "triton"))
    import triton_compile
    sizes = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{n: "i32" for n in sizes},
                 **dict(extra_args), **{n: "constexpr" for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}}
    old = knobs.runtime.add_stages_inspection_hook
    triton_compile.install_stop_hook(True)
    try:
        k = triton.compile(ASTSource(fn, signature, {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}),
                           target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})
    finally:
        knobs.runtime.add_stages_inspection_hook = old
    return k.asm["ttgir"], k.asm["llir"]


def test_the_clocked_matmul_is_the_plain_one_plus_its_clock_reads():
    # bench/planner/burst_clock.py reads the SM clock from inside the matmul it times: the kernel
    # must be the plain matmul's, with two reads of each counter and the four stores of block 0.
    import collections
    import re
    op = re.compile(r"^\s*(?:%\S+(?:, %\S+)* = )?\"?(tt[a-z]*\.[a-z_]+)", re.M)
    plain_ttgir, plain_llir = _lowered_for_sm90(tk.matmul_kernel)
    clocked_ttgir, clocked_llir = _lowered_for_sm90(tk.matmul_clocked_kernel, [("clock_ptr", "*i64")])
    plain, clocked = collections.Counter(op.findall(plain_ttgir)), collections.Counter(op.findall(clocked_ttgir))
    added = {name: clocked[name] - plain[name] for name in plain.keys() | clocked.keys() if clocked[name] != plain[name]}
    assert added == {"tt.elementwise_inline_asm": 4, "tt.store": 4, "tt.addptr": 3}
    assert plain["ttng.warp_group_dot"] == clocked["ttng.warp_group_dot"] == 1
    assert clocked_llir.count("%clock64") == 2 and clocked_llir.count("%globaltimer") == 2
    assert "%clock64" not in plain_llir
