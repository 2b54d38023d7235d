"""torch.compile / Inductor: drop the max-autotune configs that cannot fit on the target before
Inductor compiles and benchmarks them, choose a FlexAttention config that fits, and report whether
every Triton kernel Inductor generated for a model fits on a GPU.

The figure is Triton's own: each candidate's generated Triton kernel is lowered to TTGIR with the
exact pieces Inductor hands triton.compile (scratchsim.triton.lower_compiled: no LLVM, no ptxas,
any target) and simulated with Triton's allocation, in place of Inductor's size formula
(BaseConfigHeuristic.get_shared_memory_estimation, off by default; docs/inductor.md).

    import scratchsim.inductor as ssi
    pruner = ssi.install(target="sm_90")            # every autotune_select_algorithm from now on
    model = torch.compile(model, mode="max-autotune")
    model(x); pruner.stats, pruner.dropped
    pruner.uninstall()

    ssi.choose_flex(target="sm_89", device="rtx4090")  # FlexAttention picks the first config that fits
    report = ssi.model_report(fn, *args, targets=ssi.TARGETS)   # every kernel, every target
    print(ssi.report_text(report))

The hook is PyTorch's public `torch._inductor.select_algorithm.add_preprocessing_fn` (called with
every op's ChoiceCallers before precompiling and benchmarking: mm, bmm, addmm, flex_attention,
flex_attention_backward, flex_decoding); the chooser widens FlexAttention's candidate list through
`torch._inductor.config.inductor_choices_class` (InductorChoices, Inductor's documented
out-of-tree heuristics hook). What is read from Inductor's private objects (a template choice's
generated module, the compile pieces of its CachingAutotuner) is read in one place, `_Torch`, for
the PyTorch versions in SUPPORTED_TORCH (measured on the GPU) and CPU_CHECKED_TORCH (checked on the
CPU, accepted with a warning); another version is refused with a message saying so.

The judging, pruning, choosing and reporting below `_Torch` take plain records (names, config
parameters, TTGIR text per target) and need neither torch nor Triton: tests replay kernels
recorded from real compiles (tests/data/inductor) through them.
"""
from __future__ import annotations

import concurrent.futures
import importlib
import json
import logging
import math
import re
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

import scratchsim
from scratchsim import Error
from scratchsim import triton as sst

__all__ = ["SUPPORTED_TORCH", "CPU_CHECKED_TORCH", "TARGETS", "judge", "prune", "first_fit",
           "kernels_from_output_code", "template_params", "dominates", "frontier_pick", "check_source", "report", "pictures",
           "report_text", "install", "Pruner", "choose_flex", "flex_kernel_options", "model_report",
           "lower_kernel_source", "output_code_records", "dumps"]

log = logging.getLogger("scratchsim.inductor")

