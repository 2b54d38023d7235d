# Compiles issue 36's AMD LDS fixtures on the CPU: layout conversions of tiles too large for the
# LDS (3-D permutes, 2-D transposes, a matmul's accumulator stored in another layout), which
# Triton's OptimizeLDSUsage pass splits through a temporary layout. Targets gfx942 (64 KiB) and
# gfx950 (160 KiB); num_warps 4 and 8. Writes <out>/<triton version>/<id>.ttgir and
# <out>/<triton version>.tsv (id, target, kernel, dtype, shape, num_warps, metadata.shared).
# tests/data/triton/lds/README.md has the run and how the files are packed.
#
#   python bench/triton/make_lds_fixtures.py --out tests/data/triton/lds
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def lds_perm3(X, Y, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, P: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(X + a * B * C + b * C + c)
    if P == 0:  # stored as [A, C, B]
        tl.store(Y + a * B * C + c * B + b, x)
    elif P == 1:  # stored as [C, B, A]
        tl.store(Y + c * B * A + b * A + a, x)
    else:  # stored as [B, C, A]
        tl.store(Y + b * C * A + c * A + a, x)


@triton.jit
def lds_trans2(X, Y, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    tl.store(Y + c * M + r, tl.load(X + r * N + c))


@triton.jit
def lds_dot(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # The accumulator (an MFMA layout) stored transposed: converted to a blocked layout.
    m = tl.arange(0, M)[:, None]
    n = tl.arange(0, N)[None, :]
    k = tl.arange(0, K)
    a = tl.load(A + m * K + k[None, :])
    b = tl.load(B + k[:, None] * N + n)
    tl.store(C + n * M + m, tl.dot(a, b))


def configs():
    for target in ("gfx942", "gfx950"):
        for warps in (4, 8):
            for dtype in ("fp16", "fp32"):
                for shape in ((8, 32, 256), (4, 64, 256), (16, 32, 128), (8, 64, 128)):
                    for p in (0, 1, 2):
                        yield (target, warps, "lds_perm3", dtype, shape, {"P": p})
                for shape in ((256, 256), (128, 512), (512, 128)):
                    yield (target, warps, "lds_trans2", dtype, shape, {})
            for shape in ((256, 256, 32), (128, 256, 64), (256, 128, 32)):
                yield (target, warps, "lds_dot", "fp16", shape, {})


def entries():
    kernels = {"lds_perm3": lds_perm3, "lds_trans2": lds_trans2, "lds_dot": lds_dot}
    for target, warps, name, dtype, shape, extra in configs():
        if name == "lds_perm3":
            params, types = dict(zip("ABC", shape)), {"X": "*" + dtype, "Y": "*" + dtype}
        elif name == "lds_trans2":
            params, types = dict(zip("MN", shape)), {"X": "*" + dtype, "Y": "*" + dtype}
        else:
            params, types = dict(zip("MNK", shape)), {"A": "*fp16", "B": "*fp16", "C": "*fp32"}
        params.update(extra)
        sig, cons, attrs = tc.build_signature(kernels[name], types, params, "jit", target)
        shape_text = "x".join(map(str, shape))
        suffix = "".join(f"_{key.lower()}{v}" for key, v in extra.items())
        yield (f"{name}_{target}_{dtype}_{shape_text}_w{warps}{suffix}", [target, name, dtype, shape_text, warps],
               kernels[name], sig, cons, attrs, target, {"num_warps": warps})


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-lds-fixtures-cache", ["target", "kernel", "dtype", "shape", "num_warps"],
                         entries)
