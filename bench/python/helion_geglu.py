"""Seed 002 (shared/seeds/002): the Llama-MLP GeGLU kernel of Helion issue #470, for the Helion
part of gpu_measure.py. Helion raised `OutOfResources: shared memory, Required: 526336` (tiles
16/16) and `Required: 1056768` (32/32) at num_stages=3 on an H100.

The kernel is the seed's, written for today's Helion (the seed's hl.register_reduction_dim is
gone; a full-extent hl.zeros dimension is the same reduction block). measure() checks the seed's
configs and a few that fit with scratchsim.helion.config_filter (nothing compiled for the
skipped ones), then autotunes over an explicit config list with and without the filter.
"""
import time

import torch

import helion
import helion.language as hl

T, HIDDEN, INTERMEDIATE = 100, 512, 1524


def geglu_mlp(x: torch.Tensor, gate_proj: torch.Tensor, up_proj: torch.Tensor) -> torch.Tensor:
    t, h = x.size()
    h1, i = gate_proj.size()
    temp = torch.empty([t, i], device=x.device, dtype=torch.float32)
    k_beta = 1.41421356237309504880 * 1.12837916709551257390 * 0.5
    for tile_t in hl.tile(t):
        acc = hl.zeros([tile_t, i], dtype=torch.float32)
        ccc = hl.zeros([tile_t, i], dtype=torch.float32)
        for tile_h in hl.tile(h):
            x_tile = x[tile_t, tile_h]
            acc += torch.matmul(x_tile, gate_proj[tile_h, :])
            ccc += torch.matmul(x_tile, up_proj[tile_h, :])
        acc_2 = k_beta * ((acc ** 3) * 0.044715 + acc)
        acc_4 = 0.5 * acc * (1 + torch.tanh(acc_2))
        temp[tile_t, :] = acc_4 * ccc
    return temp


def args():
    x = torch.randn(T, HIDDEN, device="cuda", dtype=torch.float32)
    gate = torch.randn(HIDDEN, INTERMEDIATE, device="cuda", dtype=torch.float32)
    up = torch.randn(HIDDEN, INTERMEDIATE, device="cuda", dtype=torch.float32)
    return (x, gate, up)


SEED_CONFIGS = [dict(block_sizes=[16, 16], num_warps=4, num_stages=3),   # Required: 526336
                dict(block_sizes=[32, 32], num_warps=4, num_stages=3)]   # Required: 1056768
OTHER_CONFIGS = [dict(block_sizes=[16, 16], num_warps=4, num_stages=1), dict(block_sizes=[8, 16], num_warps=4,
                                                                           num_stages=2),
                 dict(block_sizes=[16, 32], num_warps=8, num_stages=2), dict(block_sizes=[64, 64], num_warps=8,
                                                                             num_stages=4),
                 # single-stage tiles that fit (the whole 2048-padded intermediate row is staged)
                 dict(block_sizes=[8, 16], num_warps=4, num_stages=1), dict(block_sizes=[16, 8], num_warps=4,
                                                                            num_stages=1),
                 dict(block_sizes=[8, 8], num_warps=4, num_stages=1), dict(block_sizes=[16, 16], num_warps=8,
                                                                           num_stages=1)]


def reference(x, gate_proj, up_proj):
    """The kernel in eager PyTorch: Helion's autotuning baseline (its default config, 32x32 tiles,
    needs more shared memory than the H100/H200 have, so Helion cannot compute its own)."""
    k_beta = 1.41421356237309504880 * 1.12837916709551257390 * 0.5
    acc = x @ gate_proj
    ccc = x @ up_proj
    return 0.5 * acc * (1 + torch.tanh(k_beta * ((acc ** 3) * 0.044715 + acc))) * ccc


def measure(budget_s):
    import scratchsim.helion as ssh
    a = args()
    from importlib import metadata
    out = {"helion": metadata.version("helion"), "configs": []}
    kernel = helion.kernel(geglu_mlp, static_shapes=True)
    bound = kernel.bind(a)
    filt = ssh.config_filter(bound, a)
    for c in SEED_CONFIGS + OTHER_CONFIGS:
        config = helion.Config(**c)
        t0 = time.perf_counter()
        kept = filt(config)
        out["configs"].append({"config": c, "kept": kept is not None, "filter_s": time.perf_counter() - t0,
                               "message": filt.skipped[-1][1] if kept is None and filt.skipped else ""})
    # Autotuning over the explicit list, without and with the filter.
    for use_filter in (False, True):
        configs = [helion.Config(**c) for c in SEED_CONFIGS + OTHER_CONFIGS]
        # The accuracy check compares with eager fp32 matmuls; the kernel's dots run in tf32 (2.3% of
        # the elements differ by more than 0.01 on every config), so it is off.
        settings = {"configs": configs, "static_shapes": True, "autotune_baseline_fn": reference,
                    "autotune_accuracy_check": False}
        f = ssh.config_filter() if use_filter else None
        if f is not None:
            settings["autotune_config_filter"] = f
        k = helion.kernel(geglu_mlp, **settings)
        t0 = time.perf_counter()
        try:
            k(*a)
            torch.cuda.synchronize()
            chosen = getattr(k.bind(a), "_config", None)
            result = f"ran; chosen config {chosen}"
        except Exception as e:
            result = f"{type(e).__name__}: {str(e)[:300]}"
        out["autotune_with_filter" if use_filter else "autotune_without_filter"] = {
            "wall_s": time.perf_counter() - t0, "result": result,
            "filter": None if f is None else {"stats": f.stats, "skipped": [(str(c), m) for c, m in f.skipped]}}
    return out
