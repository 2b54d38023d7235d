"""Times the planner's kernel families on the real-workload suite (issue 34; bench/planner/workloads.py),
with what a user would call instead beside them, on the GPU machine.

    python3 bench/planner/sweep_workloads.py OUT.json [--dtypes f16] [--part all|PART]
        [--kinds matmul,splitk,attention,anchors] [--budget-s 540] [--f32-every 2] [--rows START:STOP]

For every matmul row of tests/data/planner/workload-suite.json and each dtype: every configuration
of the plain Triton matmul (models/graphs/triton_matmul.pbtxt's 288) and, where M <= 64, of the
split-K matmul (SPLITK_SPACE; the timed call zeroes C first, as a caller must); then torch.matmul
(cuBLAS; TF32 allowed for f32, as the Triton kernel's tl.dot uses it). For every attention row:
every configuration of models/graphs/triton_attention.pbtxt's space and PyTorch's
scaled_dot_product_attention on the same tensors. f32 rows are timed for every --f32-every-th
matmul shape of the suite (all of them with 1).

Compiling: a spawn pool compiles every configuration once per dtype (and attention per head dim
and head count, the JIT's specialization) and records Triton's metadata (registers, spills, shared
bytes) and the seconds the compile and first launch took, the cost an autotuner pays per config
(the guided-autotune figures of docs/planner.md come from these and the timings).

Timing: triton.testing.do_bench, median, warm-up 3 ms and 10 ms of repetitions (bursts, as an
autotuner times; each repetition flushes L2). The first configuration of each family per row is
checked against a float32 reference. Stops at --budget-s keeping what it has; writes as it goes.
"""
import argparse
import datetime
import itertools
import json
import math
import multiprocessing as mp
import os
import subprocess
import sys
import time
import traceback

os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/scratchsim_triton_cache")

import torch  # noqa: E402
import triton  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "python"))
import triton_kernels as tk  # noqa: E402
from workloads import PARTS  # noqa: E402

PLAIN_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [32, 64, 128],
               "NUM_STAGES": [2, 3, 4], "NUM_WARPS": [4, 8]}
SPLITK_SPACE = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64, 128], "BLOCK_K": [64, 128], "NUM_STAGES": [3, 4],
                "NUM_WARPS": [4], "SPLIT_K": [2, 4, 8, 16]}
ATTN_SPACE = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "NUM_STAGES": [2, 3, 4], "NUM_WARPS": [4, 8]}
DTYPES = {"f16": torch.float16, "f32": torch.float32}
GROUP_M = 8
SPLITK_MAX_M = 64
WARMUP_MS, REP_MS = 3, 10


def space(s):
    names = list(s)
    return [dict(zip(names, v)) for v in itertools.product(*(s[n] for n in names))]


def launch_matmul(a, b, c, cfg):
    M, K = a.shape
    N = b.shape[1]
    tiles = triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"])
    common = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=GROUP_M,
                  num_warps=cfg["NUM_WARPS"], num_stages=cfg["NUM_STAGES"])
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    if "SPLIT_K" in cfg:
        c.zero_()
        return tk.matmul_splitk_kernel[(tiles, cfg["SPLIT_K"])](*args, SPLIT_K=cfg["SPLIT_K"], **common)
    return tk.matmul_kernel[(tiles,)](*args, **common)


def launch_in_order(order_path, shapes, configs, dtype_name):
    """Launches the plain matmul once per (shape, configuration) for a profiler (Nsight Compute
    profiles launches in this order) and writes the order to ORDER_PATH."""
    launch_groups_in_order(order_path, [(shapes, configs, dtype_name)])


def launch_groups_in_order(order_path, groups):
    """launch_in_order over (shapes, configurations, dtype) groups, one after the other; each
    launch's entry in ORDER_PATH names its dtype."""
    os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/scratchsim_triton_cache")
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
    order = []
    for shapes, configs, dtype_name in groups:
        dtype = DTYPES[dtype_name]
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            c = torch.empty(M, N, device="cuda", dtype=dtype)
            for cfg in configs:
                launch_matmul(a, b, c, dict(zip(names, cfg)))
                torch.cuda.synchronize()
                order.append({"M": M, "N": N, "K": K, "dtype": dtype_name, "config": dict(zip(names, cfg))})
    with open(order_path, "w") as f:
        json.dump(order, f, indent=1)


def attn_tensors(z, h, n, d, dtype=torch.float16):
    q, k, v = (torch.randn(z, h, n, d, device="cuda", dtype=dtype) for _ in range(3))
    return q, k, v, torch.empty_like(q)


def launch_attn(q, k, v, o, cfg):
    z, h, n, d = q.shape
    grid = (n // cfg["BLOCK_M"], z * h)
    return tk.attn_fwd_kernel[grid](q, k, v, o, 1.0 / math.sqrt(d), q.stride(0), q.stride(1), q.stride(2),
                                    k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
                                    o.stride(0), o.stride(1), o.stride(2), h, n, HEAD_DIM=d,
                                    BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], num_warps=cfg["NUM_WARPS"],
                                    num_stages=cfg["NUM_STAGES"])


