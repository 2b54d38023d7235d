"""The product modules bench/tpu's scripts run, so that they measure what ships: libtpu's
ahead-of-time runner (backends/tpu/tpu_aot.py, what `simulate --confirm` runs) and the Pallas
tracer and body reader (scratchsim._pallas_trace, scratchsim._pallas_body).

  from product import tpu_aot            # first where libtpu compiles: it sets libtpu's environment
  from product import pallas_trace, pallas_body

The tracer comes from this tree's sim/python/scratchsim, not an installed wheel's (which may
predate the tracer being measured), unless the process imported scratchsim itself: its modules are
plain Python and need nothing of the package's native module. Product code never imports this
(tests/layering_test.sh).
"""
import importlib
import os
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "backends", "tpu"))


def _scratchsim():
  """The package's plain-Python submodules from this tree (not an installed wheel's, which may
  predate the tracer these tools are run to exercise), as a package without its __init__ (which
  loads the native module). A process that imported scratchsim itself (the Python tests) keeps
  the one it imported."""
  scratchsim = sys.modules.get("scratchsim")
  if scratchsim is None:
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
