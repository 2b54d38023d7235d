"""scratchsim.helion's config filter without Helion: a stand-in for a bound Helion kernel whose
to_triton_code writes the Triton code Helion would (a @triton.jit kernel and host code that
launches it through _launcher), so the filter's own path, its to-fit search included, runs on
the CPU with Triton alone (test_helion.py runs the real thing where Helion is installed)."""
import types

import pytest

pytest.importorskip("triton", reason="Triton is not installed (pip install triton)")

import scratchsim.helion as ssh  # noqa: E402
import scratchsim.triton as sst  # noqa: E402

CODE = '''
import triton
import triton.language as tl


@triton.jit
def _helion_mm(a, b, c, K, _BLOCK_SIZE_0: tl.constexpr, _BLOCK_SIZE_1: tl.constexpr, _BLOCK_SIZE_2: tl.constexpr):
    offs_m = tl.program_id(0) * _BLOCK_SIZE_0 + tl.arange(0, _BLOCK_SIZE_0)
    offs_n = tl.program_id(1) * _BLOCK_SIZE_1 + tl.arange(0, _BLOCK_SIZE_1)
    offs_k = tl.arange(0, _BLOCK_SIZE_2)
    acc = tl.zeros((_BLOCK_SIZE_0, _BLOCK_SIZE_1), dtype=tl.float32)
    for k in range(0, K, _BLOCK_SIZE_2):
        x = tl.load(a + offs_m[:, None] * K + (k + offs_k)[None, :])
        y = tl.load(b + (k + offs_k)[:, None] * 4096 + offs_n[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + offs_m[:, None] * 4096 + offs_n[None, :], acc.to(tl.float16))


def mm(a, b, c, K, *, _launcher=None):
    _launcher(_helion_mm, (1, 1), a, b, c, K, {b0}, {b1}, {b2}, num_warps={w}, num_stages={s})
'''


class FakeBound:
    """What the filter uses of a helion BoundKernel: .kernel.name and to_triton_code(config)."""
    kernel = types.SimpleNamespace(name="mm")

    def to_triton_code(self, config):
        b0, b1, b2 = config["block_sizes"]
        return CODE.format(b0=b0, b1=b1, b2=b2, w=config["num_warps"], s=config["num_stages"])


ARGS = (sst.tensor("fp16"), sst.tensor("fp16"), sst.tensor("fp16"), 4096)


def test_the_filter_skips_a_config_over_the_limit_and_names_the_nearest_that_fit():
    filt = ssh.config_filter(FakeBound(), ARGS, target="sm_90", to_fit=2)
    ok = {"block_sizes": [64, 64, 32], "num_warps": 4, "num_stages": 3}
    assert filt(ok) is ok
    big = {"block_sizes": [256, 256, 128], "num_warps": 8, "num_stages": 4}
    assert filt(big) is None
    config, message = filt.skipped[-1]
    assert config is big and "Required: " in message and "; to fit: " in message
    record = filt.records[-1]
    entries = record["to_fit"]
    assert entries and record["to_fit_search"]["lowerings"] <= 16
    assert [(e["halvings"], -e["config"]["num_stages"]) for e in entries] == sorted(
        (e["halvings"], -e["config"]["num_stages"]) for e in entries)
    for e in entries:  # each a whole Helion config that the filter, asked again, keeps
        assert set(e["config"]) == set(big) and "estimate_us" not in e
        assert e["required_bytes"] <= e["limit_bytes"]
        assert filt(e["config"]) == e["config"]
    assert entries[0]["changes"].startswith("num_stages 4 -> ")
