#!/usr/bin/env python3
"""The cost of scratchsim.inductor's hook per template choice, on the CPU (no GPU): the template
modules Inductor generated on the GPU machine (tests/data/inductor) handed to a Pruner as the op's
choices, as autotune_select_algorithm hands them, timed for every way of checking them.

    python3 bench/inductor/hook_cost.py [--json FILE] [--space D] [--only flex,block] [--modes fast,...]
    python3 bench/inductor/hook_cost.py --space D [--backward] --record FILE   # every config's exact figure

Each mode prints: lowered (exact checks), decided by bound (dominance: fits / over), by estimate
(always 0: no estimate decides, docs/inductor.md), dropped, and the hook's wall time.

Needs PyTorch 2.11 and Triton 3.6 (the Pruner loads each module: Inductor's triton_heuristics) and
scratchsim. Modes, each in a fresh verdict cache:
  every      every choice lowered and judged, largest first (the hook before the change: what it
             did per choice, in this process)
  dominance  the default hook: largest first per family, a choice a fitting one dominates
             kept unchecked
  infer      dominance and infer_unfit (a choice dominating one that does not fit dropped too;
             middle-sized first)
  fast       the fast path (install(fast=True)): a family at a time, the lowering frontier_pick
             names next, drops by dominance too; "by bound" counts the verdicts that dominance gave
  fastpoolN  the fast path with N spawned workers of its own (install(fast=True, workers=N); N
             defaults to 2), started and warm before the timing (their start: pool_start_s)
  again      the default hook a second time in the same process (a recompile): cached verdicts
  pool       the default hook with in_pool, in Inductor's compile workers (started and ready
             before the timing; each worker's first check imports scratchsim and Triton's
             front end inside the timing, as in a compile)
--space D adds Inductor's exhaustive FlexAttention forward list (max_autotune_flex_search_space=
"EXHAUSTIVE", 144 configs) rendered from the recorded forward kernel of head dim D (128 or 256) and
judged for sm_90 on the H200 model: how many configs cannot fit, and the hook's cost there
(--only '' for that set alone); with --backward (D = 256), the exhaustive backward list instead
(900 configs, from the recorded backward kernel).
"""
import argparse
import json
import os
import platform
import re
import sys
import tarfile
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "inductor", "inductor_data.tar.gz")
OPS = {"flex": "run1/flex_on.records.json", "block": "run2/block_on.records.json"}


def load_records():
    with tarfile.open(DATA) as t:
        return {k: json.loads(t.extractfile(v).read()) for k, v in OPS.items()}


def choices_of(sources, directory):
    """Stand-ins for Inductor's TritonTemplateCallers: bmreq.module_path (the module on disk, named
    by its source as Inductor names it) and bmreq.kernel_name, all the hook reads of a choice."""
    import hashlib
    out = []
    for src in sources:
        path = os.path.join(directory, hashlib.sha256(src.encode()).hexdigest()[:32] + ".py")
        with open(path, "w") as f:
            f.write(src)
        name = re.search(r"^def (triton_\w+)\(", src, re.M).group(1)
        out.append(types.SimpleNamespace(bmreq=types.SimpleNamespace(module_path=path, kernel_name=name)))
    return out


def render(source, tiles, stages, warps):
    """A recorded FlexAttention module with another config, as Inductor renders its template: the
    tile constexprs (`tiles`: {"BLOCK_M": 64, ...}) in the kernel body and config_args,
    num_stages/num_warps in the decorator."""
    s = source
    for name, value in tiles.items():
        s = re.sub(rf"(\b{name}\s*:\s*tl\.constexpr\s*=\s*)\d+", rf"\g<1>{value}", s)
        s = re.sub(rf"'{name}': \d+", f"'{name}': {value}", s)
    s = re.sub(r"^num_stages=\d+,", f"num_stages={stages},", s, flags=re.M)
    return re.sub(r"^num_warps=\d+,", f"num_warps={warps},", s, flags=re.M)


