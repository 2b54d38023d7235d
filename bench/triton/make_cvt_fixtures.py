# Compiles issue 36's small-tile layout-conversion fixtures on the CPU: a tile stored transposed
# (Triton converts the load's coalesced layout into the store's, a ttg.convert_layout) for
# num_warps 1, 2 and 4, tiles 16x16, 32x16 and 16x64 of i32, f16 and f32, on sm_80, sm_90 and
# gfx942. Writes <out>/<triton version>/<id>.ttgir (asm["ttgir"]) and <out>/<triton version>.tsv
# (one line per fixture: id, target, dtype, shape, num_warps, Triton's metadata.shared).
# tests/data/triton/cvt/README.md has the run and how the files are packed.
#
#   python bench/triton/make_cvt_fixtures.py --out tests/data/triton/cvt
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


def entries():
    for target in TARGETS:
        for dtype in DTYPES:
            for m, n in SHAPES:
                for warps in WARPS:
                    sig, cons, attrs = tc.build_signature(cvt_trans, {"X": "*" + dtype, "Y": "*" + dtype},
                                                          {"M": m, "N": n}, "jit", target)
                    yield (f"cvt_trans_{target}_{dtype}_{m}x{n}_w{warps}", [target, dtype, f"{m}x{n}", warps],
                           cvt_trans, sig, cons, attrs, target, {"num_warps": warps})


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-cvt-fixtures-cache", ["target", "dtype", "shape", "num_warps"], entries)
