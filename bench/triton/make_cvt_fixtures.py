# Compiles issue 36's small-tile layout-conversion fixtures on the CPU: a tile stored transposed
# (Triton converts the load's coalesced layout into the store's, a ttg.convert_layout) for
# num_warps 1, 2 and 4, tiles 16x16, 32x16 and 16x64 of i32, f16 and f32, on sm_80, sm_90 and
# gfx942. Writes <out>/<triton version>/<id>.ttgir (asm["ttgir"]) and <out>/<triton version>.tsv
# (one line per fixture: id, target, dtype, shape, num_warps, Triton's metadata.shared).
# tests/data/triton/cvt/README.md has the run and how the files are packed.
#
#   python bench/triton/make_cvt_fixtures.py --out tests/data/triton/cvt
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def cvt_trans(X, Y, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(X + rows * N + cols)
    tl.store(Y + cols * M + rows, x)


TARGETS = ("sm_80", "sm_90", "gfx942")
DTYPES = ("i32", "fp16", "fp32")
SHAPES = ((16, 16), (32, 16), (16, 64))
WARPS = (1, 2, 4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache", default="/tmp/scratchsim-cvt-fixtures-cache")
    args = ap.parse_args()
    version = triton.__version__
    tc.set_cache_dir(os.path.join(args.cache, version))
    tc.install_stop_hook(True)
    ttgir_dir = os.path.join(args.out, version)
    os.makedirs(ttgir_dir, exist_ok=True)
    lines = ["id\ttarget\tdtype\tshape\tnum_warps\tshared"]
    for target in TARGETS:
        for dtype in DTYPES:
            for m, n in SHAPES:
                for warps in WARPS:
                    sig, cons, attrs = tc.build_signature(cvt_trans, {"X": "*" + dtype, "Y": "*" + dtype},
                                                          {"M": m, "N": n}, "jit", target)
                    k, _ = tc.compile_kernel(cvt_trans, sig, cons, attrs, target, {"num_warps": warps})
                    fid = f"cvt_trans_{target}_{dtype}_{m}x{n}_w{warps}"
                    with open(os.path.join(ttgir_dir, fid + ".ttgir"), "w") as f:
                        f.write(k.asm["ttgir"])
                    lines.append(f"{fid}\t{target}\t{dtype}\t{m}x{n}\t{warps}\t{k.metadata.shared}")
                    print(lines[-1], flush=True)
    with open(os.path.join(args.out, version + ".tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
