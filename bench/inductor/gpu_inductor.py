#!/usr/bin/env python3
"""scratchsim.inductor on the GPU machine (issue 39, docs/validation/inductor-gpu.md): records the
config lists and generated kernels tests/data/inductor replays, and measures the hook.

    python3 bench/inductor/gpu_inductor.py --out $OUT [--budget-s 360] [--parts configs,flex,flexx,flexx:pool]
        [--caps flexx=220,timing=90]

writes $OUT/inductor_gpu.json (results, rewritten after every part), $OUT/inductor_data.tar.gz
(the recorded kernels: template sources, TTGIR, Triton's own metadata.shared) and $OUT/log.txt.

Parts, each compile in its own process with empty Inductor and Triton caches (so neither variant
profits from the other's compiled kernels or autotune results); a part that would pass the budget
is recorded as skipped, one still running at its deadline as a timeout:
  configs    Inductor's own config lists (mm, FlexAttention forward/backward/decoding) as this
             PyTorch builds them for this GPU, with and without max_autotune.
  flex_off / flex_on (flex256_off / flex256_on: head_dim 256)
             FlexAttention forward + backward (causal block mask, bf16), torch.compile
             mode="max-autotune", without and with scratchsim.inductor.install(): compile time,
             choices, configs dropped, OutOfResources logged, the kernels chosen, run time,
             outputs (compared across the two in the parent).
  block_off / block_on
             a decoder block of a Llama-3-8B-like configuration (hidden 4096, 32 heads, 8 KV
             heads, FFN 14336; random weights), forward, the same measurements; block_on also
             lowers every kernel of its output code for every target (the model report).
  chooser    FlexAttention forward + backward without max-autotune under choose_flex(target
             "sm_89", device "rtx4090"): the config it picks for an RTX 4090 and Inductor's own
             default's verdict there; the picked config runs here (H200) and matches eager.
  flexx_off / flexx_on (flexx_infer, flexx_pool, flexx_fast, flexx_fastind, flexx_fastpool,
             flexx_nocheck: install(infer_unfit=True), install(in_pool=True), install(fast=True),
             install(fast=True, in_pool=True), install(fast=True, workers=FASTPOOL_WORKERS;
             flexx_fastpoolN: workers=N), install(budget_s=0): installed, nothing checked;
             flexx_offwarm: no hook, Inductor's compile workers started where fastind starts them)
             FlexAttention forward alone (inference), D=256, over Inductor's exhaustive forward
             space (config.max_autotune_flex_search_space = "EXHAUSTIVE": 144 configs, 56 of them
             over the H200's limit by scratchsim's figure, bench/inductor/hook_cost.py --space 256).
  <part>_timing (<part>_<hook>_timing: after off and the first hooked variant of a flex part)
             the kernels each variant chose, pinned through kernel_options and compiled in one
             process, timed interleaved (A, B, B, A, ...: TIMING_ROUNDS rounds): the median per
             side, the median of the per-round ratios on/off and its 10th-90th percentiles.
The default parts (configs, flex, flexx, flexx:pool) take about 6 minutes on an H200 host (16
cores); a part that would pass --budget-s is skipped (recorded so).
"""
import argparse
import faulthandler
import glob
import json
import logging
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))

# Llama-3-8B's public configuration (hidden_size, num_attention_heads, num_key_value_heads,
# intermediate_size); tokens per call chosen here.
BLOCK_DIMS = dict(hidden=4096, heads=32, kv_heads=8, ffn=14336, tokens=2048)
# FlexAttention: the block's attention (32 heads of 128), and head_dim 256, where more of
# Inductor's configs exceed the shared memory of the GPU.
FLEX_SHAPES = {"flex": dict(batch=2, heads=32, seq=2048, head_dim=128),
               "flex256": dict(batch=2, heads=16, seq=2048, head_dim=256),
               "flexx": dict(batch=2, heads=16, seq=2048, head_dim=256)}
# flexx: FlexAttention forward (inference) over Inductor's exhaustive forward space, D=256, where
# most configs cannot fit an H200 (bench/inductor/hook_cost.py --space 256 counts them on the CPU).
EXHAUSTIVE_PARTS = ("flexx",)
# The hook "fastpool": install(fast=True, workers=N). A quarter of a 16-core host, so that the
# pool's start leaves Inductor's own compile workers most of the CPU while they start.
FASTPOOL_WORKERS = 4
# Interleaved timing: rounds of (A, B) pairs, each side CALLS_PER_SAMPLE calls between CUDA events.
TIMING_ROUNDS, CALLS_PER_SAMPLE = 200, 5


