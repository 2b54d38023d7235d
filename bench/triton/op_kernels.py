# Kernels generated from the op list: one small @triton.jit template per way the Python front end
# emits a TTGIR op, parameterized by tile shape, dtype and, where the op has one, the axis or the
# layout-forcing choice; and OPS, every op of the parser's list (kKnownOps in
# backends/triton/ttgir_parser.cc) of the tt/ttg/ttng/amdg dialects and the scratch-relevant
# others, keyed to the templates that should reach it or to why none can.
# make_generated_corpus.py compiles the templates' cross product (shapes x dtypes x num_warps x
# targets) for a release and reports which listed ops each compiled kernel actually contains.
import os
import re

import triton
import triton.language as tl

# ----------------------------------------------------------------------------------------------
# Templates. Every one takes x_ptr, y_ptr, z_ptr (the dtype's pointers) unless TYPES says more.
# ----------------------------------------------------------------------------------------------


@triton.jit
def _tile(ptr, BM: tl.constexpr, BN: tl.constexpr):
    # A row-major BM x BN tile: its row and column indices and its values (inlined).
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    return r, c, tl.load(ptr + r * BN + c)


@triton.jit
def reduce_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, AXIS: tl.constexpr,
                  OP: tl.constexpr):
    # tt.reduce over AXIS of a BM x BN tile: sum (0), max (1), argmax (2, a two-operand reduce),
    # or a reduction broadcast back over the tile (3: the result's layout converted back).
    r, c, x = _tile(x_ptr, BM, BN)
    if OP == 0:
        y = tl.sum(x, axis=AXIS)
    elif OP == 1:
        y = tl.max(x, axis=AXIS)
    elif OP == 2:
        y = tl.argmax(x, axis=AXIS).to(x.dtype)
    else:
        y = tl.sum(x, axis=AXIS)
        tl.store(z_ptr + r * BN + c, x - tl.expand_dims(y, AXIS))
    if AXIS == 0:
        tl.store(y_ptr + tl.arange(0, BN), y)
    else:
        tl.store(y_ptr + tl.arange(0, BM), y)


@triton.jit
def scan_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, AXIS: tl.constexpr,
                REVERSE: tl.constexpr):
    # tt.scan (cumulative sum) along AXIS of a BM x BN tile, forward or reversed.
    r, c, x = _tile(x_ptr, BM, BN)
    tl.store(y_ptr + r * BN + c, tl.cumsum(x, axis=AXIS, reverse=REVERSE))


@triton.jit
def histogram_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr, BINS: tl.constexpr):
    # tt.histogram of BN indices into BINS bins.
    x = tl.load(x_ptr + tl.arange(0, BN)).to(tl.int32) & (BINS - 1)
    tl.store(y_ptr + tl.arange(0, BINS), tl.histogram(x, BINS).to(y_ptr.dtype.element_ty))


@triton.jit
def gather_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, AXIS: tl.constexpr):
    # tt.gather along AXIS of a BM x BN tile, indices computed in registers.
    r, c, x = _tile(x_ptr, BM, BN)
    if AXIS == 0:
        idx = (r * 7 + c) % BM
    else:
        idx = (c * 5 + r) % BN
    tl.store(y_ptr + r * BN + c, tl.gather(x, idx, AXIS))


@triton.jit
def sort_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr,
                OP: tl.constexpr):
    # tl.sort (0), tl.topk of K (1) or tl.flip (2) along the last axis.
    r, c, x = _tile(x_ptr, BM, BN)
    if OP == 0:
        tl.store(y_ptr + r * BN + c, tl.sort(x, dim=1))
    elif OP == 1:
        tl.store(y_ptr + r * K + tl.arange(0, K)[None, :], tl.topk(x, K, dim=1))
    else:
        tl.store(y_ptr + r * BN + c, tl.flip(x, dim=1))


@triton.jit
def atomic_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr, OP: tl.constexpr):
    # Atomics whose result is used: tensor atomic_rmw (0), tensor atomic_cas (1), scalar
    # atomic_rmw (2, the result broadcast through shared memory), scalar atomic_cas (3).
    offs = tl.arange(0, BN)
    x = tl.load(x_ptr + offs)
    if OP == 0:
        old = tl.atomic_add(y_ptr + offs, x)
    elif OP == 1:
        old = tl.atomic_cas(y_ptr + offs, x, x + 1)
    elif OP == 2:
        old = x + tl.atomic_max(y_ptr, tl.load(x_ptr))
    else:
        old = x + tl.atomic_cas(y_ptr, tl.load(x_ptr), tl.load(x_ptr + 1))
    tl.store(z_ptr + offs, old)


