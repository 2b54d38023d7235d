"""The product modules bench/tpu's scripts run, so that they measure what ships: libtpu's
ahead-of-time runner (backends/tpu/tpu_aot.py, what `simulate --confirm` runs) and the Pallas
tracer and body reader (scratchsim._pallas_trace, scratchsim._pallas_body).

  from product import tpu_aot            # first where libtpu compiles: it sets libtpu's environment
  from product import pallas_trace, pallas_body

The tracer comes from the scratchsim package where one is importable (pip install ., or an
editable install), else from this tree's sim/python/scratchsim: its modules are plain Python and
need nothing of the package's native module, which a tree without `pip install .` lacks. Product
code never imports this (tests/layering_test.sh).
"""
import importlib
import os
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "backends", "tpu"))


def _scratchsim():
  try:
    import scratchsim
  except ImportError:
    # The package's directory without its __init__ (which loads the native module): enough for
    # its plain-Python submodules.
    scratchsim = types.ModuleType("scratchsim")
    scratchsim.__path__ = [os.path.join(REPO, "sim", "python", "scratchsim")]
    sys.modules["scratchsim"] = scratchsim
  return scratchsim


def __getattr__(name):
  """tpu_aot, pallas_trace and pallas_body, each imported on first use (tpu_aot sets libtpu's
  environment when it is imported, so a script that needs only the tracer does not)."""
  if name == "tpu_aot":
    return importlib.import_module("tpu_aot")
  if name in ("pallas_trace", "pallas_body"):
    _scratchsim()
    return importlib.import_module(f"scratchsim._{name}")
  raise AttributeError(f"module 'product' has no attribute '{name}'")
