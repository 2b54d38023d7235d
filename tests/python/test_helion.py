"""scratchsim.helion: the config filter on seed 002's GeGLU (needs helion, PyTorch and a GPU to
generate code for; skipped with the reason otherwise)."""
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Helion needs it)")
helion = pytest.importorskip("helion", reason="helion is not installed (pip install helion)")
if not torch.cuda.is_available():
    pytest.skip("Helion generates code for a CUDA device and none is here", allow_module_level=True)

import scratchsim.helion as ssh  # noqa: E402
from conftest import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "bench" / "python"))
import helion_geglu  # noqa: E402


def test_seed_002_configs_are_skipped_before_compiling():
    args = helion_geglu.args()
    kernel = helion.kernel(helion_geglu.geglu_mlp, static_shapes=True)
    filt = ssh.config_filter(kernel, args, target="sm_90", device="h100")
    assert filt(helion.Config(**helion_geglu.SEED_CONFIGS[0])) is None
    assert "Required: 526336" in filt.skipped[-1][1]
    assert filt(helion.Config(**helion_geglu.SEED_CONFIGS[1])) is None
    assert "Required: 1056768" in filt.skipped[-1][1]
