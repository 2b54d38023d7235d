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

import hashlib
import importlib.util
import inspect
import logging
import os
import sys
import tempfile
import threading
import time
from typing import Any, Sequence

import scratchsim
from scratchsim import Error
from scratchsim import triton as sst

__all__ = ["config_filter", "check_config", "ConfigFilter"]

log = logging.getLogger("scratchsim.helion")
_MODULE_DIR = os.path.join(tempfile.gettempdir(), f"scratchsim_helion_{os.getuid()}")


def _load_module(code: str):
    """Imports generated code from a file (@triton.jit reads its function's source)."""
    digest = hashlib.sha256(code.encode()).hexdigest()[:24]
    os.makedirs(_MODULE_DIR, exist_ok=True)
    path = os.path.join(_MODULE_DIR, f"h{digest}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(code)
        os.replace(tmp, path)
    name = f"scratchsim_helion_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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


class ConfigFilter:
    """The callable config_filter() returns. .skipped: [(config, message)], .stats."""

    def __init__(self, kernel=None, args=None, target=None, device=None, on_error="keep", any_target=False):
        self.kernel, self.args, self.target, self.device = kernel, args, target, device
        self.any_target = bool(any_target)
        if on_error not in ("keep", "skip"):
            raise Error("on_error: 'keep' or 'skip'")
        self.on_error = on_error
        self.skipped: list = []
        self.stats = {"calls": 0, "kept": 0, "skipped": 0, "errors": 0, "seconds": 0.0}
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

    def __call__(self, config):
        self.stats["calls"] += 1
        t0 = time.perf_counter()
        try:
            bound, args = self._bound_kernel()
            key = (id(bound), repr(config))
            if key in self._cache:
                verdict = self._cache[key]
            else:
                reports = check_config(bound, args, config, target=self.target, device=self.device,
                                       any_target=self.any_target)
                bad = [r for r in reports if not r.get("fits")]
                verdict = None if not bad else sst._message(bad[0])
                self._cache[key] = verdict
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
                  on_error: str = "keep", any_target: bool = False) -> ConfigFilter:
    """A filter for Helion's ``autotune_config_filter``: returns the config when every Triton
    kernel it launches fits on the target (None: the local GPU, or "sm_90", "sm_100", ...) and
    None (skip: never compiled) when one cannot fit. kernel/args: the helion kernel and the
    arguments it is autotuned on (a BoundKernel needs no args); without them the filter uses the
    calling autotuner's. on_error: a config whose code cannot be generated is kept ("keep", Helion
    then reports it as usual) or skipped ("skip"). A device of another architecture than the
    target is an Error unless any_target, as for scratchsim.triton.check."""
    return ConfigFilter(kernel, args, target, device, on_error, any_target)
