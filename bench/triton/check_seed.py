"""Compiles the seed 002 GeGLU kernel with Triton on the GPU machine and records what Triton
says: metadata.shared and the OutOfResources message the device's launch check raises.

Run on the GPU machine (Triton installed):  python3 bench/triton/check_seed.py --out $OUT
The kernel is bench/triton/make_fixtures.py's geglu_kernel (fp32, 4 warps, tf32 dots), the
configurations are the seed's tiles 16/16 and the 32/32 the project README quotes, 3 stages.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    records = []
    for (bt, bh) in [(16, 16), (32, 32)]:
        cfg = dict(kernel="geglu", target=90, dtype="fp32", out_dtype="fp32",
                   params=dict(BLOCK_T=bt, RDIM=2048, BLOCK_H=bh), num_warps=4, num_stages=3,
                   id="seed_geglu_t%d_h%d" % (bt, bh))
        rec = make_fixtures.compile_one(cfg)
        rec.pop("ttgir", None)
        rec.pop("alloc_ir", None)
        rec.pop("traceback", None)
        records.append(rec)
        print(json.dumps(rec), flush=True)
    info = {"device": torch.cuda.get_device_name(0), "triton": make_fixtures.triton.__version__,
            "torch": torch.__version__}
    with open(os.path.join(args.out, "seed_check.json"), "w") as f:
        json.dump({"info": info, "records": records}, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
