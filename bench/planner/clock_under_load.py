"""Samples the SM clock and power while a Triton matmul configuration runs back to back, as in
the planner sweeps (docs/validation/planner-h100.md, "Full-size launches: DRAM traffic and clock"): is the clock the model assumes
(1980 MHz) the one the kernels run at? usage (on the GPU):
    python3 clock_under_load.py OUT.json [DTYPE:BM/BN/BK/STAGES/WARPS ...] [--shape MxNxK] [--seconds S]
(default: the four cases below at 4096^3, 3 s each).

Per configuration: do_bench's time (short bursts, as the sweeps time), then S seconds of
back-to-back launches in chunks synchronised every ~0.2 s, with `nvidia-smi -lms 100` sampling the
SM clock, power and throttle reasons alongside; the time per launch under that sustained load and
the samples of its second half (the clock settled) are recorded."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
import sweep_triton_matmul as sweep  # noqa: E402

NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS")
CASES = [("f32", (256, 128, 32, 4, 8)), ("f32", (32, 256, 64, 4, 4)), ("f16", (128, 256, 64, 4, 8)),
         ("f16", (32, 256, 64, 4, 4))]


FIELDS = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"


def sample():
    out = subprocess.run(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout.strip()
    return out


def parse_args(argv):
    cases, shape, seconds = [], (4096, 4096, 4096), 3.0
    it = iter(argv)
    for arg in it:
        if arg == "--shape":
            shape = tuple(int(x) for x in next(it).split("x"))
        elif arg == "--seconds":
            seconds = float(next(it))
        else:
            dtype_name, values = arg.split(":")
            cases.append((dtype_name, tuple(int(x) for x in values.split("/"))))
    return cases or CASES, shape, seconds


def sustained(launch, ms, seconds):
    """Runs launch() back to back for `seconds` with nvidia-smi sampling every 100 ms: (ms per
    launch over the run, the samples of its second half)."""
    chunk = max(1, int(200 / ms))  # ~0.2 s of work between synchronisations
    sampler = subprocess.Popen(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits", "-lms", "100"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    launches = 0
    torch.cuda.synchronize()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(chunk):
            launch()
        torch.cuda.synchronize()
        launches += chunk
    elapsed = time.perf_counter() - start
    sampler.terminate()
    lines = [l.strip() for l in sampler.communicate()[0].splitlines() if l.strip()]
    return 1000.0 * elapsed / launches, lines[len(lines) // 2:]


def main():
    results = []
    cases, (M, N, K), seconds = parse_args(sys.argv[2:])
    for dtype_name, values in cases:
        cfg = dict(zip(NAMES, values))
        dtype = sweep.DTYPES[dtype_name]
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        launch = lambda: sweep.launch(a, b, c, cfg)  # noqa: E731
        ms = triton.testing.do_bench(launch, warmup=5, rep=20)
        sustained_ms, samples = sustained(launch, ms, seconds)
        results.append({"dtype": dtype_name, "config": cfg, "ms": ms, "sustained_ms": sustained_ms, "samples": samples})
        clocks = sorted(int(s.split(",")[0]) for s in samples if s.split(",")[0].strip().isdigit())
        print(dtype_name, values, f"do_bench {ms:.4f} ms, sustained {sustained_ms:.4f} ms,",
              f"SM clock median {clocks[len(clocks) // 2] if clocks else '-'} MHz of {len(samples)} samples,",
              samples[len(samples) // 2] if samples else "", flush=True)
    idle = sample()
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "idle": idle, "shape": [M, N, K], "seconds": seconds,
                   "fields": "clocks.sm MHz, clocks.mem MHz, power.draw W, temperature C, clocks_event_reasons.active",
                   "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
