# Compiles issue 36's conversions out of a source every warp holds whole, from TTGIR written here:
# a 64-element i32 tensor loaded in layout A, converted to layout B and stored, at 2 warps on
# sm_90, for pairs of #ttg.linear layouts (a source broadcast over the warps into destinations
# whose warps split the tensor, with few and many register/lane exchanges; the reverse; both
# split). Triton 3.9 converts out of a warp-broadcast source within each warp where Triton 3.6
# goes through shared memory. Writes <out>/<triton version>/<id>.ttgir (the compiled module's
# asm["ttgir"]) and <out>/<triton version>.tsv (id, case, Triton's metadata.shared).
# tests/data/triton/cvt_bcast/README.md has the runs.
#
#   python bench/triton/make_cvt_bcast_fixtures.py --out tests/data/triton/cvt_bcast
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402

MODULE = """#A = {a}
#B = {b}
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 2 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32{extra}}} {{
  tt.func public @cvt(%x: !tt.ptr<i32>, %y: !tt.ptr<i32>) {{
    %r = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #A>
    %p = tt.splat %x : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>, #A>
    %pa = tt.addptr %p, %r : tensor<64x!tt.ptr<i32>, #A>, tensor<64xi32, #A>
    %v = tt.load %pa : tensor<64x!tt.ptr<i32>, #A>
    %c = ttg.convert_layout %v : tensor<64xi32, #A> -> tensor<64xi32, #B>
    %r2 = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #B>
    %q = tt.splat %y : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>, #B>
    %qa = tt.addptr %q, %r2 : tensor<64x!tt.ptr<i32>, #B>, tensor<64xi32, #B>
    tt.store %qa, %c : tensor<64x!tt.ptr<i32>, #B>
    tt.return
  }}
}}
"""


def linear(reg, lane, warp):
    """A 1-D #ttg.linear layout from its register, lane and warp bases (element offsets)."""
    bases = lambda v: "[" + ", ".join(f"[{x}]" for x in v) + "]"  # noqa: E731
    return f"#ttg.linear<{{register = {bases(reg)}, lane = {bases(lane)}, warp = {bases(warp)}, block = []}}>"


BROADCAST = linear([1], [2, 4, 8, 16, 32], [0])
SPLIT = linear([], [1, 2, 4, 8, 16], [32])
CASES = {
    "bcast_to_split": (BROADCAST, SPLIT),
    "bcast_to_split_lanes_reversed": (BROADCAST, linear([], [16, 8, 4, 2, 1], [32])),
    "bcast_to_split_register_kept": (BROADCAST, linear([1], [2, 4, 8, 16, 0], [32])),
    "bcast_to_bcast_register_to_lane": (BROADCAST, linear([32], [1, 2, 4, 8, 16], [0])),
    "bcast_two_registers_to_split": (linear([1, 2], [4, 8, 16, 32, 0], [0]), linear([16], [1, 2, 4, 8, 0], [32])),
    "bcast_two_registers_to_split_two": (linear([1, 2], [4, 8, 16, 32, 0], [0]), linear([16, 8], [1, 2, 4, 0, 0], [32])),
    "split_to_bcast": (SPLIT, BROADCAST),
    "split_to_split_other_warp_bit": (SPLIT, linear([], [2, 4, 8, 16, 32], [1])),
}


def entries():
    # Triton 3.9 writes "ttng.two-ctas" into every NVIDIA module and requires it on reading one.
    extra = ', "ttng.two-ctas" = false' if not triton.__version__.startswith("3.6") else ""
    src_dir = tempfile.mkdtemp(prefix="scratchsim-cvt-bcast-")
    for case, (a, b) in CASES.items():
        fid = f"cvt_bcast_{case}_sm_90_w2"
        src = os.path.join(src_dir, fid + ".ttgir")
        with open(src, "w") as f:
            f.write(MODULE.format(a=a, b=b, extra=extra))
        yield fid, [case], src, None, None, None, "sm_90", None


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-cvt-bcast-fixtures-cache", ["case"], entries)
