"""Samples the SM clock and power while a Triton matmul configuration runs back to back, as in
the planner sweeps (docs/validation/planner-h100.md, "Full-size launches: DRAM traffic and clock"): is the clock the model assumes
(1980 MHz) the one the kernels run at? usage (on the GPU):
    python3 clock_under_load.py OUT.json [DTYPE:BM/BN/BK/STAGES/WARPS ...] [--shape MxNxK]
(default: the four cases below at 4096^3)."""
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


def sample():
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,"
                          "clocks_event_reasons.active", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout.strip()
    return out


def parse_args(argv):
    cases, shape = [], (4096, 4096, 4096)
    it = iter(argv)
    for arg in it:
        if arg == "--shape":
            shape = tuple(int(x) for x in next(it).split("x"))
        else:
            dtype_name, values = arg.split(":")
            cases.append((dtype_name, tuple(int(x) for x in values.split("/"))))
    return cases or CASES, shape


def main():
    results = []
    cases, (M, N, K) = parse_args(sys.argv[2:])
    for dtype_name, values in cases:
        cfg = dict(zip(NAMES, values))
        dtype = sweep.DTYPES[dtype_name]
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        ms = triton.testing.do_bench(lambda: sweep.launch(a, b, c, cfg), warmup=5, rep=20)
        launches = max(int(3000 / ms), 10)  # about 3 s of back-to-back work
        start = time.time()
        for _ in range(launches):
            sweep.launch(a, b, c, cfg)
        samples = []
        while time.time() - start < 2.5:
            time.sleep(0.25)
            samples.append(sample())
        torch.cuda.synchronize()
        results.append({"dtype": dtype_name, "config": cfg, "ms": ms, "samples": samples})
        print(dtype_name, values, f"{ms:.4f} ms", samples[len(samples) // 2:][:3], flush=True)
    idle = sample()
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "idle": idle, "shape": [M, N, K],
                   "fields": "clocks.sm MHz, clocks.mem MHz, power.draw W, temperature C, clocks_event_reasons.active",
                   "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