def exhaustive_fwd_sources(flex_records, head_dim):
    """Inductor's exhaustive forward list rendered from the recorded forward at head_dim: the
    D=128 template module the hook saw, or the D=256 kernel of run1's flex256_off output code."""
    from torch._inductor.template_heuristics.triton import CUDAConfigHeuristic
    import scratchsim.inductor as ssi
    if head_dim == 128:
        base = next(r["source"] for r in flex_records if r["template"] == "flex_attention")
    else:
        with tarfile.open(DATA) as t:
            code = t.extractfile("run1/flex256_off.code.py").read().decode()
        base = next(src for name, src in ssi.kernels_from_output_code(code) if name.startswith("triton_tem_fused_flex_attention_")
                    and "backward" not in name)
        assert f"QK_HEAD_DIM : tl.constexpr = {head_dim}" in base
    confs = CUDAConfigHeuristic().exhaustive_flex_attn_fwd_configs
    return [render(base, {"BLOCK_M": c.block_m, "BLOCK_N": c.block_n}, c.num_stages, c.num_warps) for c in confs]


def exhaustive_bwd_sources(head_dim):
    """Inductor's exhaustive backward list (900 configs: BLOCK_M1/N1/M2/N2 16-128 where the kernel's
    static assertions allow, num_stages 1, 3, 4, num_warps 2, 4, 8) rendered from the backward
    kernel of run1's flex256_off output code (head dim 256, the only recorded backward at it)."""
    from torch._inductor.template_heuristics.triton import CUDAConfigHeuristic
    import scratchsim.inductor as ssi
    with tarfile.open(DATA) as t:
        code = t.extractfile("run1/flex256_off.code.py").read().decode()
    base = next(src for name, src in ssi.kernels_from_output_code(code)
                if name.startswith("triton_tem_fused_flex_attention_backward_"))
    assert f"QK_HEAD_DIM : tl.constexpr = {head_dim}" in base
    confs = CUDAConfigHeuristic().exhaustive_flex_attn_bwd_configs
    return [render(base, {"BLOCK_M1": c.block_m1, "BLOCK_N1": c.block_n1, "BLOCK_M2": c.block_m2,
                          "BLOCK_N2": c.block_n2}, c.num_stages, c.num_warps) for c in confs]


def record_space(ssi, sources, path, head_dim, backward=False):
    """Every config of an exhaustive space lowered and judged (Triton's exact figure): the truth
    the fast path's tests replay (tests/data/inductor/space_{fwd,bwd}_d<D>_sm90.json)."""
    rows = []
    for src in sources:
        v = ssi.check_source(src, re.search(r"^def (triton_\w+)\(", src, re.M).group(1), "sm_90", "h200")
        rows.append({"params": v["params"], "shared": v["shared"], "verdict": v["verdict"]})
        limit = v["limit"]
    import torch
    import triton
    way = "backward" if backward else "forward"
    out = {"what": f"Inductor's exhaustive FlexAttention {way} space (max_autotune_flex_search_space="
                   f"EXHAUSTIVE), head dim {head_dim}, bf16, rendered from run1's recorded {way} kernel; "
                   "each config lowered to TTGIR for sm_90 and judged on the h200 model (Triton's allocation)",
           "command": f"bench/inductor/hook_cost.py --space {head_dim}{' --backward' if backward else ''} "
                      f"--record {os.path.basename(path)}",
           "date_utc": time.strftime("%Y-%m-%d", time.gmtime()), "torch": torch.__version__,
           "triton": triton.__version__, "target": "sm_90", "device": "h200",
           "limit": limit}
    # One config a line: the file is read by people as well as by the tests.
    text = json.dumps(out, indent=1)[:-2] + ',\n "configs": [\n' + ",\n".join("  " + json.dumps(r) for r in rows)
    with open(path, "w") as f:
        f.write(text + "\n ]\n}\n")