# The PyTorch versions (major.minor) whose Inductor internals _Torch reads; checked on the GPU
# machine's compiles (docs/validation/inductor-gpu.md).
SUPPORTED_TORCH = ("2.11",)
# Versions whose internals were read against SUPPORTED_TORCH's and whose recorded kernels and CPU
# paths were checked, but no compile measured on a GPU (docs/inductor.md, "PyTorch versions"):
# accepted, with a warning saying so.
CPU_CHECKED_TORCH = ("2.15",)
# The targets a model report covers by default (issue 39).
TARGETS = ("sm_80", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950")
# Inductor's template names (TritonTemplate.name) of the FlexAttention family: the chooser's scope.
FLEX_TEMPLATES = ("flex_attention", "flex_attention_backward", "flex_decoding")


# ----------------------------------------------------------------------------------------------
# Torch-free core: verdicts, pruning, choosing, reports over TTGIR text.
# ----------------------------------------------------------------------------------------------

def _shared(report: dict):
    for s in report.get("spaces", []):
        if s.get("space") in ("smem", "lds"):
            return s.get("peak_bytes"), s.get("limit_bytes")
    return None, None


def judge(ttgir: str, arch: str, device: str | None = None, *, any_target: bool = False, name: str = "kernel",
          triton_release: str | None = None) -> dict:
    """The verdict of one TTGIR module on `device` (None: the shipped model of `arch`): verdict
    (FITS, AT_RISK, DOES_NOT_FIT), fits, shared (Triton's allocation, bytes), limit, message
    (Triton's OutOfResources words when it cannot fit), device, arch. `triton_release`: the
    Triton that wrote the TTGIR, where known (simulate_ttgir)."""
    dev = device or sst.device_for_arch(arch)
    rep = scratchsim.simulate_ttgir(dev, ttgir, suggest=False, any_target=any_target, name=f"{name}.ttgir",
                                    triton_release=triton_release)
    shared, limit = _shared(rep)
    verdict = rep.get("verdict") or ("FITS" if rep.get("fits") else "DOES_NOT_FIT")
    if verdict not in ("FITS", "AT_RISK", "DOES_NOT_FIT"):
        raise Error(f"{name}: the report's verdict '{verdict}' is not FITS, AT_RISK or DOES_NOT_FIT")
    return {"verdict": verdict,
            "fits": bool(rep.get("fits")), "shared": shared, "limit": limit,
            "message": "" if rep.get("fits") else sst._message(rep), "device": dev, "arch": arch}


def prune(items: Sequence[Any], verdict_of: Callable[[Any], dict | None]) -> tuple[list, list]:
    """(kept, dropped): an item is dropped when verdict_of(item) says DOES_NOT_FIT; None (not
    checked: not a Triton template) and AT_RISK are kept, in the given order. dropped holds
    (item, verdict)."""
    kept, dropped = [], []
    for item in items:
        v = verdict_of(item)
        if v is not None and v.get("verdict") == "DOES_NOT_FIT":
            dropped.append((item, v))
        else:
            kept.append(item)
    return kept, dropped


def first_fit(items: Sequence[Any], verdict_of: Callable[[Any], dict | None]):
    """The first item whose verdict is FITS (an AT_RISK one only when none fits), or None."""
    at_risk = None
    for item in items:
        v = verdict_of(item)
        if v is None:
            continue
        if v.get("verdict") == "FITS":
            return item
        if v.get("verdict") == "AT_RISK" and at_risk is None:
            at_risk = item
    return at_risk


_KERNEL_RE = re.compile(r"async_compile\.triton\(\s*'([A-Za-z_][A-Za-z0-9_]*)'\s*,\s*'''(.*?)'''", re.DOTALL)


def kernels_from_output_code(code: str) -> list[tuple[str, str]]:
    """(name, source) of every Triton kernel in an Inductor output-code module (its
    `async_compile.triton('name', '''source''', ...)` definitions), in order, each once."""
    seen, out = set(), []
    for name, src in _KERNEL_RE.findall(code):
        if name not in seen:
            seen.add(name)
            out.append((name, src.strip("\n") + "\n"))
    return out


_CONSTEXPR_RE = re.compile(r"^\s+((?:BLOCK|GROUP)_[A-Z0-9_]*)\s*:\s*tl\.constexpr\s*=\s*(\d+)\s*$", re.M)


def template_params(source: str) -> dict:
    """The tile sizes an Inductor template kernel was rendered with: its BLOCK_* and GROUP_*
    constexprs, which the template writes into the kernel body (`BLOCK_M : tl.constexpr = 64`)."""
    return {k: int(v) for k, v in _CONSTEXPR_RE.findall(source)}


_DECORATOR_RE = re.compile(r"^(num_stages|num_warps)=(\d+),\s*$", re.M)


def _decorator_params(source: str) -> dict:
    """num_stages and num_warps as the template module's @triton_heuristics.template(...) states them."""
    return {k: int(v) for k, v in _DECORATOR_RE.findall(source)}


def _digest(text: str) -> str:
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()


_TILE_RE = (re.compile(r"\b((?:BLOCK|GROUP)_[A-Z0-9_]*)(\s*:\s*tl\.constexpr\s*=\s*)\d+"),
            re.compile(r"'((?:BLOCK|GROUP)_[A-Z0-9_]*)': \d+"), re.compile(r"^num_stages=\d+", re.M))


def _skeleton(source: str) -> str:
    """A template module with its tile sizes and stage count blanked: the modules of one op that
    differ only in those (one family for dominates()) have the same skeleton."""
    a, b, c = _TILE_RE
    return c.sub("num_stages=#", b.sub(r"'\1': #", a.sub(r"\1\2#", source)))


def _kin(family: tuple) -> tuple:
    """The families of one op that differ only in num_warps (Pruner._decide's family key with the
    decorator's num_warps blanked): where frontier_pick takes its guess from."""
    template, skeleton, _ = family
    return template, re.sub(r"^num_warps=\d+", "num_warps=#", skeleton, flags=re.M)


def _size(params: Mapping) -> int:
    out = params.get("num_stages", 1) or 1
    for k, v in params.items():
        if k.startswith("BLOCK_"):
            out *= v or 1
    return out


def _inferred(v: Mapping, params: Mapping) -> dict:
    """The DOES_NOT_FIT verdict of a config that dominates one whose verdict `v` is DOES_NOT_FIT."""
    return {**v, "shared": None, "params": dict(params), "inferred_from": dict(v["params"]),
            "message": (f"out of resource: shared memory, Required: at least {v['shared']} (it dominates "
                        f"{v['params']}, which needs that), Hardware limit: {v['limit']}")}


def dominates(big: Mapping, small: Mapping) -> bool:
    """Whether config `big` has every tile size (BLOCK_*) and num_stages at least `small`'s, the
    same GROUP_* and num_warps (two configs of one family). Triton's shared memory for a template
    is its pipelined operand tiles (tile size x element size x buffers, the buffers growing with
    num_stages) plus layout-conversion scratch of tile size: none of it shrinks as a tile or the
    pipeline grows, so a config that a fitting one dominates fits too (tests/data/inductor: no
    exception among the recorded pairs)."""
    if set(big) != set(small):
        return False
    for k, v in small.items():
        if k.startswith("BLOCK_") or k == "num_stages":
            if v > big[k]:
                return False
        elif v != big[k]:
            return False
    return True


def _tiles(params: Mapping) -> tuple:
    """A config's tile sizes and stages without num_warps: the same point in the kin families
    (one template and source, other num_warps) that frontier_pick predicts from."""
    return tuple(sorted((k, v) for k, v in params.items() if k != "num_warps"))


def _scaled_guess(params: Mapping, figures: Sequence[tuple]) -> bool:
    """Whether a config is guessed over the limit from the lowered figures of its family
    [(params, shared, limit)]: the nearest lowered config's figure (distance: the sum of |log2|
    ratios of the tiles and stages) scaled by the ratio of _size(), the bytes of the pipelined
    tiles growing with their product. Only an order for frontier_pick, never a verdict."""
    def distance(other):
        return sum(abs(math.log2((params.get(k) or 1) / (other.get(k) or 1))) for k in params
                   if k.startswith("BLOCK_") or k == "num_stages")
    near, shared, limit = min(figures, key=lambda f: distance(f[0]))
    return shared * _size(params) / _size(near) > limit


# Lowered figures of a family (its kin's included) from which _fitted_guess orders the lowerings:
# fewer leave the fit underdetermined, and the nearest-figure guess (_scaled_guess) orders instead.
_FIT_MIN_FIGURES = 3
# The ridge term of that fit, small beside the bytes it fits: it only keeps the normal equations
# solvable while fewer figures than coefficients are known.
_FIT_RIDGE = 1e-3


def _figure_terms(params: Mapping, names: Sequence[str]) -> list:
    """The terms of _fitted_guess's linear form over the tiles `names`: a constant, each tile and
    each product of two tiles, and each of these times num_stages. Triton's buffers are operand
    tiles (a tile by a fixed dimension, FlexAttention's head dim; or a product of two, a matmul's
    BLOCK_M x BLOCK_K), alone or in a ring of num_stages slots."""
    stages = params.get("num_stages", 1) or 1
    tiles = [params.get(n) or 1 for n in names]
    products = [tiles[i] * tiles[j] for i in range(len(tiles)) for j in range(i + 1, len(tiles))]
    plain = [1.0] + tiles + products
    return plain + [t * stages for t in plain]


def _solve(a: list, b: list) -> list:
    """The solution of the square system a x = b (Gaussian elimination with partial pivoting)."""
    n = len(b)
    m = [row[:] + [rhs] for row, rhs in zip(a, b)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if m[col][col] == 0:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        acc = m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))
        x[r] = acc / m[r][r] if m[r][r] else 0.0
    return x


def _fit_linear(points: Sequence[tuple], names: Sequence[str]) -> Callable[[Mapping], float]:
    """The least-squares fit of figures [(params, shared)] to _figure_terms over the tiles `names`."""
    rows = [_figure_terms(p, names) for p, _ in points]
    n = len(rows[0])
    gram = [[sum(r[i] * r[j] for r in rows) + (_FIT_RIDGE if i == j else 0.0) for j in range(n)] for i in range(n)]
    coef = _solve(gram, [sum(r[i] * y for r, (_, y) in zip(rows, points)) for i in range(n)])
    return lambda params: sum(c * t for c, t in zip(coef, _figure_terms(params, names)))


# Rounds of _fitted_guess's assignment of figures to loops: it settles in two or three on the
# recorded spaces; the cap only bounds a figure that flips between two loops.
_LOOP_FIT_ROUNDS = 8


def _fitted_guess(figures: Sequence[tuple]) -> Callable[[Mapping], bool]:
    """Whether a config is guessed over the limit, from the lowered figures [(params, shared,
    limit)] of its family and its kin (which differ in num_warps only by their layout-conversion
    scratch). Within one loop of a template the allocation is a sum of _figure_terms' buffers; tiles
    whose names end in one index (BLOCK_M1 and BLOCK_N1; BLOCK_M2 and BLOCK_N2) are one loop's, and
    Triton's allocator overlaps the buffers of loops that are not live together, so the figure is
    the largest loop's (FlexAttention's backward: dK and dV over BLOCK_M1/N1, then dQ over
    BLOCK_M2/N2, tests/data/inductor/space_bwd_d256_sm90.json). Each loop's sum is fitted by least
    squares to the figures it is the largest for, alternating with that assignment. Only an order for
    frontier_pick, never a verdict: a nearest figure scaled by the tile product (_scaled_guess)
    misjudges a template of several loops."""
    names = sorted({k for f in figures for k in f[0] if k.startswith("BLOCK_")})
    loops: dict = {}
    for name in names:
        loops.setdefault(re.sub(r"^BLOCK_[A-Z]+", "", name), []).append(name)
    groups = list(loops.values()) or [[]]
    points = [(f[0], f[1]) for f in figures]
    models = [_fit_linear(points, g) for g in groups]
    owner = None
    for _ in range(_LOOP_FIT_ROUNDS if len(groups) > 1 else 0):
        new_owner = [max(range(len(groups)), key=lambda i: models[i](p)) for p, _ in points]
        if new_owner == owner:
            break
        owner = new_owner
        models = [_fit_linear([pt for pt, o in zip(points, owner) if o == i] or points, g) for i, g in enumerate(groups)]
    limit = figures[0][2]
    return lambda params: max(m(params) for m in models) > limit


