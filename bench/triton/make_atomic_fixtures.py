# Compiles issue 36's atomic-result fixtures on the CPU: tl.atomic_add / atomic_cas on a tensor
# and tl.atomic_max / atomic_cas on a scalar, each with its result used (Triton broadcasts the
# one result to every thread holding a copy of its element, through shared memory where it must),
# for BN 16, 32 and 64 elements under 1, 2 and 4 warps, on sm_80, sm_90 and gfx942; and a row
# sum added atomically (the sum's slice layout converted before the atomic). Writes
# <out>/<triton version>/<id>.ttgir and <out>/<triton version>.tsv (id, target, op, bn,
# num_warps, Triton's metadata.shared). tests/data/triton/atomic/README.md has the runs.
#
#   python bench/triton/make_atomic_fixtures.py --out tests/data/triton/atomic
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402
from op_kernels import atomic_kernel  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def atomic_row_sum(x_ptr, y_ptr, z_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    s = tl.sum(tl.load(x_ptr + r[:, None] * C + c[None, :]), axis=1)
    tl.store(z_ptr + r, tl.atomic_add(y_ptr + r, s))


TARGETS = ("sm_80", "sm_90", "gfx942")
# atomic_kernel's OP: 0 tensor atomic_rmw, 1 tensor atomic_cas, 2 scalar atomic_rmw, 3 scalar
# atomic_cas (the CAS forms on i32, the others on fp32).
OPS = {0: "tensor_rmw", 1: "tensor_cas", 2: "scalar_rmw", 3: "scalar_cas"}
SIZES = (16, 32, 64)
WARPS = (1, 2, 4)


def entries():
    for target in TARGETS:
        for op, name in OPS.items():
            dtype = "*i32" if op in (1, 3) else "*fp32"
            for bn in SIZES:
                for warps in WARPS:
                    sig, cons, attrs = tc.build_signature(atomic_kernel, {"x_ptr": dtype, "y_ptr": dtype, "z_ptr": dtype},
                                                          {"BN": bn, "OP": op}, "jit", target)
                    yield (f"atomic_{name}_{target}_bn{bn}_w{warps}", [target, name, bn, warps], atomic_kernel, sig,
                           cons, attrs, target, {"num_warps": warps})
        for rows, cols, warps in ((2, 32, 2), (4, 32, 4), (8, 32, 2), (2, 64, 2)):
            sig, cons, attrs = tc.build_signature(atomic_row_sum, {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32"},
                                                  {"R": rows, "C": cols}, "jit", target)
            yield (f"atomic_row_sum_{target}_{rows}x{cols}_w{warps}", [target, "row_sum", rows, warps], atomic_row_sum,
                   sig, cons, attrs, target, {"num_warps": warps})


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-atomic-fixtures-cache", ["target", "op", "bn", "num_warps"], entries)