def run_mode(ssi, mode, ops, target, device, in_pool=False):
    """ops: [(name, choices)]; each a call of the hook, as one autotune_select_algorithm."""
    if mode != "again":
        ssi._VERDICTS.clear()
    t = ssi._Torch()
    workers = int(mode[len("fastpool"):] or 2) if mode.startswith("fastpool") else 0
    t0 = time.perf_counter()
    p = ssi.Pruner(t, target, device, False, "keep", False, None, mode != "every", infer_unfit=(mode == "infer"),
                   in_pool=in_pool, fast=mode.startswith("fast"), workers=workers)
    if p._pool:
        p._pool.wait_ready()   # in a compile, the pool starts at install(), while Dynamo traces
    start_s = time.perf_counter() - t0
    per_op = {}
    for name, choices in ops:
        t0 = time.perf_counter()
        kept = p(choices)
        per_op[name] = {"choices": len(choices), "kept": len(kept), "wall_s": round(time.perf_counter() - t0, 3)}
    st = p.stats
    out = {"per_op": per_op, "wall_s": round(st["wall_s"], 3), "choices": st["choices"],
            "lowered": st["checked"], "cached": st["cached"], "dominated": st["dominated"],
            "inferred": st["inferred"], "dropped": st["dropped"],
            "per_choice_ms": round(1000 * st["wall_s"] / max(st["choices"], 1), 1),
            "lower_s": round(st["lower_s"], 3), "simulate_s": round(st["simulate_s"], 3), "in_pool": st["in_pool"],
            "dropped_params": [p_ for _, p_, _ in p.dropped], "workers": workers, "pool_start_s": round(start_s, 3)}
    if p._pool:
        p._pool.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--only", default="flex,block")
    ap.add_argument("--space", type=int, choices=(128, 256), help="head dim of the exhaustive forward space")
    ap.add_argument("--backward", action="store_true",
                    help="with --space 256: Inductor's exhaustive backward list (900 configs) instead")
    ap.add_argument("--modes", default="every,dominance,infer,fast,again")
    ap.add_argument("--record", help="with --space: write every config's exact figure to this JSON file")
    a = ap.parse_args()
    if a.backward and a.space != 256:
        ap.error("--backward needs --space 256: the only recorded backward kernel is at head dim 256")
    if a.record and not a.space:
        ap.error("--record needs --space: it records an exhaustive space")
    import torch
    import triton
    import scratchsim.inductor as ssi
    recs = load_records()
    tmp = tempfile.mkdtemp(prefix="hook_cost_")
    sets = {}
    for key in filter(None, a.only.split(",")):
        by_template = {}
        for r in recs[key]:
            by_template.setdefault(r["template"], []).append(r["source"])
        sets[key] = [(tpl, choices_of(srcs, tmp)) for tpl, srcs in by_template.items()]
    space_sources = []
    if a.space:
        space_sources = exhaustive_bwd_sources(a.space) if a.backward else exhaustive_fwd_sources(recs["flex"], a.space)
        way = "bwd" if a.backward else "fwd"
        sets[f"flex_{way}_exhaustive_d{a.space}"] = [
            ("flex_attention_backward" if a.backward else "flex_attention", choices_of(space_sources, tmp))]
    out = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": platform.processor() or
           platform.machine(), "cores": os.cpu_count(), "python": sys.version.split()[0], "torch": torch.__version__,
           "triton": triton.__version__, "target": "sm_90", "device": "h200", "sets": {}}
    try:
        out["cpu"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    if a.record:
        return record_space(ssi, space_sources, a.record, a.space, a.backward)
    # Warm-up outside the timings: Triton's and Inductor's imports, one lowering.
    ssi.check_source(recs["block"][0]["source"], "triton_mm", "sm_90", "h200")
    if "pool" in a.modes.split(","):
        from torch._inductor import config
        from torch._inductor.async_compile import AsyncCompile
        config.compile_threads = max(2, os.cpu_count() or 2)
        AsyncCompile.wait_pool_ready()
        out["pool_workers"] = config.compile_threads
    for key, ops in sets.items():
        res = out["sets"][key] = {}
        for mode in a.modes.split(","):
            res[mode] = run_mode(ssi, "dominance" if mode == "pool" else mode, ops, "sm_90", "h200", mode == "pool")
            r = res[mode]
            print(f"{key:<26} {mode:<10} choices {r['choices']:>4} lowered {r['lowered']:>4} by bound "
                  f"{r['dominated'] + r['inferred']:>4} (fits {r['dominated']}, over {r['inferred']}) by estimate 0 "
                  f"dropped {r['dropped']:>4} wall {r['wall_s']:>7.2f} s ({r['per_choice_ms']} ms/choice)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