# ------------------------------------------------------------------------------------------------
# Child side (torch imported only here)
# ------------------------------------------------------------------------------------------------

class _OORCounter(logging.Handler):
    """Counts the OutOfResources and other errors Inductor logs while benchmarking choices."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.oor, self.errors = [], []

    def emit(self, record):
        msg = record.getMessage()
        if "out of resource" in msg.lower():
            m = re.search(r"Required:\s*(\d+).*?limit:\s*(\d+)", msg, re.S)
            self.oor.append({"required": int(m.group(1)), "limit": int(m.group(2))} if m else {"message": msg[:300]})
        elif record.levelno >= logging.ERROR:
            self.errors.append(msg[:300])


def _chosen(codes):
    """The kernels the compiled code calls: extern (ATen) calls and Triton template kernels with
    their launch parameters, from the output code."""
    out = []
    for code in codes:
        out += sorted(set(re.findall(r"extern_kernels\.(\w+)\(", code)))
        for name, src in re.findall(r"async_compile\.triton\('(\w+)',\s*'''(.*?)'''", code, re.S):
            if "_tem_" not in name:
                continue
            params = dict(re.findall(r"\b(BLOCK_[A-Z0-9]+|GROUP_M)\s*:\s*tl\.constexpr\s*=\s*(\d+)", src))
            launch = dict(re.findall(r"\b(num_stages|num_warps)=(\d+)", src)[:2])
            out.append({"kernel": name, **{k: int(v) for k, v in params.items()}, **{k: int(v) for k, v in launch.items()}})
    return out


def _norm_ttgir(text):
    """TTGIR without its source locations (#loc lines, loc(...) suffixes), for matching."""
    text = re.sub(r"^#loc.*$", "", text, flags=re.M)
    return re.sub(r"\s*loc\([^\n]*?\)\s*$", "", text, flags=re.M).strip()


def _triton_cache_shared(cache_dir):
    """Triton's metadata.shared of every kernel it compiled into cache_dir, keyed by TTGIR text
    without source locations."""
    out = {}
    for meta in glob.glob(os.path.join(cache_dir, "*", "*.json")):
        if os.path.basename(meta).startswith("__grp__"):
            continue
        try:
            m = json.load(open(meta))
            ttgir = meta[:-5] + ".ttgir"
            if "shared" in m and os.path.exists(ttgir):
                out[_norm_ttgir(open(ttgir).read())] = {"shared": m["shared"], "name": m.get("name"),
                                           "num_warps": m.get("num_warps"), "num_stages": m.get("num_stages")}
        except Exception:
            pass
    return out


def _digest(t):
    """sha256 of a tensor's bytes: outputs compared across runs and processes."""
    import hashlib
    return hashlib.sha256(t.detach().float().contiguous().cpu().numpy().tobytes()).hexdigest()


def _bench(fn, reps=30):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return {"median_ms": times[len(times) // 2], "min_ms": times[0], "reps": reps}


def _flex_problem(torch, part, kernel_options=None):
    """(flex_attention, step): step(fa) runs fa on the part's causal problem, forward + backward
    (flex, flex256) or forward alone without autograd (flexx), and returns its outputs."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    s = FLEX_SHAPES[part]
    backward = part not in EXHAUSTIVE_PARTS
    g = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda: torch.randn(s["batch"], s["heads"], s["seq"], s["head_dim"], device="cuda", dtype=torch.bfloat16,
                             generator=g).requires_grad_(backward)
    q, k, v = mk(), mk(), mk()
    mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, s["seq"], s["seq"], device="cuda")
    extra = {"kernel_options": kernel_options} if kernel_options else {}

    def step(fa):
        if not backward:
            with torch.no_grad():
                return (fa(q, k, v, block_mask=mask, **extra),)
        for t in (q, k, v):
            t.grad = None
        out = fa(q, k, v, block_mask=mask, **extra)
        out.sum().backward()
        return out, q.grad, k.grad, v.grad
    return flex_attention, step


def _block_problem(torch):
    d = BLOCK_DIMS
    hd = d["hidden"] // d["heads"]
    g = torch.Generator(device="cuda").manual_seed(0)
    w = lambda o, i: (torch.randn(o, i, device="cuda", dtype=torch.bfloat16, generator=g) / i ** 0.5)
    wq, wk, wv, wo = w(d["hidden"], d["hidden"]), w(d["kv_heads"] * hd, d["hidden"]), w(d["kv_heads"] * hd, d["hidden"]), \
        w(d["hidden"], d["hidden"])
    wg, wu, wd = w(d["ffn"], d["hidden"]), w(d["ffn"], d["hidden"]), w(d["hidden"], d["ffn"])
    n1 = torch.ones(d["hidden"], device="cuda", dtype=torch.bfloat16)
    n2 = torch.ones(d["hidden"], device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, d["tokens"], d["hidden"], device="cuda", dtype=torch.bfloat16, generator=g)
    F = torch.nn.functional

    def rms(t, weight):
        t32 = t.float()
        return (t32 * torch.rsqrt(t32.pow(2).mean(-1, keepdim=True) + 1e-5)).to(t.dtype) * weight

    def block(x):
        b, s, _ = x.shape
        h = rms(x, n1)
        q = F.linear(h, wq).view(b, s, d["heads"], hd).transpose(1, 2)
        k = F.linear(h, wk).view(b, s, d["kv_heads"], hd).transpose(1, 2)
        v = F.linear(h, wv).view(b, s, d["kv_heads"], hd).transpose(1, 2)
        rep = d["heads"] // d["kv_heads"]
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, -1)
        x = x + F.linear(a, wo)
        h = rms(x, n2)
        return x + F.linear(F.silu(F.linear(h, wg)) * F.linear(h, wu), wd)
    return block, x


def _diagnose_precompile(torch):
    """Prints (DIAG lines) how Inductor precompiles each op's choices after the preprocessing
    functions ran: in its subprocess pool or in threads of this process, and whether the pool was
    ready when the choices left the preprocessing functions."""
    from torch._inductor import select_algorithm
    from torch._inductor.async_compile import AsyncCompile
    seen = set()

    class Precompiles(logging.Handler):
        def emit(self, record):
            msg = record.getMessage()
            kind = ("async" if "triton async compile" in msg else "thread" if "Submitted precompile" in msg
                    else "threads" if "Multithreaded precompilation" in msg else None)
            if kind and kind not in seen:
                seen.add(kind)
                print(f"DIAG {time.time():.1f} first {kind}: {msg[:160]}", file=sys.stderr, flush=True)
    lg = logging.getLogger("torch._inductor.select_algorithm")
    lg.setLevel(logging.DEBUG)
    lg.addHandler(Precompiles(logging.DEBUG))

    def after_preprocessing(choices):
        print(f"DIAG {time.time():.1f} {len(choices)} choices leave preprocessing; process pool ready: "
              f"{AsyncCompile.use_process_pool()}", file=sys.stderr, flush=True)
        return choices
    select_algorithm.add_preprocessing_fn(after_preprocessing)


def child(part, hook, out_path, deadline):
    """One compile, in this process: writes its result JSON (and records) to out_path."""
    import torch
    import scratchsim.inductor as ssi
    from torch._inductor.utils import run_and_get_code
    res = {"part": part, "hook": hook, "torch": torch.__version__}
    # Where a compile that outlasts its cap spends its time: every thread's stack just before the
    # parent kills it, and each lowering the hook runs in this process with its wall time.
    faulthandler.dump_traceback_later(max(5.0, deadline - time.time() - 8), exit=False)
    _lower = ssi.sst.lower_compiled

    def timed_lower(*args, **kwargs):
        t = time.perf_counter()
        try:
            return _lower(*args, **kwargs)
        finally:
            print(f"scratchsim lowering {time.perf_counter() - t:.2f} s at {time.time():.1f}", file=sys.stderr, flush=True)
    ssi.sst.lower_compiled = timed_lower
    counter = _OORCounter()
    # Neither logger is the other's ancestor: each message is counted once.
    for name in ("torch._inductor.select_algorithm", "torch._inductor.autotune_process",
                 "torch._inductor.runtime.triton_heuristics"):
        logging.getLogger(name).addHandler(counter)
    pruner = None

    def hook_up():
        """Installed inside the timed region: the hook's set-up (its worker processes) counts."""
        nonlocal pruner
        if hook == "on":
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, fast=False)
        elif hook == "infer":
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, infer_unfit=True, fast=False)
        elif hook == "pool":
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, in_pool=True, fast=False)
        elif hook == "fast":
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, fast=True)
        elif hook == "fastind":
            # The fast path lowering in Inductor's own compile workers, which install() starts.
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, fast=True, in_pool=True)
        elif hook == "offwarm":
            # No hook; Inductor's compile workers started at the same point as fastind starts them,
            # so that the two differ only in what the hook drops.
            from torch._inductor.async_compile import AsyncCompile
            AsyncCompile.use_process_pool()
        elif hook.startswith("fastpool"):
            # The fast path with spawned lowering workers of its own (fastpoolN: N), started here.
            workers = int(hook[len("fastpool"):] or FASTPOOL_WORKERS)
            pruner = ssi.install(target=None, device="h200", keep_ttgir=True, fast=True, workers=workers)
        elif hook == "nocheck":
            # Installed, but with no time to check anything: every choice is kept unchecked. What
            # the hook's presence alone costs Inductor's compile.
            pruner = ssi.install(target=None, device="h200", budget_s=0)
        elif hook == "choose":
            pruner = ssi.choose_flex(target="sm_89", device="rtx4090")
            pruner.keep_ttgir = True
        # After the hook's own preprocessing function: what Inductor does with what it keeps.
        _diagnose_precompile(torch)
    try:
        if part in EXHAUSTIVE_PARTS:
            torch._inductor.config.max_autotune_flex_search_space = "EXHAUSTIVE"
        if part.startswith("flex"):
            fa, step = _flex_problem(torch, part)
            mode = None if hook == "choose" else "max-autotune"
            cfa = torch.compile(fa, mode=mode) if mode else torch.compile(fa)
            t0 = time.perf_counter()
            hook_up()
            (outs, codes) = run_and_get_code(lambda: step(cfa))
            torch.cuda.synchronize()
            res["compile_s"] = time.perf_counter() - t0
            # CUDA graphs (mode="max-autotune") reuse output buffers: keep copies of the first run's.
            outs = [o.detach().clone() for o in outs]
            res["run"] = _bench(lambda: step(cfa))
            eager = step(fa)
            res["max_abs_diff_vs_eager"] = [float((a.float() - b.float()).abs().max()) for a, b in zip(outs, eager)]
            torch.save([o.detach().cpu() for o in outs], out_path + ".pt")
            res["output_sha256"] = [_digest(o) for o in outs]
        else:
            block, x = _block_problem(torch)
            cb = torch.compile(block, mode="max-autotune")
            t0 = time.perf_counter()
            hook_up()
            out, codes = run_and_get_code(lambda: cb(x))
            torch.cuda.synchronize()
            res["compile_s"] = time.perf_counter() - t0
            out = out.detach().clone()
            res["run"] = _bench(lambda: cb(x))
            res["max_abs_diff_vs_eager"] = float((out.float() - block(x).float()).abs().max())
            torch.save(out.detach().cpu(), out_path + ".pt")
            res["output_sha256"] = [_digest(out)]
        res["chosen"] = _chosen(codes)
        res["output_code_chars"] = sum(len(c) for c in codes)
        with open(out_path + ".code.py", "w") as f:
            f.write("\n\n# ---- next graph ----\n\n".join(codes))
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"[:2000]
        res["traceback"] = traceback.format_exc()[-4000:]
        codes = []
    res["oor_logged"] = counter.oor
    res["errors_logged"] = counter.errors[:20]
    if pruner is not None:
        pruner.uninstall()
        res["pruner"] = {"stats": pruner.stats,
                         "dropped": [{"template": t, "params": p, "shared": v["shared"], "limit": v["limit"],
                                      "message": v["message"]} for t, p, v in pruner.dropped],
                         "chosen": [{k: v.get(k) for k in ("template", "params", "verdict", "shared", "limit", "device")}
                                    for v in pruner.chosen]}
        tcache = _triton_cache_shared(os.environ["TRITON_CACHE_DIR"])
        for r in pruner.records:
            hit = tcache.get(_norm_ttgir(next(iter(r["ttgir"].values()))))
            r["triton_shared"] = hit["shared"] if hit else None
        json.dump(pruner.records, open(out_path + ".records.json", "w"))
        res["records"] = len(pruner.records)
        res["records_matched_triton_cache"] = sum(1 for r in pruner.records if r["triton_shared"] is not None)
        res["records_shared_equal"] = sum(1 for r in pruner.records
                                          if r["triton_shared"] is not None and r["triton_shared"] == r["shared"])
    if part == "block" and hook == "on" and codes and time.time() < deadline - 30:
        try:
            t0 = time.perf_counter()
            records = ssi.output_code_records(codes, ssi.TARGETS)
            rep = ssi.report(records, ssi.TARGETS)
            res["model_report"] = {"summary": rep["summary"], "lower_and_judge_s": time.perf_counter() - t0,
                                   "kernels": len(records)}
            res["model_report_text"] = ssi.report_text(rep)
            json.dump(records, open(out_path + ".model_records.json", "w"))
        except Exception as e:
            res["model_report_error"] = f"{type(e).__name__}: {e}"[:1000] + traceback.format_exc()[-2000:]
    json.dump(res, open(out_path, "w"), indent=1, default=str)


