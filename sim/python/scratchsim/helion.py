"""Helion: a config filter so that Helion's autotuner never compiles a config that cannot fit.

Helion's documented setting ``autotune_config_filter`` takes ``(config) -> config | None`` and
is called on every candidate before it is compiled or benchmarked; None skips it. The filter
here generates the Triton code Helion would compile for the config (BoundKernel.to_triton_code),
lowers each Triton kernel it launches to TTGIR only (scratchsim.triton: no LLVM, no ptxas) and
simulates it on the device: a config whose kernel cannot fit (seed 002's GeGLU with
``Required: 526336``) is skipped before compiling, with Triton's words logged.

    kernel = helion.kernel(geglu_mlp_fn)            # or @helion.kernel(...)
    kernel.settings.autotune_config_filter = scratchsim.helion.config_filter(kernel, args)
    kernel(*args)                                   # autotunes; unfit configs never compile

or, without the kernel at hand (the filter finds the autotuner's bound kernel and arguments):

    @helion.kernel(autotune_config_filter=scratchsim.helion.config_filter())
"""
from __future__ import annotations

import inspect
import logging
import time
from typing import Any, Sequence

import scratchsim
from scratchsim import Error
from scratchsim import _to_fit
from scratchsim import triton as sst

__all__ = ["config_filter", "check_config", "ConfigFilter"]

log = logging.getLogger("scratchsim.helion")


def _load_module(code: str):
    """Imports generated code from a file (@triton.jit reads its function's source)."""
    return sst.load_source_module(code, "helion")


class _Launch:
    def __init__(self, kernel, grid, args, kwargs):
        self.kernel, self.grid, self.args, self.kwargs = kernel, grid, args, kwargs


def _launches(bound, config, args: Sequence[Any]) -> list:
    """The Triton kernels (with their arguments and num_warps/num_stages) the generated host code
    launches for `config`, captured through its _launcher instead of launched."""
    code = bound.to_triton_code(config)
    module = _load_module(code)
    host = getattr(module, bound.kernel.name)
    captured: list = []

    def capture(triton_kernel, grid, *kargs, **kwargs):
        try:
            from helion.runtime.triton.launcher import compile_only_launch_args
            kargs, kwargs = compile_only_launch_args(*kargs, **kwargs)
        except ImportError:
            kwargs = {k: v for k, v in kwargs.items() if not k.startswith("_")}
        kwargs = {k: v for k, v in kwargs.items()
                  if k not in ("grid", "warmup", "launch_cooperative_grid", "ptx_options") and not k.startswith("_")}
        captured.append(_Launch(triton_kernel, grid, tuple(kargs), kwargs))
        return None

    host(*args, _launcher=capture)
    return captured