def compile_one(task):
    """Worker: compiles and launches one configuration small, with the timed shapes'
    specialization (sizes and strides multiples of 16); returns Triton's metadata and seconds."""
    kind, dtype_name, cfg, extra = task
    out = {"kind": kind, "dtype": dtype_name, "config": cfg, **extra}
    start = time.perf_counter()
    try:
        if kind == "attention":
            tensors = attn_tensors(1, extra["heads"], 1024, extra["head_dim"])
            kernel = launch_attn(*tensors, cfg)
        else:
            dtype = DTYPES[dtype_name]
            a = torch.randn(512, 512, device="cuda", dtype=dtype)
            b = torch.randn(512, 512, device="cuda", dtype=dtype)
            c = torch.empty(512, 512, device="cuda", dtype=dtype)
            kernel = launch_matmul(a, b, c, cfg)
        torch.cuda.synchronize()
        out["status"] = "ok"
        out["n_regs"] = getattr(kernel, "n_regs", None)
        out["n_spills"] = getattr(kernel, "n_spills", None)
        out["shared"] = getattr(getattr(kernel, "metadata", None), "shared", None)
    except Exception as e:  # noqa: BLE001 - every refusal is data here
        out["status"] = type(e).__name__
        out["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
    out["compile_s"] = round(time.perf_counter() - start, 4)
    return out


def ckey(kind, dtype_name, cfg, extra=None):
    tail = "" if not extra else f"@{extra['head_dim']}x{extra['heads']}"
    return f"{kind}:{dtype_name}:" + ",".join(f"{k}={v}" for k, v in cfg.items()) + tail


def bench(fn):
    return triton.testing.do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median")


class Run:
    def __init__(self, args):
        self.args = args
        self.start = time.time()
        self.stopped = False
        self.result = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
            "spaces": {"matmul": PLAIN_SPACE, "splitk": SPLITK_SPACE, "attention": ATTN_SPACE},
            "group_m": GROUP_M, "splitk_max_m": SPLITK_MAX_M,
            "timing": {"mode": "burst", "warmup_ms": WARMUP_MS, "rep_ms": REP_MS, "stat": "median"},
            "driver": smi(), "compiled": {}, "timings": [], "anchors": [], "notes": [],
        }

    def left(self):
        return self.args.budget_s - (time.time() - self.start)

    def save(self):
        self.result["elapsed_s"] = round(time.time() - self.start, 1)
        with open(self.args.out, "w") as f:
            json.dump(self.result, f, indent=0)

    def compile_all(self, tasks):
        deadline = self.start + 0.4 * self.args.budget_s
        with mp.get_context("spawn").Pool(self.args.workers) as pool:
            pending = pool.imap_unordered(compile_one, tasks)
            for _ in range(len(tasks)):
                try:
                    r = pending.next(timeout=max(deadline - time.time(), 0.01))
                except mp.TimeoutError:
                    self.result["notes"].append("compile phase stopped at its deadline")
                    break
                extra = {k: r[k] for k in ("head_dim", "heads") if k in r}
                self.result["compiled"][ckey(r["kind"], r["dtype"], r["config"], extra or None)] = r
            pool.terminate()
        print(f"compiled {len(self.result['compiled'])}/{len(tasks)} at {time.time() - self.start:.0f} s", flush=True)
        self.save()

    def time_configs(self, row, kind, dtype_name, cfgs, call, check=None, extra=None):
        checked = False
        for cfg in cfgs:
            if self.left() <= 0:
                self.result["notes"].append(f"timing stopped at the budget during {kind} {row}")
                self.stopped = True
                return
            compiled = self.result["compiled"].get(ckey(kind, dtype_name, cfg, extra))
            if compiled is None or compiled["status"] != "ok":
                continue
            t = dict(row, kind=kind, dtype=dtype_name, config=cfg)
            try:
                if check is not None and not checked:
                    call(cfg)
                    torch.cuda.synchronize()
                    t["max_rel_error"] = check()
                    checked = True
                wall = time.perf_counter()
                t["ms"] = bench(lambda: call(cfg))
                t["bench_s"] = round(time.perf_counter() - wall, 4)
            except Exception as e:  # noqa: BLE001
                t["error"] = (type(e).__name__ + ": " + str(e).splitlines()[0][:200]) if str(e) else type(e).__name__
            self.result["timings"].append(t)

    def matmul_row(self, row, dtype_name, kinds):
        dtype = DTYPES[dtype_name]
        M, N, K = row["M"], row["N"], row["K"]
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        ref = torch.matmul(a.float(), b.float())

        def check():
            return (c.float() - ref).abs().max().item() / ref.abs().max().item()
        shape = {"M": M, "N": N, "K": K, "model": row["model"], "layer": row["layer"], "part": row["part"]}
        if "matmul" in kinds:
            self.time_configs(shape, "matmul", dtype_name, space(PLAIN_SPACE), lambda cfg: launch_matmul(a, b, c, cfg),
                              check)
        if "splitk" in kinds and M <= SPLITK_MAX_M and not self.stopped:
            self.time_configs(shape, "splitk", dtype_name, space(SPLITK_SPACE),
                              lambda cfg: launch_matmul(a, b, c, cfg), check)
        if "anchors" in kinds and not self.stopped:
            # TF32 for the anchor only: left on, it would make the next rows' references TF32 too.
            allowed = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                ms = bench(lambda: torch.matmul(a, b))
            finally:
                torch.backends.cuda.matmul.allow_tf32 = allowed
            self.result["anchors"].append(dict(shape, kind="torch.matmul", dtype=dtype_name, ms=ms,
                                               note="cuBLAS; TF32 allowed" if dtype_name == "f32" else "cuBLAS"))
        torch.cuda.empty_cache()

    def attention_row(self, row, kinds):
        z, h, n, d = row["batch"], row["heads"], row["N_CTX"], row["HEAD_DIM"]
        q, k, v, o = attn_tensors(z, h, n, d)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())

        def check():
            return (o.float() - ref).abs().max().item() / ref.abs().max().item()
        shape = {key: row[key] for key in ("model", "part", "BATCH_HEADS", "N_CTX", "HEAD_DIM", "batch", "heads")}
        if "attention" in kinds:
            self.time_configs(shape, "attention", "f16", space(ATTN_SPACE), lambda cfg: launch_attn(q, k, v, o, cfg),
                              check, {"head_dim": d, "heads": h})
        if "anchors" in kinds and not self.stopped:
            ms = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
            self.result["anchors"].append(dict(shape, kind="sdpa", dtype="f16", ms=ms,
                                               note="torch.nn.functional.scaled_dot_product_attention, no mask"))
        torch.cuda.empty_cache()


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unknown ({type(e).__name__})"