def frontier_pick(undecided: Sequence[Mapping], predicted: Mapping[tuple, bool] | None = None,
                  candidates: int = 48) -> int:
    """The index of the config of one family (params, all undecided) to lower next, so that few
    lowerings settle the family. Whether a config is over the limit is monotone in dominates()
    (an up-set): a FITS settles every config it dominates, a DOES_NOT_FIT every config that
    dominates it, and a family is settled exactly when its maximal fitting and minimal unfit
    configs have been lowered, at least that many lowerings whatever the order.

    predicted maps _tiles(params) to a guess, "over" (True) / "fits" (False) / None: the guessed
    frontier is lowered first, where a right guess settles most: the largest guessed-fitting
    config (_size: nothing strictly dominating it is guessed to fit) or the smallest guessed-over
    one, whichever settles more if the guess is right. Without a guess (or once it is spent), the
    config whose either answer settles most (max of min(|dominated|, |dominating|)): a bisection
    of the partial order, among `candidates` configs spread over the size order so that a family
    of hundreds (an exhaustive mm space) costs O(candidates x n) dominance tests. The pick only
    orders the lowerings: every verdict is still exact or follows from dominance."""
    n = len(undecided)
    order = sorted(range(n), key=lambda i: _size(undecided[i]))

    def down(i):
        return sum(dominates(undecided[i], undecided[j]) for j in range(n))

    def up(i):
        return sum(dominates(undecided[j], undecided[i]) for j in range(n))
    if predicted:
        guess = [predicted.get(_tiles(p)) for p in undecided]
        fit = next((i for i in reversed(order) if guess[i] is False), None)
        over = next((i for i in order if guess[i] is True), None)
        if fit is not None or over is not None:
            return max((x for x in ((fit, down), (over, up)) if x[0] is not None), key=lambda x: x[1](x[0]))[0]
    def split(i):
        u, d = up(i), down(i)
        return min(u, d), u + d
    return max(order[::max(1, n // candidates)], key=split)


def _kernel_verdict(configs: Sequence[dict]) -> str:
    """A kernel with several configs (Triton's runtime autotuner picks one) fits when all of them
    fit; where only some do, the autotuner can still run it but loses the others: AT_RISK."""
    verdicts = [c["verdict"] for c in configs]
    if not verdicts:
        return "NOT_CHECKED"
    if all(v == "FITS" for v in verdicts):
        return "FITS"
    if all(v == "DOES_NOT_FIT" for v in verdicts):
        return "DOES_NOT_FIT"
    return "AT_RISK"


def report(records: Sequence[Mapping], targets: Iterable[str] = TARGETS, devices: Mapping[str, str] | None = None) -> dict:
    """The model report over kernel records {"name", "triton_release" (optional: the Triton that
    lowered them), "configs": [{"params", "ttgir": {arch: text}}
    | {"params", "error": {arch: message}}]}: per kernel and target the verdict, Triton's shared
    bytes and the limit of each config, and per target a summary ("will this model's kernels fit
    on that GPU"). devices maps an arch to the model judged on (default: the arch's shipped one)."""
    devices = dict(devices or {})
    targets = list(targets)
    kernels, summary = [], {}
    for t in targets:
        summary[t] = {"device": devices.get(t) or sst.device_for_arch(t), "kernels": 0, "fits": 0, "at_risk": 0,
                      "does_not_fit": 0, "not_checked": 0, "max_shared": 0}
    for rec in records:
        entry = {"name": rec["name"], "targets": {}}
        for t in targets:
            cfgs = []
            for c in rec.get("configs", []):
                if t in c.get("ttgir", {}):
                    v = judge(c["ttgir"][t], t, devices.get(t), name=rec["name"],
                              triton_release=rec.get("triton_release"))
                elif t in c.get("error", {}):
                    v = {"verdict": "NOT_CHECKED", "fits": False, "shared": None, "limit": None,
                         "message": c["error"][t], "device": summary[t]["device"], "arch": t}
                else:
                    continue
                cfgs.append({"params": dict(c.get("params", {})), **v})
            checked = [c for c in cfgs if c["verdict"] != "NOT_CHECKED"]
            verdict = _kernel_verdict(checked) if checked else "NOT_CHECKED"
            shared = [c["shared"] for c in checked if c["shared"] is not None]
            entry["targets"][t] = {"verdict": verdict, "max_shared": max(shared) if shared else None,
                                   "limit": next((c["limit"] for c in checked if c["limit"]), None), "configs": cfgs}
            s = summary[t]
            s["kernels"] += 1
            s[{"FITS": "fits", "AT_RISK": "at_risk", "DOES_NOT_FIT": "does_not_fit"}.get(verdict, "not_checked")] += 1
            s["max_shared"] = max(s["max_shared"], max(shared) if shared else 0)
        kernels.append(entry)
    for s in summary.values():
        s["verdict"] = ("DOES_NOT_FIT" if s["does_not_fit"] else "AT_RISK" if s["at_risk"] or s["not_checked"]
                        else "FITS")
    return {"targets": targets, "summary": summary, "kernels": kernels}


def report_text(rep: Mapping) -> str:
    """The model report as text: one line per target, then each kernel that does not fit everywhere."""
    lines = ["target   device     kernels  fits  at-risk  no-fit  unchecked  max shared B  verdict"]
    for t in rep["targets"]:
        s = rep["summary"][t]
        lines.append(f"{t:<8} {s['device']:<10} {s['kernels']:>7} {s['fits']:>5} {s['at_risk']:>8} "
                     f"{s['does_not_fit']:>7} {s['not_checked']:>10} {s['max_shared']:>13}  {s['verdict']}")
    for k in rep["kernels"]:
        bad = {t: v for t, v in k["targets"].items() if v["verdict"] != "FITS"}
        for t, v in bad.items():
            worst = next((c for c in v["configs"] if c["verdict"] != "FITS"), None)
            why = f": {worst['message']}" if worst and worst.get("message") else ""
            lines.append(f"  {k['name']} on {t}: {v['verdict']}{why}")
    return "\n".join(lines) + "\n"


def pictures(records: Sequence[Mapping], targets: Iterable[str] = TARGETS, devices: Mapping[str, str] | None = None,
             *, only_unfit: bool = True) -> dict:
    """The shared-memory timeline (SVG, docs/pictures.md) of each kernel on each target, for the
    config that needs the most shared memory there: {"kernel on target": svg}; only_unfit keeps
    the kernels that do not fit (the ones to look at)."""
    devices = dict(devices or {})
    out = {}
    for rec in records:
        for t in targets:
            dev = devices.get(t) or sst.device_for_arch(t)
            judged = [(judge(c["ttgir"][t], t, dev, name=rec["name"], triton_release=rec.get("triton_release")),
                       c["ttgir"][t])
                      for c in rec.get("configs", []) if t in c.get("ttgir", {})]
            if not judged:
                continue
            v, ttgir = max(judged, key=lambda p: p[0]["shared"] or 0)
            if only_unfit and v["fits"]:
                continue
            rep = scratchsim.simulate_ttgir(dev, ttgir, suggest=False, name=f"{rec['name']}.ttgir", timeline=True)
            out[f"{rec['name']} on {t}"] = rep["timeline_svg"]
    return out


# ----------------------------------------------------------------------------------------------
# The thin adapter: the one place that reads Inductor's objects (version-checked).
# ----------------------------------------------------------------------------------------------

_WARNED: set = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        log.warning(message)


class _Torch:
    """Inductor's objects as read here. Every access to a non-public attribute of PyTorch sits in
    this class, for the versions in SUPPORTED_TORCH."""

    def __init__(self, allow_untested: bool = False):
        try:
            import torch
        except ImportError as e:
            raise Error("scratchsim.inductor needs PyTorch (pip install torch)") from e
        version = torch.__version__.split("+")[0]
        minor = ".".join(version.split(".")[:2])
        if minor in CPU_CHECKED_TORCH:
            _warn_once(f"scratchsim.inductor: PyTorch {torch.__version__}'s Inductor internals were checked on the "
                       "CPU only (docs/inductor.md, \"PyTorch versions\"); the GPU measurements are PyTorch "
                       f"{', '.join(SUPPORTED_TORCH)}'s")
        elif minor not in SUPPORTED_TORCH and not allow_untested:
            raise Error(f"scratchsim.inductor reads Inductor's internals as PyTorch "
                        f"{', '.join(SUPPORTED_TORCH + CPU_CHECKED_TORCH)} lays them out; this is PyTorch "
                        f"{torch.__version__} (allow_untested=True to try anyway)")
        self.torch = torch
        self.version = torch.__version__

    @property
    def config(self):
        from torch._inductor import config
        return config

    @property
    def select_algorithm(self):
        # Imported on use: it pulls in most of Inductor (seconds), which a compile worker lowering
        # an output-code kernel (lower_kernel_source) never needs.
        from torch._inductor import select_algorithm
        return select_algorithm

    @staticmethod
    def use_workers_ptxas() -> None:
        """Has this process compile Triton kernels with the ptxas Inductor's compile workers use
        (PyTorch's own where it ships one: runtime.compile_tasks._set_triton_ptxas_path, which each
        worker runs at start and this process only when it compiles a kernel itself). Triton's
        cache key holds the ptxas version, so while the two differ, an op whose choices the pool
        precompiled (as it does once the pool is ready, which the hook's seconds of checking let
        it be) has its benchmark in this process miss the workers' compiles and compile every
        choice again, one at a time (docs/validation/inductor-gpu.md, runs 6-8)."""
        try:
            from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path
        except ImportError:
            return
        _set_triton_ptxas_path()

    # -- a template choice's kernel ---------------------------------------------------------------
    @staticmethod
    def template_name(choice) -> str | None:
        """The TritonTemplate name of a TritonTemplateCaller ("mm", "bmm", "flex_attention"...),
        None for other choices (ATen, subgraphs, CUTLASS, CuteDSL). A TritonTemplate's kernel is
        named triton_<template> (select_algorithm.py, TritonTemplate.generate); PyTorch 2.15's
        SubgraphChoiceCaller.bmreq is a property that raises AssertionError unless
        config.pipeline_max_autotune_gemm (codegen/subgraph.py), so it is read guarded."""
        try:
            bmreq = getattr(choice, "bmreq", None)
        except Exception:
            return None
        name = getattr(bmreq, "kernel_name", None)
        if not name or not name.startswith("triton_") or not getattr(bmreq, "module_path", None):
            return None
        return name[len("triton_"):]

    @staticmethod
    def source_kernel(name: str, source: str):
        """The CachingAutotuner an output-code kernel source defines, from a fresh import: the module
        Inductor caches has been precompiled, and precompiling empties the autotuner's configs."""
        return getattr(sst.load_source_module(source, "inductor"), name)

    @staticmethod
    def compile_pieces(autotuner, cfg) -> tuple:
        """(fn, signature, constants, attrs, options): what CachingAutotuner._precompile_config
        hands triton.compile for `cfg` (2.11 and 2.15: the same pieces)."""
        meta = autotuner._create_compile_meta(cfg)
        options = autotuner._create_compile_options(cfg, meta)
        return autotuner.fn, meta["signature"], meta["constants"], meta["configs"][0], options

    @staticmethod
    def config_params(cfg) -> dict:
        return {**dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}

    @staticmethod
    def compile_threads() -> int:
        """How many compile workers Inductor's pool has (1: Inductor compiles in this process)."""
        try:
            # async_compile.get_compile_threads (2.11 and 2.15; torch._inductor.utils has none).
            from torch._inductor.async_compile import get_compile_threads
            return int(get_compile_threads())
        except Exception as e:
            log.debug("scratchsim: no Inductor compile threads (%s)", e)
            return 1

    @staticmethod
    def compile_pool():
        """Inductor's compile worker pool when it is up and ready (None otherwise). The first call
        starts its workers (AsyncCompile.use_process_pool submits the job that marks them ready)."""
        try:
            from torch._inductor.async_compile import AsyncCompile
            if AsyncCompile.use_process_pool():
                return AsyncCompile.process_pool()
        except Exception as e:
            log.debug("scratchsim: no Inductor compile pool (%s)", e)
        return None

    # -- hooks ----------------------------------------------------------------------------------
    def add_preprocessing_fn(self, fn) -> None:
        self.select_algorithm.add_preprocessing_fn(fn)

    def remove_preprocessing_fn(self, fn) -> None:
        fns = self.select_algorithm.get_algorithm_selector_cache().preprocessing_fns
        while fn in fns:
            fns.remove(fn)

    @staticmethod
    def flex_device_type(method, choices_obj, args: tuple, kwargs: dict):
        """The device_type argument of an InductorChoices.get_flex_* call, however the PyTorch
        version lays out the others (2.15's forward takes seq_len before dtype: choices.py)."""
        import inspect
        bound = inspect.signature(method).bind(choices_obj, *args, **kwargs)
        bound.apply_defaults()
        return bound.arguments.get("device_type", "cuda")

    def flex_candidates(self, choices_obj, kind: str, base: list, device_type) -> list:
        """Inductor's own list for the op (`base`: what InductorChoices returns for it), then, when it
        is the single default (no max-autotune), the heuristic's autotune list after it, larger
        tiles first: candidates for first-fit."""
        heur = choices_obj.get_config_heuristics(device_type)
        if self.config.max_autotune:
            return base
        extra = {"fwd": heur.flex_attn_fwd_autotune_configs, "bwd": heur.flex_attn_bwd_autotune_configs,
                 "decode": heur.flex_decode_autotune_configs}[kind]
        extra = sorted((c for c in extra if c not in base), key=_tile_size, reverse=True)
        return list(base) + extra


def _tile_size(conf) -> tuple:
    """Larger tiles and deeper pipelines first (faster where they fit), then fewer warps."""
    dims = [getattr(conf, f, 1) for f in ("block_m", "block_n", "block_m1", "block_n1")]
    area = 1
    for d in dims:
        area *= d or 1
    return (area, conf.num_stages, -conf.num_warps)


def _lower_configs(autotuner, source: str, targets: Iterable[str], t: "_Torch") -> list[dict]:
    out = []
    for cfg in autotuner.configs:
        fn, sig, constants, attrs, options = t.compile_pieces(autotuner, cfg)
        rec = {"params": {**template_params(source), **t.config_params(cfg)}, "ttgir": {}, "error": {}}
        for arch in targets:
            try:
                rec["ttgir"][arch] = sst.lower_compiled(fn, sig, constants, attrs, arch, options).ttgir
            except Exception as e:  # Triton refuses the config for this target (it would not compile)
                rec["error"][arch] = f"{type(e).__name__}: {e}".splitlines()[0]
        out.append(rec)
    return out


def lower_kernel_source(name: str, source: str, targets: Iterable[str], allow_untested: bool = False) -> list[dict]:
    """Every config of the output-code kernel `name` (its module `source`) lowered for each target:
    [{"params", "ttgir": {arch: text}, "error": {arch: message}}] (an error: Triton could not lower
    it for that target). Takes plain values: it also runs in Inductor's compile workers."""
    t = _Torch(allow_untested)
    return _lower_configs(t.source_kernel(name, source), source, list(targets), t)


def check_source(source: str, kernel_name: str, arch: str, device: str | None = None, any_target: bool = False,
                 keep_ttgir: bool = False, allow_untested: bool = False) -> dict:
    """Lowers the kernel `kernel_name` of one template choice's generated module (its `source`)
    for `arch` and judges it: {"verdict", "fits", "shared", "limit", "message", "params", "lower_s",
    "simulate_s"} (+ "ttgir"), or {"error": ...} when it cannot be lowered or judged here (an op
    scratchsim does not model, say): such a choice is kept and Inductor compiles it as it would.
    Takes plain values: it also runs in Inductor's compile workers (Pruner in_pool)."""
    t = _Torch(allow_untested)
    try:
        autotuner = getattr(sst.load_source_module(source, "inductor"), kernel_name)
        cfg = autotuner.configs[0]
        fn, sig, constants, attrs, options = t.compile_pieces(autotuner, cfg)
        lowered = sst.lower_compiled(fn, sig, constants, attrs, arch, options)
        t0 = time.perf_counter()
        v = judge(lowered.ttgir, arch, device, any_target=any_target, name=lowered.name,
                  triton_release=sst.installed_release())
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
    v.update(params={**template_params(source), **t.config_params(cfg)}, lower_s=lowered.seconds,
             simulate_s=time.perf_counter() - t0)
    if keep_ttgir:
        v["ttgir"] = lowered.ttgir
    return v


# Verdicts of this process, by (sha256 of the generated module, kernel, arch, device, any_target):
# Inductor names a template module by its source's hash, so ops of one shape share it, and a
# recompile (new shapes elsewhere, a second torch.compile) meets the same modules again.
_VERDICTS: dict = {}


class Pruner:
    """The preprocessing function install() registers. Drops every Triton template choice whose
    kernel cannot fit on the target (Triton's figure); keeps ATen and other choices. With
    first_fit (the FlexAttention chooser), an op of FLEX_TEMPLATES keeps only its first fitting
    choice. .stats, .dropped [(template, params, verdict)], .unchecked [(template, params, why)],
    .chosen, .records (with keep_ttgir).

    Cost: each check runs Triton's front end and TTGIR passes, in this process unless in_pool
    (then in Inductor's compile workers, when up). A choice is checked once per process
    (_VERDICTS). An op's choices are checked in rounds per family (template, generated source up
    to its tile sizes and stages, num_warps), the largest first; one that a fitting choice of its
    family dominates is kept unchecked, as is any left when the op's budget_s is spent. Only a
    lowered figure drops a choice, unless infer_unfit: then also one that dominates a choice that
    does not fit. fast: _decide_fast (docs/inductor.md, "The fast path")."""

    def __init__(self, torch_side: _Torch, target, device, any_target, on_empty, keep_ttgir, budget_s, dominance,
                 infer_unfit=False, in_pool=False, fast=False, workers=0):
        self._t = torch_side
        self.arch = sst._arch(sst.target_of(target))
        self.device = device
        self.any_target = bool(any_target)
        if device is not None:
            arch = scratchsim.device(device).get("arch")
            if arch != self.arch and not self.any_target:
                raise Error(f"device '{device}' is {arch}, the target {self.arch}: name a device of the target "
                            "(or any_target=True to judge it there anyway)")
        if on_empty not in ("raise", "keep"):
            raise Error("on_empty: 'raise' or 'keep'")
        self.on_empty = on_empty
        self.keep_ttgir = keep_ttgir
        self.budget_s = budget_s
        self.dominance = bool(dominance)
        self.fast = bool(fast)
        self.infer_unfit = bool(infer_unfit) or self.fast
        self.in_pool = bool(in_pool)
        self.first_fit = False
        self.dropped: list = []
        self.unchecked: list = []
        self.chosen: list = []
        self.records: list = []
        self.stats = {"calls": 0, "choices": 0, "checked": 0, "cached": 0, "dominated": 0, "inferred": 0, "over_budget": 0,
                      "dropped": 0, "kept": 0, "errors": 0, "lower_s": 0.0, "simulate_s": 0.0, "wall_s": 0.0, "in_pool": 0}
        self._verdict: dict = {}   # id(choice) -> verdict (None: kept unchecked)
        self._undo: list = []  # what uninstall() restores (choose_flex's choices class)
        self._settled: dict = {}   # fast: kin family, or template -> {_tiles(params): over the limit}
        self._over_seen: set = set()  # fast: families with a lowered DOES_NOT_FIT
        self._figures: dict = {}     # fast: family -> [(params, shared, limit)] lowered so far
        # fast with workers: a pool of our own, started now so that it is warm by the first op;
        # fast with in_pool: Inductor's compile workers, started now for the same reason.
        self._pool = None
        if self.fast and workers:
            self._pool = _LowerPool(workers, self.arch)
        elif self.fast and self.in_pool and torch_side is not None:
            self._pool = _InductorPool(torch_side)
        if self._pool:
            self._undo.append(self._pool.close)

    def _source(self, choice) -> str:
        with open(choice.bmreq.module_path) as f:
            return f.read()

    def _check(self, batch: list) -> list:
        """The verdicts of [(choice, template, source, params)]: from this process's cache, else
        lowered and judged (in Inductor's compile workers with in_pool when they are up)."""
        keys, todo = self._todo(batch)
        results, pooled = _in_pool(self._t, check_source, [self._args(batch[i]) for i in todo], self.in_pool)
        self.stats["in_pool"] += pooled
        return self._finish(batch, keys, todo, results)

    def _todo(self, batch: list) -> tuple[list, list]:
        """(cache keys of the batch, the indices not in this process's cache)."""
        keys = [(_digest(src), c.bmreq.kernel_name, self.arch, self.device, self.any_target) for c, _, src, _ in batch]
        todo = [i for i, k in enumerate(keys) if k not in _VERDICTS or (self.keep_ttgir and "ttgir" not in _VERDICTS[k]
                                                                        and "error" not in _VERDICTS[k])]
        self.stats["cached"] += len(batch) - len(todo)
        return keys, todo

    def _args(self, entry) -> tuple:
        """check_source's arguments for an entry (plain values: they also travel to worker processes)."""
        return entry[2], entry[0].bmreq.kernel_name, self.arch, self.device, self.any_target, self.keep_ttgir, True

    def _finish(self, batch: list, keys: list, todo: list, results: list) -> list:
        """Stores the lowered results of batch[todo] and returns every entry's verdict (None: not checked)."""
        for i, v in zip(todo, results):
            _VERDICTS[keys[i]] = v
            if "error" not in v:
                self.stats["checked"] += 1
                self.stats["lower_s"] += v["lower_s"]
                self.stats["simulate_s"] += v["simulate_s"]
                if self.keep_ttgir:
                    self.records.append({"template": batch[i][1], "params": v["params"], "verdict": v["verdict"],
                                         "shared": v["shared"], "source": batch[i][2], "ttgir": {self.arch: v["ttgir"]}})
        out = []
        for (choice, template, _, _), key in zip(batch, keys):
            v = _VERDICTS[key]
            if "error" in v:
                self.stats["errors"] += 1
                log.warning("scratchsim: %s not checked (Inductor compiles it as usual): %s", template, v["error"])
                out.append(None)
            else:
                out.append({**{k: x for k, x in v.items() if k not in ("ttgir", "lower_s", "simulate_s")},
                            "template": template})
            self._verdict[id(choice)] = out[-1]
        return out

    def _check_within(self, batch: list, deadline: float) -> dict:
        """Verdicts {id(entry): verdict} of a round. Lowered here, one at a time, so that the budget
        bounds the checking even within a round (a round of maximal choices can be dozens of
        lowerings at about a second each); the entries past the deadline get none. In the pool,
        the round goes as one."""
        if self.in_pool or self.budget_s is None:
            return dict(zip(map(id, batch), self._check(batch)))
        verdicts = {}
        for e in batch:
            if time.perf_counter() > deadline:
                break
            verdicts[id(e)] = self._check([e])[0]
        return verdicts

    def _skip(self, choice, template: str, params: dict, why: str) -> None:
        self.stats["over_budget" if why == "budget" else "dominated"] += 1
        self.unchecked.append((template, params, why))
        self._verdict[id(choice)] = None

    def _guess(self, family: tuple, undecided: list) -> dict | None:
        """fast: frontier_pick's guess for a family: how its kin (other num_warps) settled, else the
        last family of its template (another op, shape), as long as no lowering of this family has
        contradicted it; else, with _FIT_MIN_FIGURES lowered figures of the family and its kin,
        _fitted_guess over them; else, until a lowering says otherwise, that all fit (most of
        Inductor's default spaces do: then the maximal choices, as few as possible, settle it);
        once one does not fit, _scaled_guess from the family's figures."""
        settled = self._settled.get(_kin(family)) or self._settled.get(family[0])
        own = self._figures.get(family, [])
        if settled and all(settled.get(_tiles(p)) in (None, shared > limit) for p, shared, limit in own):
            rest = None if family in self._over_seen else False
            return {_tiles(e[3]): settled.get(_tiles(e[3]), rest) for e in undecided}
        figures = [fig for g, figs in self._figures.items() if _kin(g) == _kin(family) for fig in figs]
        if len(figures) >= _FIT_MIN_FIGURES:
            over = _fitted_guess(figures)
            return {_tiles(e[3]): over(e[3]) for e in undecided}
        if family not in self._over_seen:
            return {_tiles(e[3]): False for e in undecided}
        return {_tiles(e[3]): _scaled_guess(e[3], self._figures[family]) for e in undecided}

    def _next(self, undecided: list) -> list:
        """The choices of one family (sorted by size) to check next. Each choice that does not fit
        must be lowered to be dropped, so the maximal ones (none of the rest dominates them) go
        next: each that FITS settles all it dominates. With infer_unfit (and not in_pool) the
        middle-sized one goes next, each verdict then settling about half of the rest."""
        if not self.dominance:
            return undecided[:]
        if self.infer_unfit and not self.in_pool:
            return [undecided[len(undecided) // 2]]
        return [e for e in undecided if not any(o is not e and dominates(o[3], e[3]) and o[3] != e[3] for o in undecided)]

    def _decide(self, entries: list, deadline: float) -> None:
        """Verdicts for an op's template choices [(choice, template, source, params)], in rounds:
        each round checks every family's _next() together; a FITS keeps unchecked every choice of
        its family it dominates, and with infer_unfit a DOES_NOT_FIT drops every choice that
        dominates it (_inferred). fast: _decide_fast."""
        families: dict = {}
        for e in entries:
            families.setdefault((e[1], _skeleton(e[2]), e[3].get("num_warps")), []).append(e)
        if self.fast:
            return self._decide_fast(families, deadline)
        undecided = {f: sorted(m, key=lambda e: _size(e[3])) for f, m in families.items()}
        while any(undecided.values()):
            if self.budget_s is not None and time.perf_counter() > deadline:
                for e in [e for members in undecided.values() for e in members]:
                    self._skip(e[0], e[1], e[3], "budget")
                return
            rounds = {f: self._next(m) for f, m in undecided.items() if m}
            batch = [e for picks in rounds.values() for e in picks]
            verdicts = self._check_within(batch, deadline)
            for f, picks in rounds.items():
                rest = [e for e in undecided[f] if all(e is not p for p in picks)]
                for e in picks:
                    if id(e) not in verdicts:
                        self._skip(e[0], e[1], e[3], "budget")
                        continue
                    rest = self._apply(e, verdicts[id(e)], rest)
                undecided[f] = rest

    def _apply(self, e, v: dict | None, rest: list) -> list:
        """The entries of `rest` (e's family) that e's verdict v leaves undecided: a FITS keeps
        unchecked those it dominates, with infer_unfit a DOES_NOT_FIT drops those dominating it."""
        if v is None or not self.dominance or v["verdict"] == "AT_RISK":
            return rest
        keep = []
        for o in rest:
            if v["verdict"] == "FITS" and dominates(e[3], o[3]):
                self._skip(o[0], o[1], o[3], "dominated")
            elif v["verdict"] == "DOES_NOT_FIT" and self.infer_unfit and dominates(o[3], e[3]):
                self.stats["inferred"] += 1
                self._verdict[id(o[0])] = {**_inferred(v, o[3]), "template": o[1]}
            else:
                keep.append(o)
        return keep

    def _decide_fast(self, families: dict, deadline: float) -> None:
        """fast: the families one after another (each settled one its kin's guess), each lowering
        the one frontier_pick names among the choices not comparable to one being lowered; with
        workers, that many in flight at once in the pool, else one at a time here. The budget is
        read before each lowering and bounds the wait for the pool; until the pool is warm, the
        lowerings run here."""
        undecided = {f: list(m) for f, m in families.items()}
        flight: dict = {}   # future -> (family, entry)
        while any(undecided.values()):
            now = time.perf_counter()
            if self.budget_s is not None and now > deadline:
                break
            pool = self._pool if self._pool and self._pool.ready() else None
            while len(flight) < (pool.width if pool else 1):
                pick = self._pick(undecided, flight.values())
                if pick is None:
                    break
                flight[self._lower(pick[1], pool)] = pick
            if not flight:
                break
            done, _ = concurrent.futures.wait(flight, None if self.budget_s is None else max(0.0, deadline - now),
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                f, e = flight.pop(fut)
                v = self._verdict_of(e, fut)
                if v is not None and v["verdict"] == "DOES_NOT_FIT":
                    self._over_seen.add(f)
                if v is not None and v.get("shared") is not None:
                    self._figures.setdefault(f, []).append((e[3], v["shared"], v["limit"]))
                undecided[f] = self._apply(e, v, [o for o in undecided[f] if o is not e])
                if not undecided[f] and not any(g == f for g, _ in flight.values()):
                    self._settled[_kin(f)] = self._settled[f[0]] = {
                        _tiles(o[3]): (self._verdict.get(id(o[0])) or {}).get("verdict") == "DOES_NOT_FIT"
                        for o in families[f]}
        for fut, (f, e) in flight.items():
            fut.cancel()
        for e in [e for members in undecided.values() for e in members]:
            self._skip(e[0], e[1], e[3], "budget")

    def _pick(self, undecided: dict, flying) -> tuple | None:
        """(family, entry) to lower next: in the first family with a choice neither being lowered
        nor comparable to one that is, frontier_pick's."""
        for f, members in undecided.items():
            busy = [e for g, e in flying if g == f]
            free = [e for e in members if all(e is not b and not dominates(e[3], b[3]) and not dominates(b[3], e[3])
                                              for b in busy)]
            if free:
                return f, free[frontier_pick([e[3] for e in free], self._guess(f, free))]
        return None

    def _lower(self, e, pool) -> concurrent.futures.Future:
        """The lowering of entry e: done already when cached or lowered here, else in the pool."""
        fut = concurrent.futures.Future()
        if pool is None:
            fut.set_result(self._check([e])[0])
            return fut
        keys, todo = self._todo([e])
        if not todo:
            fut.set_result(self._finish([e], keys, [], [])[0])
            return fut
        fut = pool.submit(check_source, *self._args(e))
        fut.scratchsim_keys = keys
        return fut

    def _verdict_of(self, e, fut) -> dict | None:
        """An entry's verdict from its finished lowering; a pool that failed it: lowered here."""
        keys = getattr(fut, "scratchsim_keys", None)
        if keys is None:
            return fut.result()
        try:
            result = fut.result()
        except Exception as exc:
            log.debug("scratchsim: a pool lowering failed (%s); lowering it here", exc)
            return self._check([e])[0]
        self.stats["in_pool"] += 1
        return self._finish([e], keys, [0], [result])[0]

    def _first_fit(self, entries: list):
        """The chooser: the op's FlexAttention choices checked in Inductor's order until one FITS."""
        at_risk = None
        for e in entries:
            v, = self._check([e])
            if v is not None and v["verdict"] == "FITS":
                return e[0]
            if v is not None and v["verdict"] == "AT_RISK" and at_risk is None:
                at_risk = e[0]
        return at_risk

    def verdict(self, choice) -> dict | None:
        """The verdict of a choice of the last op (None: not a Triton template, or kept unchecked)."""
        return self._verdict.get(id(choice))

    def __call__(self, choices):
        t0 = time.perf_counter()
        self.stats["calls"] += 1
        self.stats["choices"] += len(choices)
        self._verdict = {}
        entries = []
        for c in choices:
            template = self._t.template_name(c)
            if template is not None:
                source = self._source(c)
                entries.append((c, template, source, {**template_params(source), **_decorator_params(source)}))
        flex = [e for e in entries if e[1] in FLEX_TEMPLATES] if self.first_fit and not self._t.config.max_autotune else []
        flex_ids = {id(e[0]) for e in flex}
        pick = self._first_fit(flex) if flex else None
        self._decide([e for e in entries if id(e[0]) not in flex_ids], t0 + (self.budget_s or 0.0))
        kept, dropped = prune(choices, self.verdict)
        if flex:
            if pick is not None:
                kept = [c for c in kept if id(c) not in flex_ids or c is pick]
                self.chosen.append(self.verdict(pick))
        for choice, v in dropped:
            self.dropped.append((v["template"], v["params"], v))
            log.warning("scratchsim: dropping %s %s before compiling: %s", v["template"], v["params"], v["message"])
        self.stats["dropped"] += len(dropped)
        if not kept:
            templates = sorted({v["template"] for _, v in dropped})
            message = (f"scratchsim: none of the {len(dropped)} {'/'.join(templates)} configs fits on "
                       f"{self.device or sst.device_for_arch(self.arch)} ({dropped[0][1]['message']})")
            if self.on_empty == "raise":
                raise Error(message)
            log.warning("%s; keeping them all", message)
            kept = list(choices)
        self.stats["kept"] += len(kept)
        self.stats["wall_s"] += time.perf_counter() - t0
        return kept

    def uninstall(self) -> None:
        self._t.remove_preprocessing_fn(self)
        while self._undo:
            self._undo.pop()()


def install(target=None, device: str | None = None, *, any_target: bool = False, on_empty: str = "raise",
            keep_ttgir: bool = False, budget_s: float | None = 30.0, dominance: bool = True,
            infer_unfit: bool = False, in_pool: bool = False, fast: bool = True, workers: int = 0,
            allow_untested: bool = False) -> Pruner:
    """Registers a Pruner with Inductor (torch._inductor.select_algorithm.add_preprocessing_fn):
    from now on every autotune_select_algorithm (mm, bmm, addmm, flex_attention and its backward,
    flex_decoding, ...) drops the Triton template choices that cannot fit on `target` (None: the
    local GPU; "sm_90", "sm_89", "gfx942", ...) judged on `device` (None: the target's model;
    "rtx4090" for sm_89) before any of them is compiled. on_empty: when no choice is left, "raise"
    a scratchsim.Error naming why, or "keep" them all. keep_ttgir: keep each checked kernel's
    source and TTGIR in .records. budget_s: the checking time one op may take (None: no bound);
    the choices left when it is spent are kept unchecked. dominance: keep unchecked a choice that
    a fitting one of its family dominates (dominates()); infer_unfit: also drop, unlowered, a
    choice that dominates one that does not fit (its verdict says so: "inferred_from"). in_pool:
    lower each round of checks in Inductor's compile workers when they are up (with fast: keep as
    many lowerings in flight there as it has workers, and start them here). fast (the default;
    False: the rounds of Pruner._decide): settle each
    family with few lowerings (frontier_pick: bisect the dominance order, take the frontier of a
    settled kin family as the first guess) and drop by dominance as infer_unfit does; every drop is
    Triton's figure or dominates one (docs/inductor.md, "The fast path"); with workers=N, N
    lowerings at once in spawned processes of our own, started here. A device of
    another architecture than the target is an Error unless any_target. Pruner.uninstall()
    removes it."""
    pruner = Pruner(_Torch(allow_untested), target, device, any_target, on_empty, keep_ttgir, budget_s, dominance,
                    infer_unfit, in_pool, fast, workers)
    pruner._t.add_preprocessing_fn(pruner)
    pruner._t.use_workers_ptxas()
    return pruner


def choose_flex(target=None, device: str | None = None, *, any_target: bool = False,
                allow_untested: bool = False) -> Pruner:
    """The FlexAttention config chooser: outside max-autotune, FlexAttention (forward, backward,
    decoding) compiles one default config, which may not fit the GPU (pytorch#133254: the backward
    asks an RTX 4090 for 131074 B of its 101376). This widens its candidates to Inductor's autotune
    list after the default (through torch._inductor.config.inductor_choices_class) and keeps the
    first that fits on the target, so only that one is compiled. Under max-autotune it prunes as
    install() does. Returns the Pruner (.chosen: the verdict of each pick); its uninstall() also
    puts Inductor's choices back."""
    pruner = install(target, device, any_target=any_target, allow_untested=allow_untested)
    pruner.first_fit = True
    t = pruner._t
    from torch._inductor.choices import InductorChoices

    class FitChoices(InductorChoices):
        # Arguments passed through as Inductor gives them: 2.11 calls the forward with (head_dim,
        # dtype, device_type), 2.15 with (head_dim, seq_len, dtype, device_type).
        def get_flex_attention_fwd_configs(self, *args, **kwargs):
            base = super().get_flex_attention_fwd_configs(*args, **kwargs)
            dev = t.flex_device_type(InductorChoices.get_flex_attention_fwd_configs, self, args, kwargs)
            return t.flex_candidates(self, "fwd", base, dev)

        def get_flex_attention_bwd_configs(self, *args, **kwargs):
            base = super().get_flex_attention_bwd_configs(*args, **kwargs)
            dev = t.flex_device_type(InductorChoices.get_flex_attention_bwd_configs, self, args, kwargs)
            return t.flex_candidates(self, "bwd", base, dev)

        def get_flex_decode_configs(self, *args, **kwargs):
            base = super().get_flex_decode_configs(*args, **kwargs)
            dev = t.flex_device_type(InductorChoices.get_flex_decode_configs, self, args, kwargs)
            return t.flex_candidates(self, "decode", base, dev)

        def uuid(self):
            # 2.15 hashes config.inductor_choices_class into the FX graph cache key through uuid()
            # (choices.py inductor_choices_cache_key; without it every compile raises RuntimeError).
            # The chooser changes which config is compiled, so the key names what it judges for.
            return ("scratchsim.inductor.FitChoices", pruner.arch, pruner.device, pruner.any_target)

    from torch._inductor.virtualized import V
    # Set before inductor_choices_class: where this thread has no handler yet, set_choices_handler
    # makes the prior one from inductor_choices_class (virtualized.py _choices_default), which
    # uninstall() puts back; made after it, that prior would be a FitChoices.
    restore_handler = V.set_choices_handler(FitChoices())  # this thread's, if Inductor made one already
    previous = t.config.inductor_choices_class
    t.config.inductor_choices_class = FitChoices

    def undo():
        t.config.inductor_choices_class = previous
        restore_handler.__enter__()  # the context manager set_choices_handler returns puts the old one back
        restore_handler.__exit__(None, None, None)
    pruner._undo.append(undo)
    return pruner


def flex_kernel_options(params: Mapping[str, Any]) -> dict:
    """A chosen config's parameters as flex_attention(kernel_options=...) takes them, to pin it
    without the chooser (forward: BLOCK_M, BLOCK_N; backward: BLOCK_M1..BLOCK_N2; num_warps,
    num_stages)."""
    keep = ("BLOCK_M", "BLOCK_N", "BLOCK_M1", "BLOCK_N1", "BLOCK_M2", "BLOCK_N2", "num_warps", "num_stages")
    return {k: params[k] for k in keep if k in params}


_WARM_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def warm(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
"""


def _warm_worker(arch: str) -> None:
    """A lowering worker's start: what check_source imports (Inductor's template runtime, Triton's
    front end and the target's backend, scratchsim), done by one small lowering before the first
    op needs it."""
    importlib.import_module("torch._inductor.runtime.triton_heuristics")
    try:
        fn = sst.load_source_module(_WARM_KERNEL, "warm").warm
        sst.lower_compiled(fn, {"x_ptr": "*fp32"}, {}, {}, arch, {"num_warps": 4, "num_stages": 1})
    except Exception as e:  # the worker still lowers; its first lowering just pays for this
        log.debug("scratchsim: warming a lowering worker failed (%s)", e)


class _LowerPool:
    """install(fast=True, workers=N): N spawned worker processes for check_source, started at
    install so that their imports are done before Inductor's autotuning starts."""

    def __init__(self, workers: int, arch: str):
        import multiprocessing
        self.width = int(workers)
        self._ex = concurrent.futures.ProcessPoolExecutor(self.width, mp_context=multiprocessing.get_context("spawn"),
                                                          initializer=_warm_worker, initargs=(arch,))
        # Each worker starts (and warms) now, not at the first op.
        self._started = [self._ex.submit(int) for _ in range(self.width)]

    def ready(self) -> bool:
        """Whether the start tasks are done (each by a worker that has warmed): until then the
        Pruner lowers here, not behind workers still importing."""
        return all(f.done() for f in self._started)

    def wait_ready(self) -> None:
        concurrent.futures.wait(self._started)

    def submit(self, fn, *args) -> concurrent.futures.Future:
        return self._ex.submit(fn, *args)

    def close(self) -> None:
        self._ex.shutdown(wait=False, cancel_futures=True)


class _InductorPool:
    """install(fast=True, in_pool=True): the fast path's lowerings in Inductor's own compile workers,
    behind _LowerPool's interface. Asking whether the pool is ready starts its workers, so they are
    started at install() and warm while Dynamo traces (Inductor itself starts them only at its first
    precompile). Until they are, the Pruner lowers in this process. Closing leaves the pool to
    Inductor."""

    def __init__(self, t: "_Torch"):
        self._t = t
        self.width = max(1, t.compile_threads())
        self._pool = None
        self.ready()

    def ready(self) -> bool:
        if self._pool is None and self.width > 1:
            self._pool = self._t.compile_pool()
        return self._pool is not None

    def submit(self, fn, *args) -> concurrent.futures.Future:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        pass


def _in_pool(t: "_Torch", fn, argsets: Sequence[tuple], use_pool: bool) -> list:
    """fn(*args) for each args, in Inductor's compile worker pool when it is up, else here; a task
    the pool fails is run here. For work after a compile (the model report): during one, the pool
    is Inductor's (Pruner)."""
    pool = t.compile_pool() if use_pool and len(argsets) >= 2 else None
    futures = []
    if pool is not None:
        try:
            futures = [pool.submit(fn, *args) for args in argsets]
        except Exception as e:
            log.debug("scratchsim: Inductor's pool refused the work (%s); running it here", e)
            futures = []
    out = []
    for i, args in enumerate(argsets):
        result = None
        if i < len(futures):
            try:
                result = futures[i].result()
            except Exception as e:
                log.debug("scratchsim: a pool task failed (%s); running it here", e)
        out.append(fn(*args) if result is None else result)
    return out, len(futures)



def output_code_records(codes: Iterable[str], targets: Iterable[str] = TARGETS, *, in_pool: bool = True,
                        allow_untested: bool = False) -> list[dict]:
    """The records report() takes, from Inductor output-code modules: every Triton kernel in them,
    each config lowered for each target (in Inductor's compile workers when they are up)."""
    t = _Torch(allow_untested)
    targets = list(targets)
    kernels = [k for code in codes for k in kernels_from_output_code(code)]
    configs, _ = _in_pool(t, lower_kernel_source, [(n, src, targets, True) for n, src in kernels], in_pool)
    release = sst.installed_release()  # the Triton that lowered every config above
    return [{"name": n, "source": src, "configs": c, "triton_release": release} for (n, src), c in zip(kernels, configs)]


def model_report(fn: Callable, *args, targets: Iterable[str] = TARGETS, devices: Mapping[str, str] | None = None,
                 backward: bool = False, allow_untested: bool = False, keep_records: bool = False, **kwargs) -> dict:
    """Runs `fn(*args, **kwargs)` (a torch.compile'd callable; with backward, .sum().backward() on
    its result too), collects Inductor's output code, lowers every Triton kernel in it for each
    target and reports (report()). keep_records adds "records" (the sources and TTGIR)."""
    t = _Torch(allow_untested)
    from torch._inductor.utils import run_and_get_code

    def run():
        out = fn(*args, **kwargs)
        if backward:
            out.sum().backward()
        return out

    _, codes = run_and_get_code(run)
    records = output_code_records(codes, targets, allow_untested=allow_untested)
    rep = report(records, targets, devices)
    rep["torch"] = t.version
    if keep_records:
        rep["records"] = records
    return rep


def dumps(rep: Mapping) -> str:
    """The report as JSON (records' TTGIR left out)."""
    return json.dumps({k: v for k, v in rep.items() if k != "records"}, indent=1, sort_keys=True)