@triton.jit
def trans_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 OP: tl.constexpr):
    # tt.trans of a 2-D tile (0), tl.permute of a 3-D tile (1: (2, 0, 1), 2: (1, 0, 2)); the
    # store of the transposed tile forces a layout conversion.
    if OP == 0:
        r, c, x = _tile(x_ptr, BM, BN)
        tl.store(y_ptr + c * BM + r, x)
        tl.store(z_ptr + tl.arange(0, BN)[:, None] * BM + tl.arange(0, BM)[None, :], tl.trans(x))
    else:
        a = tl.arange(0, BM)[:, None, None]
        b = tl.arange(0, BN)[None, :, None]
        k = tl.arange(0, BK)[None, None, :]
        x = tl.load(x_ptr + a * BN * BK + b * BK + k)
        if OP == 1:
            p = tl.permute(x, (2, 0, 1))
            tl.store(y_ptr + k.reshape(BK, 1, 1) * BM * BN + a.reshape(1, BM, 1) * BN
                     + b.reshape(1, 1, BN), p)
        else:
            p = tl.permute(x, (1, 0, 2))
            tl.store(y_ptr + b.reshape(BN, 1, 1) * BM * BK + a.reshape(1, BM, 1) * BK + k, p)


@triton.jit
def shape_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, OP: tl.constexpr):
    # Shape ops: tl.join + reshape (0, interleave), reshape + tl.split (1), tl.cat (2),
    # tl.reshape with can_reorder (3), tl.broadcast_to of a column (4).
    r, c, x = _tile(x_ptr, BM, BN)
    if OP == 0:
        y = tl.load(y_ptr + r * BN + c)
        tl.store(z_ptr + r * 2 * BN + tl.arange(0, 2 * BN)[None, :], tl.interleave(x, y))
    elif OP == 1:
        a, b = tl.split(tl.reshape(x, (BM, BN // 2, 2)))
        tl.store(y_ptr + r * (BN // 2) + tl.arange(0, BN // 2)[None, :], a + b)
    elif OP == 2:
        v = tl.load(x_ptr + tl.arange(0, BM))
        w = tl.load(y_ptr + tl.arange(0, BM))
        tl.store(z_ptr + tl.arange(0, 2 * BM), tl.cat(v, w, can_reorder=True))
    elif OP == 3:
        tl.store(z_ptr + tl.arange(0, BM * BN), tl.reshape(x, (BM * BN, ), can_reorder=True))
    else:
        col = tl.load(y_ptr + tl.arange(0, BM))[:, None]
        tl.store(z_ptr + r * BN + c, x + tl.broadcast_to(col, (BM, BN)))


@triton.jit
def cvt_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr, OP: tl.constexpr):
    # Layout conversions forced by use: a row reduction combined with a column one (0), a tile
    # added to its own transpose (1, square), a 1-D slice re-expanded along the other axis (2).
    r, c, x = _tile(x_ptr, BM, BN)
    if OP == 0:
        s = tl.sum(x, axis=1)
        t = tl.sum(x, axis=0)
        tl.store(y_ptr + tl.arange(0, BM), s)
        tl.store(z_ptr + tl.arange(0, BN), t)
    elif OP == 1:
        tl.store(y_ptr + r * BN + c, x + tl.trans(x))
    else:
        s = tl.max(x, axis=1)
        tl.store(y_ptr + r * BN + c, x * tl.reshape(s, (BM, 1)))
        tl.store(z_ptr + tl.arange(0, BM), s)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               TRANS_B: tl.constexpr, INT: tl.constexpr, PRECISION: tl.constexpr):
    # tt.dot over a K loop (pipelined with num_stages: local_alloc, async copies), B read N-major
    # and transposed in registers when TRANS_B; an int32 accumulator for INT, fp32 operands at
    # PRECISION ("ieee" or "tf32").
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if INT:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if TRANS_B:
            b = tl.trans(tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :]))
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        if INT:
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif PRECISION == "default":
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def dot_scaled_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr, FMT: tl.constexpr):
    # tt.dot_scaled of MX operands (e4m3, e5m2, or e2m1 packed two to a byte) with e8m0 scales
    # of every 32 elements.
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    a = tl.load(a_ptr + rm[:, None] * (BK // PACK) + tl.arange(0, BK // PACK)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BK // PACK)[:, None] * BN + rn[None, :])
    sa = tl.load(a_scale_ptr + rm[:, None] * (BK // 32) + tl.arange(0, BK // 32)[None, :])
    sb = tl.load(b_scale_ptr + rn[:, None] * (BK // 32) + tl.arange(0, BK // 32)[None, :])
    c = tl.dot_scaled(a, sa, FMT, b, sb, FMT)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c.to(c_ptr.dtype.element_ty))


@triton.jit
def tma_kernel(x_ptr, y_ptr, z_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, OP: tl.constexpr):
    # Device tensor descriptors: a tile copy (0: descriptor_load / descriptor_store), a GEMM
    # over descriptors (1), a warp-specialized one (2).
    if OP == 0:
        xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        t = xd.load([tl.program_id(0) * BM, tl.program_id(1) * BN])
        yd.store([tl.program_id(0) * BM, tl.program_id(1) * BN], t + 1)
    else:
        ad = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
        bd = tl.make_tensor_descriptor(y_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
        cd = tl.make_tensor_descriptor(z_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        om = tl.program_id(0) * BM
        on = tl.program_id(1) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in tl.range(0, K, BK, warp_specialize=OP == 2):
            acc = tl.dot(ad.load([om, k]), bd.load([on, k]).T, acc)
        cd.store([om, on], acc.to(z_ptr.dtype.element_ty))


@triton.jit
def desc_gather_kernel(x_ptr, y_ptr, z_ptr, M, N, BX: tl.constexpr, BY: tl.constexpr):
    # Tensor-descriptor row gather and scatter (TMA gather4 / scatter4 on Blackwell).
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BY])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BY])
    rows = tl.load(z_ptr + tl.arange(0, BX)).to(tl.int32)
    yd.scatter(xd.gather(rows, tl.program_id(0) * BY), rows, tl.program_id(0) * BY)


@triton.jit
def block_ptr_kernel(x_ptr, y_ptr, z_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # Block pointers: tt.make_tensor_ptr, tt.advance, boundary-checked loads and stores.
    xp = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    yp = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, N, BN):
        acc += tl.load(xp, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        xp = tl.advance(xp, (0, BN))
    tl.store(yp, acc.to(y_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def elementwise_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr, OP: tl.constexpr):
    # Elementwise ops with their own tt op: precise division and square root, clamp, fast
    # division (0); bitcast, umulhi, pointer/integer casts (1); fp8 conversion (2); libdevice
    # extern (3); program id / number of programs (4).
    offs = tl.arange(0, BN)
    x = tl.load(x_ptr + offs).to(tl.float32)
    if OP == 0:
        y = tl.div_rn(x, x + 3.0) + tl.sqrt_rn(tl.abs(x)) + tl.clamp(x, -1.0, 1.0)
        y += tl.fdiv(x, x + 2.0)
    elif OP == 1:
        u = x.to(tl.uint32, bitcast=True)
        y = tl.umulhi(u, u + 7).to(tl.float32)
        p = (x_ptr.to(tl.int64, bitcast=True) + 0).to(tl.pointer_type(x_ptr.dtype.element_ty),
                                                      bitcast=True)
        y += tl.load(p + offs).to(tl.float32)
    elif OP == 2:
        y = x.to(tl.float8e5).to(tl.float32) + x.to(tl.bfloat16).to(tl.float32)
    elif OP == 3:
        y = tl.extra.libdevice.pow(x, x) + tl.extra.libdevice.erfinv(x)
    else:
        y = x + tl.program_id(0) + tl.num_programs(0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty))


@triton.jit
def inline_asm_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr):
    # tt.elementwise_inline_asm (a PTX move: NVIDIA targets).
    x = tl.load(x_ptr + tl.arange(0, BN)).to(tl.int32)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True,
                                  pack=1)
    tl.store(y_ptr + tl.arange(0, BN), y.to(y_ptr.dtype.element_ty))


@triton.jit
def debug_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr, OP: tl.constexpr):
    # tt.print (0) and tt.assert (1), compiled with debug=True.
    x = tl.load(x_ptr + tl.arange(0, BN))
    if OP == 0:
        tl.device_print("x", x)
    else:
        tl.device_assert(x == x, "nan")
    tl.store(y_ptr + tl.arange(0, BN), x)


@triton.jit(noinline=True)
def _row_sums(X, Y, BM: tl.constexpr, BN: tl.constexpr):
    x = tl.load(X + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    tl.store(Y + tl.arange(0, BM), tl.sum(x, axis=1))


@triton.jit
def call_kernel(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr):
    # tt.call of a non-inlined device function holding a reduction, with a reduction of the
    # caller's own live across the call.
    x = tl.load(x_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    _row_sums(x_ptr, y_ptr, BM, BN)
    tl.store(z_ptr + tl.arange(0, BN), tl.sum(x, axis=0))


@triton.jit
def while_kernel(x_ptr, y_ptr, z_ptr, BN: tl.constexpr):
    # A data-dependent while loop (scf.while) around a reduction.
    x = tl.load(x_ptr + tl.arange(0, BN))
    n = tl.load(z_ptr).to(tl.int32)
    i = 0
    while i < n:
        x = x - tl.max(x, axis=0)
        i += 1
    tl.store(y_ptr + tl.arange(0, BN), x)


# ----------------------------------------------------------------------------------------------
# Generators: template, argument types, parameter grid, dtypes, targets, options.
# ----------------------------------------------------------------------------------------------

NVIDIA = ["sm_80", "sm_90", "sm_100", "sm_120"]
AMD = ["gfx942", "gfx950"]
TARGETS = NVIDIA + AMD
SHAPES = [(1, 32), (2, 64), (16, 16), (8, 128), (32, 64), (64, 32), (128, 8), (64, 128),
          (256, 16), (128, 256)]


def _xyz(dt, out):
    return dict(x_ptr="*" + dt, y_ptr="*" + dt, z_ptr="*" + dt)


def _grid(**axes):
    out = [{}]
    for name, values in axes.items():
        out = [dict(d, **{name: v}) for d in out for v in values]
    return out


def _shapes(extra=None, **more):
    return [dict(BM=m, BN=n, **(extra or {})) for m, n in SHAPES for extra in _grid(**more)]


GENERATORS = {
    "reduce": dict(fn=reduce_kernel, types=_xyz, params=_shapes(AXIS=[0, 1], OP=[0, 1, 2, 3]),
                   dtypes=["fp32", "fp16", "bf16", "i32"]),
    "scan": dict(fn=scan_kernel, types=_xyz, params=_shapes(AXIS=[0, 1], REVERSE=[False, True]),
                 dtypes=["fp32", "fp16", "i32"]),
    "histogram": dict(fn=histogram_kernel, types=_xyz,
                      params=_grid(BN=[16, 64, 256, 1024], BINS=[8, 32, 128, 512]),
                      dtypes=["i32"]),
    "gather": dict(fn=gather_kernel, types=_xyz, params=_shapes(AXIS=[0, 1]),
                   dtypes=["fp32", "fp16", "i32"]),
    "sort": dict(fn=sort_kernel, types=_xyz,
                 params=[p for p in _shapes(K=[4], OP=[0, 1, 2]) if p["BN"] >= 8 and
                         p["BM"] * p["BN"] <= 8192],
                 dtypes=["fp32", "fp16", "i32"]),
    "atomic": dict(fn=atomic_kernel, types=_xyz, params=_grid(BN=[32, 128, 512], OP=[0, 1, 2, 3]),
                   dtypes=["fp32", "i32"]),
    "trans": dict(fn=trans_kernel, types=_xyz,
                  params=[dict(p, BK=1) for p in _shapes(OP=[0])] +
                  _grid(BM=[2, 4, 16], BN=[8, 32], BK=[4, 16, 64], OP=[1, 2]),
                  dtypes=["fp32", "fp16", "i8"]),
    "shape": dict(fn=shape_kernel, types=_xyz,
                  params=[p for p in _shapes(OP=[0, 1, 2, 3, 4]) if p["BN"] >= 2],
                  dtypes=["fp32", "fp16", "i32"]),
    "cvt": dict(fn=cvt_kernel, types=_xyz,
                params=_shapes(OP=[0, 2]) + [dict(BM=n, BN=n, OP=1) for n in (16, 32, 64, 128)],
                dtypes=["fp32", "fp16", "i32"]),
    "dot": dict(fn=dot_kernel,
                types=lambda dt, out: dict(a_ptr="*" + dt, b_ptr="*" + dt, c_ptr="*" + out,
                                           K="i32"),
                div16={"K"},
                params=_grid(BM=[16, 64, 128], BN=[16, 64, 128, 256], BK=[16, 32, 64],
                             TRANS_B=[False, True]),
                dtypes=["fp16", "bf16", "fp32", "tf32", "i8", "fp8e4nv", "fp8e5"],
                stages=[1, 2, 3, 4],
                # 8-bit operands take K >= 32 on the MMA targets; sm_80 has no fp8e4nv, gfx950
                # no tf32.
                valid=lambda p, dt, nw, t: (dt not in ("i8", "fp8e4nv", "fp8e5") or
                                            p["BK"] >= 32) and (dt != "fp8e4nv" or t != "sm_80")
                and (dt != "tf32" or t != "gfx950")),
    "dot_scaled": dict(fn=dot_scaled_kernel,
                       types=lambda dt, out: dict(a_ptr="*" + dt, a_scale_ptr="*u8",
                                                  b_ptr="*" + dt, b_scale_ptr="*u8",
                                                  c_ptr="*" + out),
                       params=_grid(BM=[32, 64, 128], BN=[32, 64, 128], BK=[64, 128]),
                       dtypes=["e4m3", "e5m2", "e2m1"],
                       targets=["sm_100", "sm_120", "gfx950", "sm_90", "gfx942"]),
    "tma": dict(fn=tma_kernel,
                types=lambda dt, out: dict(_xyz(dt, out), M="i32", N="i32", K="i32"),
                div16={"M", "N", "K"},
                params=_grid(BM=[16, 64, 128], BN=[32, 64, 128], BK=[32, 64], OP=[0, 1, 2]),
                dtypes=["fp16", "bf16", "fp8e4nv"], stages=[1, 2, 3],
                targets=["sm_90", "sm_100", "sm_120", "sm_80", "gfx950"],
                # Warp specialization takes whole warp groups; fp8e4nv is Hopper's and later.
                valid=lambda p, dt, nw, t: (p["OP"] != 2 or nw >= 4) and
                (dt != "fp8e4nv" or t in ("sm_90", "sm_100"))),
    "desc_gather": dict(fn=desc_gather_kernel,
                        types=lambda dt, out: dict(x_ptr="*" + dt, y_ptr="*" + dt, z_ptr="*i32",
                                                   M="i32", N="i32"),
                        div16={"M", "N"}, params=_grid(BX=[8, 16, 32], BY=[32, 64, 128]),
                        dtypes=["fp16", "fp32"], targets=["sm_100", "sm_90", "sm_120"]),
    "block_ptr": dict(fn=block_ptr_kernel,
                      types=lambda dt, out: dict(_xyz(dt, out), M="i32", N="i32"),
                      div16={"N"}, params=[p for p in _shapes() if p["BM"] * p["BN"] <= 8192],
                      dtypes=["fp16", "fp32"], stages=[1, 3]),
    "elementwise": dict(fn=elementwise_kernel, types=_xyz,
                        params=_grid(BN=[32, 256, 1024], OP=[0, 1, 2, 3, 4]),
                        dtypes=["fp32", "fp16"]),
    "inline_asm": dict(fn=inline_asm_kernel, types=_xyz, params=_grid(BN=[64, 512]),
                       dtypes=["i32"], targets=NVIDIA),
    "debug": dict(fn=debug_kernel, types=_xyz, params=_grid(BN=[32, 256], OP=[0, 1]),
                  dtypes=["fp32", "i32"], options=dict(debug=True)),
    "call": dict(fn=call_kernel, types=_xyz, params=[p for p in _shapes() if p["BM"] > 1],
                 dtypes=["fp32", "fp16"]),
    "while": dict(fn=while_kernel, types=_xyz, params=_grid(BN=[32, 256, 2048]),
                  dtypes=["fp32", "i32"]),
}


def dtypes_of(gen, dt):
    """(pointer dtype, output dtype, extra constexprs) of a generator's dtype: "tf32" is fp32
    operands at tf32 precision, "fp32" at IEEE precision; int8 dots accumulate in int32;
    dot_scaled's dtypes are MX formats."""
    if gen == "dot":
        prec = {"fp32": "ieee", "tf32": "tf32"}.get(dt, "default")
        out = {"i8": "i32", "fp32": "fp32", "tf32": "fp32"}.get(dt, "fp16")
        return ("fp32" if dt == "tf32" else dt), out, dict(INT=dt == "i8", PRECISION=prec)
    if gen == "dot_scaled":
        # The MX format names the operands' storage: e2m1 two to a byte.
        return {"e4m3": "fp8e4nv", "e5m2": "fp8e5", "e2m1": "u8"}[dt], "bf16", dict(FMT=dt)
    return dt, dt, {}


# ----------------------------------------------------------------------------------------------
# The op list and how each op is reached
# ----------------------------------------------------------------------------------------------

PARSER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "backends",
                      "triton", "ttgir_parser.cc")
DIALECTS = ("tt.", "ttg.", "ttng.", "amdg.")
# Ops of other dialects that matter to scratch or that Triton's passes insert (barriers, fences,
# AMD scheduling), listed beside the four dialects.
OTHERS = ("gpu.barrier", "llvm.fence", "rocdl.s.barrier", "rocdl.s.setprio", "rocdl.s.waitcnt",
          "rocdl.sched.barrier", "rocdl.sched.group.barrier", "scf.while", "scf.if", "scf.for",
          "scf.execute_region", "scf.index_switch", "ub.poison")


def known_ops():
    """kKnownOps of the parser, read from its source (so the list never drifts)."""
    text = open(PARSER).read()
    body = text[text.index("kKnownOps[] = {"):]
    body = body[:body.index("};")]
    return re.findall(r'"([a-z_0-9.]+)"', body)


def listed_ops():
    return [op for op in known_ops() if op.startswith(DIALECTS) or op in OTHERS]


# Op -> the generators meant to reach it, or a string: why no generated kernel does.
PASS_ONLY = "no Python path: "
OPS = {
    "tt.addptr": ["reduce", "dot"], "tt.load": ["reduce"], "tt.store": ["reduce"],
    "tt.make_range": ["reduce"], "tt.splat": ["reduce"], "tt.broadcast": ["reduce", "shape"],
    "tt.expand_dims": ["reduce"], "tt.return": ["reduce"], "tt.get_program_id": ["dot"],
    "tt.get_num_programs": ["elementwise"], "tt.reduce": ["reduce", "cvt"],
    "tt.reduce.return": ["reduce"], "tt.scan": ["scan"], "tt.scan.return": ["scan"],
    "tt.histogram": ["histogram"], "tt.gather": ["gather"], "tt.trans": ["trans", "dot"],
    "tt.reshape": ["shape", "trans"], "tt.join": ["shape", "sort"], "tt.split": ["shape"],
    "tt.cat": ["shape"], "tt.atomic_rmw": ["atomic"], "tt.atomic_cas": ["atomic"],
    "tt.dot": ["dot", "tma"], "tt.dot_scaled": ["dot_scaled"], "tt.bitcast": ["elementwise"],
    "tt.int_to_ptr": ["elementwise"], "tt.ptr_to_int": ["elementwise"],
    "tt.mulhiui": ["elementwise"], "tt.precise_divf": ["elementwise"],
    "tt.precise_sqrt": ["elementwise"], "tt.clampf": ["elementwise"],
    "tt.approx_divf": ["elementwise"], "tt.fp_to_fp": ["elementwise", "dot"],
    "tt.extern_elementwise": ["elementwise"], "tt.elementwise_inline_asm": ["inline_asm"],
    "tt.print": ["debug"], "tt.assert": ["debug"], "tt.call": ["call"],
    # tl.make_block_ptr: rewritten to plain pointers before the TTGIR stage (3.6), refused by
    # the front end ("Block pointers have been removed", 3.9).
    "tt.make_tensor_ptr": PASS_ONLY + "block pointers (the block_ptr template) are rewritten "
                          "to pointers before TTGIR in 3.6 and refused by the 3.9 front end",
    "tt.advance": PASS_ONLY + "as tt.make_tensor_ptr",
    "tt.make_tensor_descriptor": ["tma", "desc_gather"], "tt.descriptor_load": ["tma"],
    "tt.descriptor_store": ["tma"], "tt.descriptor_gather": ["desc_gather"],
    "tt.descriptor_scatter": ["desc_gather"],
    "tt.unsplat": PASS_ONLY + "made by Triton's passes from a one-element tensor "
                  "(reached, if at all, through reduce / atomic kernels)",
    "ttg.convert_layout": ["cvt", "reduce", "trans"], "ttg.local_alloc": ["dot", "tma"],
    "ttg.local_load": ["dot"], "ttg.local_store": ["dot"], "ttg.local_dealloc": ["dot"],
    "ttg.memdesc_index": ["dot"], "ttg.memdesc_subslice": ["dot", "tma"],
    "ttg.memdesc_trans": ["dot", "tma"], "ttg.memdesc_reshape": ["dot_scaled"],
    "ttg.memdesc_reinterpret": ["dot", "tma"], "ttg.async_copy_global_to_local": ["dot"],
    "ttg.async_commit_group": ["dot"], "ttg.async_wait": ["dot"], "ttg.barrier": ["dot", "tma"],
    "ttg.fp4_to_fp": ["dot_scaled"], "ttg.global_scratch_alloc": ["tma", "debug"],
    "ttg.warp_specialize": ["tma"], "ttg.warp_return": ["tma"], "ttg.warp_yield": ["tma"],
    "ttng.async_tma_copy_global_to_local": ["tma"], "ttng.async_tma_copy_local_to_global": ["tma"],
    "ttng.async_tma_gather": ["desc_gather"], "ttng.async_tma_scatter": ["desc_gather"],
    "ttng.async_tma_store_wait": ["tma"], "ttng.barrier_expect": ["tma"],
    "ttng.fence_async_shared": ["tma", "dot"], "ttng.init_barrier": ["tma", "dot"],
    "ttng.inval_barrier": ["tma", "dot"], "ttng.wait_barrier": ["tma", "dot"],
    "ttng.arrive_barrier": ["tma"], "ttng.reinterpret_tensor_descriptor": ["tma"],
    "ttng.tensormap_create": ["tma", "desc_gather"],
    "ttng.tensormap_fenceproxy_acquire": ["tma", "desc_gather"],
    "ttng.tc_gen5_mma": ["dot", "tma"], "ttng.tc_gen5_mma_scaled": ["dot_scaled"],
    "ttng.tc_gen5_commit": ["dot", "tma"], "ttng.tmem_alloc": ["dot", "tma"],
    "ttng.tmem_load": ["dot", "tma"], "ttng.tmem_store": ["dot"], "ttng.tmem_copy": ["dot_scaled"],
    "ttng.tmem_subslice": PASS_ONLY + "epilogue subtiling of a tensor-memory accumulator "
                          "(the catalogue's gemm_persistent EPILOGUE_SUBTILE)",
    "ttng.warp_group_dot": ["dot", "tma"], "ttng.warp_group_dot_wait": ["dot", "tma"],
    "amdg.buffer_load": ["dot", "reduce"], "amdg.buffer_store": ["reduce"],
    "amdg.buffer_atomic_cas": ["atomic"], "amdg.buffer_atomic_rmw": ["atomic"], "amdg.buffer_load_to_local": ["dot"],
    "amdg.cond_barrier": PASS_ONLY + "AMD's ping-pong scheduling of large GEMM tiles "
                         "(num_stages and 8 warps on gfx942/gfx950)",
    "amdg.in_thread_transpose": ["dot"],
    "amdg.instruction_sched_hint": PASS_ONLY + "AMD's scheduling-hint pass "
                                   "(TRITON_HIP_USE_... environment options, not a kernel)",
    "amdg.memory_counter_wait": ["dot"],
    "amdg.scaled_upcast_fp4": ["dot_scaled"], "amdg.scaled_upcast_fp8": ["dot_scaled"],
    "amdg.upcast_mxfp": ["dot_scaled"],
    "gpu.barrier": ["dot", "atomic"], "llvm.fence": ["dot"], "rocdl.s.barrier": ["dot"],
    "rocdl.s.setprio": PASS_ONLY + "AMD's ping-pong scheduling (as amdg.cond_barrier)",
    "rocdl.s.waitcnt": ["dot"], "rocdl.sched.barrier": ["dot"],
    "rocdl.sched.group.barrier": PASS_ONLY + "AMD's scheduling-hint pass (as "
                                 "amdg.instruction_sched_hint)",
    "rocdl.workitem.id.x": ["dot"], "scf.for": ["dot"], "scf.if": ["reduce"],
    "scf.while": ["while"], "scf.execute_region": PASS_ONLY + "made by passes (none from the "
                                                              "front end in these releases)",
    "scf.index_switch": PASS_ONLY + "warp-specialization partitioning passes",
    "ub.poison": ["dot", "tma"],
}

# Ops no template reaches that a registered-op fixture does (bench/triton/make_op_fixtures.py,
# tests/data/triton/ops_registered): Gluon's, Triton 3.9's newer tl ops, gfx1250's.
FIXTURE_ONLY = "no template: a registered-op fixture (make_op_fixtures.py) has it"
OPS.update({op: FIXTURE_ONLY for op in (
    "tt.atomic_load", "tt.atomic_poll", "tt.atomic_store", "tt.grid_dependency_launch_dependents",
    "tt.grid_dependency_wait", "tt.map_elementwise", "tt.map_elementwise.return", "ttg.inline_asm",
    "ttg.local_atomic_scatter_rmw", "ttg.local_gather", "ttg.local_scatter",
    "ttng.async_copy_mbarrier_arrive", "ttng.async_shared_store", "ttng.async_tma_reduce",
    "ttng.clc_get_program_id", "ttng.clc_is_canceled", "ttng.clc_load_result", "ttng.clc_try_cancel",
    "ttng.cluster_barrier", "ttng.packed_arith", "amdg.arrive_barrier", "amdg.async_copy_local_to_global",
    "amdg.async_copy_mbarrier_arrive", "amdg.async_tdm_copy_global_to_local",
    "amdg.async_tdm_copy_local_to_global", "amdg.async_tdm_fused_copy_global_to_local",
    "amdg.async_tdm_gather", "amdg.async_tdm_scatter", "amdg.async_tdm_wait", "amdg.cluster_barrier_arrive",
    "amdg.cluster_barrier_wait", "amdg.extract_slice", "amdg.init_barrier", "amdg.local_load_packed_transposed",
    "amdg.scaled_downcast_fp4", "amdg.scaled_downcast_fp8", "amdg.tdm_prefetch",
    "amdg.update_tensor_descriptor", "amdg.wait_barrier")})

# Why a template meant to reach an op produced no kernel with it in the compiled releases (what
# the TTGIR showed instead), for the coverage report.
NOT_REACHED = {
    "tt.make_tensor_descriptor": "device descriptors are lowered before the TTGIR stage: to "
                                 "ttng TMA ops on sm_90 / sm_100 (covered), to pointer loads "
                                 "elsewhere",
    "tt.descriptor_load": "as tt.make_tensor_descriptor",
    "tt.descriptor_store": "as tt.make_tensor_descriptor",
    "tt.descriptor_gather": "as tt.make_tensor_descriptor (ttng.async_tma_gather on sm_100)",
    "tt.descriptor_scatter": "as tt.make_tensor_descriptor (ttng.async_tma_scatter on sm_100)",
    "tt.approx_divf": "tl.fdiv and tl.div_rn lower to arith.divf and tt.precise_divf here",
    "ttg.memdesc_reshape": "not from these dot_scaled shapes; the held-out corpus's "
                           "dot_scaled_trans has it",
    "amdg.memory_counter_wait": "not from these pipelined AMD dots; the held-out corpus's "
                                "4-stage sliding-window attention has it",
    "llvm.fence": "as amdg.memory_counter_wait",
    "rocdl.s.barrier": "not from these AMD dots; the catalogue and held-out corpus have it",
    "amdg.upcast_mxfp": "gfx942 dot_scaled fails to compile in 3.6 (pass pipeline) and is "
                        "decomposed otherwise in 3.9; the catalogue has it",
}

OP_RE = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([a-z_]+\.[a-z_0-9.]+)"?(?=[\s(<{:]|$)', re.M)


def ops_in(ttgir):
    """The op names a TTGIR module uses (the first word of each operation; tt.func is the
    function header the parser reads as such)."""
    return set(OP_RE.findall(ttgir)) - {"tt.func"}