def row_slice(text):
    """--rows START:STOP as a slice; argparse reports anything else as a usage error."""
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        return slice(*(int(x) if x else None for x in parts))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not START:STOP (integers, either may be empty)") from None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--suite", default=os.path.join(ROOT, "tests", "data", "planner", "workload-suite.json"))
    p.add_argument("--dtypes", default="f16")
    p.add_argument("--part", default="all", choices=["all", *PARTS])
    p.add_argument("--kinds", default="matmul,splitk,attention,anchors")
    p.add_argument("--f32-every", type=int, default=2)
    p.add_argument("--budget-s", type=float, default=540)
    p.add_argument("--workers", type=int, default=14)
    p.add_argument("--smoke", action="store_true", help="two configurations per family on the first rows: a check")
    p.add_argument("--rows", default=":", type=row_slice,
                   help="START:STOP, a slice of the part's matmul rows in suite order (to time what an earlier run's "
                   "budget left)")
    args = p.parse_args()
    if args.smoke:
        for s in (PLAIN_SPACE, SPLITK_SPACE, ATTN_SPACE):
            for name in s:
                s[name] = s[name][:1] if name != "BLOCK_M" else s[name][:2]
    kinds = set(args.kinds.split(","))
    dtypes = args.dtypes.split(",")
    with open(args.suite) as f:
        suite = json.load(f)
    pick = (lambda r: True) if args.part == "all" else (lambda r: r["part"] == args.part)
    part_rows = [(i, r) for i, r in enumerate(suite["matmul"]) if pick(r)][args.rows]
    mm_rows = [(r, d) for i, r in part_rows for d in dtypes if d != "f32" or i % args.f32_every == 0]
    at_rows = [r for r in suite["attention"] if pick(r)] if "attention" in kinds or "anchors" in kinds else []
    if args.smoke:
        mm_rows, at_rows = [x for x in mm_rows if x[0]["M"] <= SPLITK_MAX_M][:len(dtypes)], at_rows[:1]
    run = Run(args)
    run.result.update({"suite": os.path.relpath(args.suite, ROOT), "dtypes": dtypes, "part": args.part,
                       "kinds": sorted(kinds), "f32_every": args.f32_every,
                       "rows": f"{args.rows.start or ''}:{args.rows.stop or ''}"})
    tasks = []
    for d in dtypes:
        if "matmul" in kinds:
            tasks += [("matmul", d, cfg, {}) for cfg in space(PLAIN_SPACE)]
        if "splitk" in kinds and any(r["M"] <= SPLITK_MAX_M for r, dd in mm_rows if dd == d):
            tasks += [("splitk", d, cfg, {}) for cfg in space(SPLITK_SPACE)]
    if "attention" in kinds:
        for hd, heads in sorted({(r["HEAD_DIM"], r["heads"]) for r in at_rows}):
            tasks += [("attention", "f16", cfg, {"head_dim": hd, "heads": heads}) for cfg in space(ATTN_SPACE)]
    run.compile_all(tasks)
    # Attention first (short), then the matmul rows in suite order.
    for r in at_rows:
        if run.stopped:
            break
        run.attention_row(r, kinds)
        run.save()
    for r, d in mm_rows:
        if run.stopped:
            break
        run.matmul_row(r, d, kinds)
        run.save()
        print(f"{d} {r['M']}x{r['N']}x{r['K']} done at {time.time() - run.start:.0f} s", flush=True)
    run.save()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
