# Compiles issue 36's cross-CTA reduction fixtures on the CPU: a tile summed over both axes (in
# either order) or over its rows, launched as a cluster of 2 or 4 CTAs (num_ctas) whose CGA layout
# splits the reduced axis, so the reduction crosses the cluster's CTAs; sm_90 and sm_100, tiles
# 64x256, 128x64 and 32x512 of f32, 4 and 8 warps. Writes <out>/<triton version>/<id>.ttgir and
# <out>/<triton version>.tsv (id, target, kernel, shape, num_ctas, num_warps, Triton's
# metadata.shared). tests/data/triton/xcta/README.md has the runs.
#
#   python bench/triton/make_xcta_fixtures.py --out tests/data/triton/xcta
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def sum_all(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, ROWS_FIRST: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    if ROWS_FIRST == 1:
        s = tl.sum(tl.sum(x, axis=1), axis=0)
    else:
        s = tl.sum(tl.sum(x, axis=0), axis=0)
    tl.store(y_ptr, s)


@triton.jit
def col_sum(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(y_ptr + c, tl.sum(x, axis=0))


KERNELS = (("sum_rows_first", sum_all, {"ROWS_FIRST": 1}), ("sum_cols_first", sum_all, {"ROWS_FIRST": 0}),
           ("col_sum", col_sum, {}))


def entries():
    for target in ("sm_90", "sm_100"):
        for name, fn, extra in KERNELS:
            for m, n in ((64, 256), (128, 64), (32, 512)):
                for ctas in (2, 4):
                    for warps in (4, 8):
                        sig, cons, attrs = tc.build_signature(fn, {"x_ptr": "*fp32", "y_ptr": "*fp32"},
                                                              {"M": m, "N": n, **extra}, "jit", target)
                        yield (f"{name}_{target}_{m}x{n}_c{ctas}_w{warps}", [target, name, f"{m}x{n}", ctas, warps],
                               fn, sig, cons, attrs, target, {"num_warps": warps, "num_ctas": ctas})


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-xcta-fixtures-cache", ["target", "kernel", "shape", "num_ctas", "num_warps"],
                         entries)