def check_config(kernel, args: Sequence[Any], config, *, target=None, device: str | None = None,
                 any_target: bool = False) -> list:
    """The scratchsim.triton.check report of every Triton kernel that `config` of the Helion
    `kernel` launches on `args` (lowered to TTGIR only, nothing compiled)."""
    bound = kernel if hasattr(kernel, "to_triton_code") else kernel.bind(tuple(args))
    reports = []
    for launch in _launches(bound, config, args):
        opts = {k: launch.kwargs[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in launch.kwargs}
        extra = {k: v for k, v in launch.kwargs.items() if k not in opts}
        reports.append(sst.check(launch.kernel, opts, launch.args, target, device=device, any_target=any_target,
                                 suggest=False, **extra))
    return reports


def _find_search():
    """The Helion search object calling the filter: it holds the bound kernel and the arguments."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            owner = frame.f_locals.get("self")
            kernel = getattr(owner, "kernel", None)
            if owner is not None and hasattr(kernel, "to_triton_code") and getattr(owner, "args", None) is not None:
                return owner
            frame = frame.f_back
    finally:
        del frame
    return None


def _merge(reports: Sequence[dict]) -> dict:
    """One config's verdict over every kernel it launches: fits when all do, Triton's words for
    the first that does not, the space that one overflowed, each space's largest figure."""
    bad = [r for r in reports if not r.get("fits")]
    space = None
    for v in (bad[0].get("violations", []) if bad else []):
        if v.get("fatal") and v.get("space"):
            space = v["space"]
            break
    spaces: dict = {}
    for r in reports:
        for s in r.get("spaces", []):
            peak, limit = spaces.get(s["space"], (0, s.get("limit_bytes")))
            spaces[s["space"]] = (max(peak, s.get("peak_bytes") or 0), limit)
    return {"fits": not bad, "message": sst._message(bad[0]) if bad else None, "space": space, "spaces": spaces}


def _knobs(config) -> dict:
    """A Helion config's knobs the to-fit search may lower: num_stages and each block size."""
    out = {f"block_sizes[{i}]": int(v) for i, v in enumerate(config.get("block_sizes") or [])}
    if config.get("num_stages") is not None:
        out["num_stages"] = int(config["num_stages"])
    return out


def _with_knobs(config, values: dict) -> dict:
    whole = dict(config)
    if "block_sizes" in whole:
        whole["block_sizes"] = [values.get(f"block_sizes[{i}]", v) for i, v in enumerate(whole["block_sizes"])]
    if "num_stages" in values:
        whole["num_stages"] = values["num_stages"]
    return whole


class ConfigFilter:
    """The callable config_filter() returns. .skipped: [(config, message)] (the message names the
    nearest configs that fit), .records: per skipped config its "to_fit" and "to_fit_search"
    (docs/python.md, "To fit"), .stats."""

    def __init__(self, kernel=None, args=None, target=None, device=None, on_error="keep", any_target=False,
                 to_fit=1, max_lowerings=_to_fit.MAX_LOWERINGS):
        self.kernel, self.args, self.target, self.device = kernel, args, target, device
        self.any_target = bool(any_target)
        if on_error not in ("keep", "skip"):
            raise Error("on_error: 'keep' or 'skip'")
        self.on_error = on_error
        self.skipped: list = []
        self.records: list = []
        self.to_fit, self.max_lowerings = to_fit, max_lowerings
        self.stats = {"calls": 0, "kept": 0, "skipped": 0, "errors": 0, "seconds": 0.0, "to_fit_lowered": 0}
        self._bound = None
        self._cache: dict = {}

    def _bound_kernel(self):
        if self.kernel is not None:
            if hasattr(self.kernel, "to_triton_code"):
                return self.kernel, self.args if self.args is not None else ()
            if self._bound is None:
                if self.args is None:
                    raise Error("config_filter: give the kernel's arguments (args=...)")
                self._bound = self.kernel.bind(tuple(self.args))
            return self._bound, self.args
        search = _find_search()
        if search is None:
            raise Error("config_filter: no kernel given and not called by Helion's autotuner")
        return search.kernel, search.args

    def _judge(self, bound, args, config) -> dict:
        """The merged verdict of one config, cached ("cached" where it cost no lowering)."""
        key = (id(bound), repr(config))
        if key in self._cache:
            return {**self._cache[key], "cached": True}
        verdict = _merge(check_config(bound, args, config, target=self.target, device=self.device,
                                      any_target=self.any_target))
        self._cache[key] = verdict
        return verdict

    def nearest(self, config, verdict: dict | None = None) -> dict:
        """The configs nearest to `config` that fit, through scratchsim.triton's search (fewest
        block-size halvings, then most stages kept), each generated and checked as Helion
        would compile it. {"to_fit": [...], "search": {...}}."""
        bound, args = self._bound_kernel()
        original = verdict or self._judge(bound, args, config)
        space = original.get("space")

        def as_fit(v):
            required, limit = v["spaces"].get(space, (None, None)) if space else (None, None)
            return _to_fit.Verdict(fits=v["fits"], required_bytes=required, limit_bytes=limit, space=space,
                                   lowered=not v.get("cached"), message=v.get("message"))

        def verify(values):
            try:
                candidate = type(config)(**_with_knobs(config, values))
                return as_fit(self._judge(bound, args, candidate))
            except Error:
                raise
            except Exception as e:  # Helion could not generate the candidate: not a config that fits
                return _to_fit.Verdict(fits=False, required_bytes=None, limit_bytes=None, message=str(e))
        values = _knobs(config)
        tiles = _to_fit.tile_knobs({k: v for k, v in values.items() if k != "num_stages"}, None)
        result = _to_fit.nearest(values, stage="num_stages" if "num_stages" in values else None, tiles=tiles,
                                 verify=verify, build=lambda vals: _with_knobs(config, vals), want=self.to_fit,
                                 max_lowerings=self.max_lowerings, original=as_fit(original))
        result["search"]["estimate"] = "absent: Helion's configs map to no planner graph"
        self.stats["to_fit_lowered"] += result["search"]["lowerings"]
        return result

    def __call__(self, config):
        self.stats["calls"] += 1
        t0 = time.perf_counter()
        try:
            bound, args = self._bound_kernel()
            judged = self._judge(bound, args, config)
            verdict = judged["message"]
            if verdict is not None and self.to_fit and judged["space"]:
                result = self.nearest(config, judged)
                self.records.append({"config": config, "message": verdict, "to_fit": result["to_fit"],
                                     "to_fit_search": result["search"]})
                if result["to_fit"]:
                    verdict += f"; to fit: {_to_fit.summary(result['to_fit'])}"
        except Error:
            raise
        except Exception as e:  # code generation failed: let Helion report it as it would
            self.stats["errors"] += 1
            log.debug("scratchsim: config %s not checked: %s", config, e)
            verdict = None if self.on_error == "keep" else f"{type(e).__name__}: {e}"
        finally:
            self.stats["seconds"] += time.perf_counter() - t0
        if verdict is None:
            self.stats["kept"] += 1
            return config
        self.stats["skipped"] += 1
        self.skipped.append((config, verdict))
        log.warning("scratchsim: skipping %s before compiling: %s", config, verdict)
        return None


def config_filter(kernel=None, args: Sequence[Any] | None = None, *, target=None, device: str | None = None,
                  on_error: str = "keep", any_target: bool = False, to_fit: int = 1,
                  max_lowerings: int = _to_fit.MAX_LOWERINGS) -> ConfigFilter:
    """A filter for Helion's ``autotune_config_filter``: returns the config when every Triton
    kernel it launches fits on the target (None: the local GPU, or "sm_90", "sm_100", ...) and
    None (skip: never compiled) when one cannot fit. kernel/args: the helion kernel and the
    arguments it is autotuned on (a BoundKernel needs no args); without them the filter uses the
    calling autotuner's. on_error: a config whose code cannot be generated is kept ("keep", Helion
    then reports it as usual) or skipped ("skip"). A device of another architecture than the
    target is an Error unless any_target, as for scratchsim.triton.check. to_fit: a skipped
    config's record (.records) and logged message name its `to_fit` nearest configs that fit,
    each generated and checked (at most max_lowerings per search; 0: none)."""
    return ConfigFilter(kernel, args, target, device, on_error, any_target, to_fit, max_lowerings)
