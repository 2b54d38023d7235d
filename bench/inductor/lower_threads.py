#!/usr/bin/env python3
"""How much of a Triton lowering (its front end and TTGIR passes, what scratchsim.inductor's hook
runs per checked choice) leaves Python's lock: 36 configurations of a tiled matmul lowered for
sm_90 one after another, then in N threads (docs/validation/inductor-gpu.md, run 14).

    python3 bench/inductor/lower_threads.py [--threads 2]

Needs Triton (3.6 measured); no GPU. Prints the serial time (make_ir and the passes apart) and
the threaded time.
"""
import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import triton
import triton.language as tl


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    pm, pn = pid // tl.cdiv(N, BN), pid % tl.cdiv(N, BN)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak)
        y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


SIGNATURE = {**{n: "*fp16" for n in ("a", "b", "c")},
             **{n: "i32" for n in ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn")},
             **{n: "constexpr" for n in ("BM", "BN", "BK")}}
CONFIGS = [(bm, bn, bk, st) for bm in (64, 128) for bn in (64, 128, 256) for bk in (32, 64) for st in (2, 3, 4)]


def lower(config):
    """(make_ir seconds, TTIR + TTGIR passes seconds) of one configuration, as triton.compile runs them."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend
    bm, bn, bk, stages = config
    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    src = ASTSource(matmul, SIGNATURE, {"BM": bm, "BN": bn, "BK": bk}, {})
    opts = backend.parse_options({"num_stages": stages, "num_warps": 4})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    t0 = time.perf_counter()
    module = src.make_ir(target, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
    t1 = time.perf_counter()
    stages_ = {}
    backend.add_stages(stages_, opts, src.language)
    metadata = {"hash": "bench", "target": target, **opts.__dict__}
    for ext in list(stages_)[list(stages_).index(src.ext):]:
        module = stages_[ext](module, metadata)
        if ext == "ttgir":
            break
    return t1 - t0, time.perf_counter() - t1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    lower(CONFIGS[0])  # imports and first-use costs out of the timing
    t = time.perf_counter()
    parts = [lower(c) for c in CONFIGS]
    serial = time.perf_counter() - t
    t = time.perf_counter()
    with ThreadPoolExecutor(a.threads) as ex:
        list(ex.map(lower, CONFIGS))
    threaded = time.perf_counter() - t
    print(f"Triton {triton.__version__}, {len(CONFIGS)} configurations: serial {serial:.2f} s (make_ir "
          f"{sum(p[0] for p in parts):.2f} s, passes {sum(p[1] for p in parts):.2f} s); {a.threads} threads "
          f"{threaded:.2f} s ({serial / threaded:.2f}x)")


if __name__ == "__main__":
    main()