def timing_child(spec, out_path):
    """The kernels two compiles chose, timed interleaved in one process: each side's FlexAttention
    config pinned through kernel_options (one config: compiled without autotuning, the same
    template kernel), then TIMING_ROUNDS rounds of A then B (the order alternating per round),
    CALLS_PER_SAMPLE calls per sample between CUDA events; the median per side and of the per-round
    ratios B/A, and a bootstrap-free spread (the ratios' 10th and 90th percentiles)."""
    import torch
    res = {"spec": spec}
    try:
        fns = {}
        for side in ("A", "B"):
            fa, step = _flex_problem(torch, spec["part"], spec[side] or None)
            cfa = torch.compile(fa)
            outs = step(cfa)
            torch.cuda.synchronize()
            fns[side] = (step, cfa, [o.detach().float().clone() for o in outs])
        res["outputs_equal"] = [bool(torch.equal(a, b)) for a, b in zip(fns["A"][2], fns["B"][2])]
        res["max_abs_diff"] = [float((a - b).abs().max()) for a, b in zip(fns["A"][2], fns["B"][2])]
        for side in ("A", "B"):
            step, cfa, _ = fns[side]
            for _ in range(10):
                step(cfa)
        torch.cuda.synchronize()
        times = {"A": [], "B": []}

        def sample(side):
            step, cfa, _ = fns[side]
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(CALLS_PER_SAMPLE):
                step(cfa)
            b.record()
            torch.cuda.synchronize()
            times[side].append(a.elapsed_time(b) / CALLS_PER_SAMPLE)
        for i in range(TIMING_ROUNDS):
            for side in (("A", "B") if i % 2 == 0 else ("B", "A")):
                sample(side)
        med = lambda xs: sorted(xs)[len(xs) // 2]
        ratios = sorted(b / a for a, b in zip(times["A"], times["B"]))
        res.update(median_ms={k: med(v) for k, v in times.items()}, rounds=TIMING_ROUNDS,
                   calls_per_sample=CALLS_PER_SAMPLE, ratio_b_over_a_median=med(ratios),
                   ratio_p10=ratios[len(ratios) // 10], ratio_p90=ratios[(9 * len(ratios)) // 10],
                   within_2_percent=abs(med(ratios) - 1) <= 0.02)
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"[:2000]
        res["traceback"] = traceback.format_exc()[-4000:]
    json.dump(res, open(out_path, "w"), indent=1, default=str)


def kernel_options_of(chosen, backward):
    """A compile's chosen FlexAttention template configs (_chosen) as kernel_options, or None when
    it chose none (a kernel it did not pick from a template: nothing to pin)."""
    opts = {}
    for c in chosen:
        if not isinstance(c, dict):
            continue
        if "flex_attention_backward" in c["kernel"]:
            if backward:
                opts.update({f"bwd_{k}": c[k] for k in ("BLOCK_M1", "BLOCK_N1", "BLOCK_M2", "BLOCK_N2", "num_warps",
                                                         "num_stages") if k in c})
        elif "flex_attention" in c["kernel"]:
            opts.update({(f"fwd_{k}" if backward else k): c[k] for k in ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages")
                         if k in c})
    return opts or None


def configs_part():
    """Inductor's config lists as this PyTorch builds them on this GPU."""
    import torch
    from torch._inductor import config
    from torch._inductor.choices import InductorChoices
    ch = InductorChoices()
    h = ch.get_config_heuristics("cuda")
    conv = lambda cs: [{k: v for k, v in vars(c).items()} for c in cs]
    out = {"torch": torch.__version__, "capability": list(torch.cuda.get_device_capability()),
           "device": torch.cuda.get_device_name(), "mm_configs": conv(h.mm_configs),
           "shared_memory_per_block_optin": torch.cuda.get_device_properties(0).shared_memory_per_block_optin}
    for ma in (False, True):
        with config.patch(max_autotune=ma):
            for hd in (64, 128):
                for dt in (torch.bfloat16, torch.float32):
                    key = f"max_autotune={ma} head_dim={hd} {str(dt).split('.')[-1]}"
                    out.setdefault("flex", {})[key] = {
                        "fwd": conv(ch.get_flex_attention_fwd_configs(hd, dt, "cuda")),
                        "bwd": conv(ch.get_flex_attention_bwd_configs(hd, dt, "cuda")),
                        "decode": conv(ch.get_flex_decode_configs(hd, dt, "cuda"))}
    with config.patch(max_autotune=True, max_autotune_flex_search_space="EXHAUSTIVE"):
        hd = FLEX_SHAPES["flexx"]["head_dim"]
        out["flexx_fwd_configs"] = conv(ch.get_flex_attention_fwd_configs(hd, torch.bfloat16, "cuda"))
    return out


# ------------------------------------------------------------------------------------------------
# Parent side
# ------------------------------------------------------------------------------------------------

def run_child(part, hook, work, budget_end, cap_s, log, extra=()):
    left = budget_end - time.time()
    if left < 45:
        return {"part": part, "hook": hook, "skipped": f"budget: {left:.0f} s left"}
    timeout = min(cap_s, left - 10)
    d = tempfile.mkdtemp(prefix=f"{part}_{hook}_", dir=work)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "inductor"), TRITON_CACHE_DIR=os.path.join(d, "triton"),
               PYTHONUNBUFFERED="1", TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    out = os.path.join(d, "result.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", part, "--hook", hook, "--child-out", out,
           "--deadline", str(time.time() + timeout), *extra]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        diag = "\n".join(line for line in p.stderr.splitlines() if line.startswith(("DIAG", "scratchsim lowering")))
        log.write(f"== {part} {hook} rc={p.returncode} {time.time() - t0:.1f}s\n{diag}\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}\n")
        res = json.load(open(out)) if os.path.exists(out) else {"error": f"no result, rc={p.returncode}",
                                                                 "stderr": p.stderr[-3000:]}
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        diag = "\n".join(line for line in err.splitlines() if line.startswith(("DIAG", "scratchsim lowering")))
        log.write(f"== {part} {hook} TIMEOUT after {timeout:.0f}s\n{diag}\n{err[-12000:]}\n")
        res = {"part": part, "hook": hook, "timeout_s": timeout}
    res["wall_s"] = time.time() - t0
    res["_dir"] = d
    log.flush()
    return res


def compare_outputs(a_dir, b_dir):
    import torch
    pa, pb = os.path.join(a_dir, "result.json.pt"), os.path.join(b_dir, "result.json.pt")
    if not (os.path.exists(pa) and os.path.exists(pb)):
        return None
    a, b = torch.load(pa), torch.load(pb)
    a = a if isinstance(a, list) else [a]
    b = b if isinstance(b, list) else [b]
    return [{"equal": bool(torch.equal(x, y)), "max_abs_diff": float((x.float() - y.float()).abs().max())}
            for x, y in zip(a, b)]


def compare_pair(a, part, hook, results, work, end, caps, log, save, timing=True):
    """After a part's off compile and a hooked one (hook "on", "fast", ...): their outputs
    compared, the compile-time ratio, and (FlexAttention, with timing) the chosen kernels timed
    interleaved. Keys: <part>_outputs, _compile_speedup, _timing for "on", else
    <part>_<hook>_outputs, ..."""
    off, on = results["parts"][f"{part}_off"], results["parts"][f"{part}_{hook}"]
    name = part if hook == "on" else f"{part}_{hook}"
    try:
        results["parts"][f"{name}_outputs"] = compare_outputs(off["_dir"], on["_dir"])
    except Exception:
        results["parts"][f"{name}_outputs"] = {"error": traceback.format_exc()[-2000:]}
    if off.get("compile_s") and on.get("compile_s"):
        results["parts"][f"{name}_compile_speedup"] = off["compile_s"] / on["compile_s"]
    save()
    if not timing or a.no_timing or not part.startswith("flex") or "chosen" not in off or "chosen" not in on:
        return
    backward = part not in EXHAUSTIVE_PARTS
    spec = {"part": part, "A": kernel_options_of(off["chosen"], backward),
            "B": kernel_options_of(on["chosen"], backward), "A_is": f"{part}_off", "B_is": f"{part}_{hook}"}
    results["parts"][f"{name}_timing"] = run_child("timing", part, work, end, caps["timing"], log,
                                                   ("--spec", json.dumps(spec)))
    save()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/inductor_out"))
    ap.add_argument("--budget-s", type=float, default=360)
    ap.add_argument("--parts", default="configs,flex,flexx,flexx:pool",
                    help="comma-separated: configs, chooser, flex, block, flex256, flexx; PART:HOOK for one "
                         "variant (off; on: the round-based hook, fast=False; infer: infer_unfit; pool: in_pool; fast: the "
                         "fast path; fastind: lowering in Inductor's workers, started at install; fastpool[N]: "
                         "with N workers of its own; nocheck; offwarm: no hook, Inductor's workers started where "
                         "fastind starts them); off runs first, each hooked "
                         "variant is compared with it, the first one's kernels timed interleaved")
    ap.add_argument("--no-timing", action="store_true", help="skip the interleaved timing of each off/on pair")
    ap.add_argument("--caps", default="", help="per-part time caps in seconds, e.g. flexx=220,timing=90")
    ap.add_argument("--child")
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--hook", default="off")
    ap.add_argument("--child-out")
    ap.add_argument("--deadline", type=float, default=0)
    a = ap.parse_args()
    if a.child == "timing":
        timing_child(json.loads(a.spec), a.child_out)
        return
    if a.child:
        child(a.child, a.hook, a.child_out, a.deadline)
        return
    start = time.time()
    end = start + a.budget_s
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="inductor_gpu_")
    log = open(os.path.join(a.out, "log.txt"), "w")
    results = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "parts": {}}
    path = os.path.join(a.out, "inductor_gpu.json")

    def save():
        json.dump(results, open(path, "w"), indent=1, default=str)
    parts = a.parts.split(",")
    wanted = {}
    for p in parts:
        name, _, hook = p.partition(":")
        wanted.setdefault(name, []).extend([hook] if hook else ["off", "on"])
    if "configs" in wanted:
        try:
            results["configs"] = configs_part()
        except Exception:
            results["configs"] = {"error": traceback.format_exc()[-3000:]}
        save()
    caps = {"flex": 60, "flex256": 110, "block": 75, "chooser": 70, "flexx": 170, "timing": 90}
    for item in filter(None, a.caps.split(",")):
        name, _, seconds = item.partition("=")
        if name not in caps or not seconds:
            raise SystemExit(f"--caps: '{item}': expected PART=SECONDS with PART one of {', '.join(caps)}")
        caps[name] = float(seconds)
    if "chooser" in wanted:
        results["parts"]["chooser"] = run_child("flex", "choose", work, end, caps["chooser"], log)
        save()
    for part in [p for p in wanted if p in ("flex", "block", "flex256", "flexx")]:
        # off first, then each hooked variant in the order given, each compared with off; the
        # first one's chosen kernels are timed against off's, as budget allows.
        hooks = ["off"] * ("off" in wanted[part]) + [h for h in dict.fromkeys(wanted[part]) if h != "off"]
        for i, hook in enumerate(hooks):
            results["parts"][f"{part}_{hook}"] = run_child(part, hook, work, end, caps[part], log)
            save()
            if hook != "off" and hooks[0] == "off":
                compare_pair(a, part, hook, results, work, end, caps, log, save, timing=(i == 1))
    # The recorded kernels travel back as one archive.
    with tarfile.open(os.path.join(a.out, "inductor_data.tar.gz"), "w:gz") as tar:
        tar.add(path, arcname="inductor_gpu.json")
        for key, res in results["parts"].items():
            d = res.get("_dir") if isinstance(res, dict) else None
            if not d:
                continue
            for suffix in (".records.json", ".model_records.json", ".code.py"):
                f = os.path.join(d, "result.json" + suffix)
                if os.path.exists(f):
                    tar.add(f, arcname=f"{key}{suffix}")
    results["total_s"] = time.time() - start
    save()
    log.close()


if __name__ == "__main__":
    main()
