# Compiles issue 36's registered-op fixtures on the CPU: one small kernel per op that Triton 3.6 /
# 3.9 registers and a kernel can reach (Triton Python, or Gluon for the ops only Gluon writes),
# for the target that lowers it (sm_90, sm_100, gfx942, gfx950, gfx1250), and for the ops that
# take scratch (tt.atomic_load, tt.atomic_poll, ttg.local_atomic_scatter_rmw) a grid of tensor
# sizes and warps, result used or not. A kernel a release cannot build (an op or API it lacks)
# is skipped and said. Writes <out>/<triton version>/<id>.ttgir and <out>/<triton version>.tsv
# (id, op, target, num_warps, Triton's metadata.shared). tests/data/triton/ops_registered/README.md
# has the runs; docs/validation/data/triton/op_registry_<version>.tsv lists the ops.
#
#   python bench/triton/make_op_fixtures.py --out tests/data/triton/ops_registered
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import triton_compile as tc  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon.language.amd import cdna4, gfx1250  # noqa: E402
from triton.experimental.gluon.language.amd.cdna4 import async_copy as amd_copy  # noqa: E402
from triton.experimental.gluon.language.nvidia import hopper  # noqa: E402
from triton.experimental.gluon.language.nvidia.ampere import async_copy as nv_copy  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import mbarrier  # noqa: E402

try:  # Triton 3.9 only
    from triton.experimental.gluon.language.amd.slice import slice as amd_slice
    from triton.experimental.gluon.language.nvidia import blackwell
    from triton.experimental.gluon.language.nvidia.blackwell import clc
    from triton.experimental.gluon.language.nvidia.hopper import cluster
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:
    amd_slice = blackwell = clc = cluster = gdc_wait = gdc_launch_dependents = None
# Triton 3.9 renamed Ampere's cp.async copy (async_copy_global_to_shared -> async_load).
nv_async_load = getattr(nv_copy, "async_load", None) or nv_copy.async_copy_global_to_shared

# ----------------------------------------------------------------------------------------------
# Triton Python kernels
# ----------------------------------------------------------------------------------------------


@triton.jit
def atomic_load_kernel(x_ptr, y_ptr, BN: tl.constexpr, SCALAR: tl.constexpr):
    # tt.atomic_load of BN elements (or of one, broadcast to the tile), its result stored.
    r = tl.arange(0, BN)
    if SCALAR:
        tl.store(y_ptr + r, tl.full([BN], 0, tl.int32) + tl.atomic_load(x_ptr))
    else:
        tl.store(y_ptr + r, tl.atomic_load(x_ptr + r))


@triton.jit
def atomic_store_kernel(x_ptr, y_ptr, BN: tl.constexpr):
    r = tl.arange(0, BN)
    tl.atomic_store(y_ptr + r, tl.load(x_ptr + r))


@triton.jit
def atomic_poll_kernel(x_ptr, y_ptr, BN: tl.constexpr, TIMEOUT: tl.constexpr, SCALAR: tl.constexpr):
    # tt.atomic_poll until x == 1, with a timeout or without, on one element or BN; the flags
    # stored (a used result).
    r = tl.arange(0, BN)
    if SCALAR:
        if TIMEOUT:
            ok = tl.atomic_poll(x_ptr, 1, timeout_ns=1000)
        else:
            ok = tl.atomic_poll(x_ptr, 1)
        tl.store(y_ptr + r, tl.full([BN], 0, tl.int32) + ok.to(tl.int32))
    else:
        if TIMEOUT:
            ok = tl.atomic_poll(x_ptr + r, 1, timeout_ns=1000)
        else:
            ok = tl.atomic_poll(x_ptr + r, 1)
        tl.store(y_ptr + r, ok.to(tl.int32))


@triton.jit
def grid_dependency_kernel(x_ptr, y_ptr, BN: tl.constexpr):
    # Programmatic dependent launch: tt.grid_dependency_wait / _launch_dependents.
    gdc_wait()
    r = tl.arange(0, BN)
    tl.store(y_ptr + r, tl.load(x_ptr + r))
    gdc_launch_dependents()


@triton.jit
def _leaky(x):
    if x > 0:
        return x
    else:
        return x * 2


@triton.jit
def map_elementwise_kernel(x_ptr, y_ptr, BN: tl.constexpr):
    r = tl.arange(0, BN)
    tl.store(y_ptr + r, tl.map_elementwise(_leaky, tl.load(x_ptr + r)))


@triton.jit
def descriptor_reduce_kernel(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    # A descriptor's atomic_add (tt.descriptor_reduce): a TMA reduction on sm_90 / sm_100
    # (ttng.async_tma_reduce from a shared-memory tile), plain atomics elsewhere.
    d = tl.make_tensor_descriptor(y_ptr, [BM, BN], [BN, 1], [BM, BN])
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    d.atomic_add([0, 0], tl.load(x_ptr + r * BN + c))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  DESC: tl.constexpr):
    # A pipelined fp16 matmul through masked pointer loads or tensor descriptors (on gfx1250 the
    # tensor data mover: amdg.async_tdm_copy_global_to_local, amdg.update_tensor_descriptor).
    pm = tl.program_id(0)
    rm = pm * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    if DESC:
        da = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
        db = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
        for k in range(0, K, BK):
            acc += tl.dot(da.load([pm * BM, k]), db.load([k, 0]))
    else:
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                        mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                        mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.)
            acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# ----------------------------------------------------------------------------------------------
# Gluon kernels
# ----------------------------------------------------------------------------------------------


@gluon.jit
def shared_index_kernel(x_ptr, y_ptr, N: gl.constexpr, OP: gl.constexpr, W: gl.constexpr, TPW: gl.constexpr):
    # An N-element shared buffer read or written at computed indices: ttg.local_gather (0),
    # ttg.local_scatter (1), ttg.local_atomic_scatter_rmw with its old values stored (2) or
    # unused (3).
    layout: gl.constexpr = gl.BlockedLayout([1], [TPW], [W], [0])
    offs = gl.arange(0, N, layout=layout)
    x = gl.load(x_ptr + offs)
    smem = gl.allocate_shared_memory(gl.int32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0]), x)
    idx = (offs * 7) % N
    if OP == 0:
        gl.store(y_ptr + offs, smem.gather(idx, 0))
    elif OP == 1:
        smem.scatter(x, idx, 0)
        gl.store(y_ptr + offs, smem.load(layout))
    elif OP == 2:
        gl.store(y_ptr + offs, smem.atomic_scatter_add(x, idx, 0))
    else:
        smem.atomic_scatter_add(x, idx, 0)
        gl.store(y_ptr + offs, smem.load(layout))


@gluon.jit
def inline_asm_kernel(x_ptr, y_ptr, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.arange(0, N, layout=layout)
    y = gl.inline_asm("mov.b32 $0, $1;", "=r,r", [gl.load(x_ptr + offs)], gl.int32, True)
    gl.store(y_ptr + offs, y)


@gluon.jit
def packed_arith_kernel(x_ptr, y_ptr, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([2], [32], [4], [0])
    offs = gl.arange(0, N, layout=layout)
    x = gl.load(x_ptr + offs)
    gl.store(y_ptr + offs, blackwell.add2(x, x))


@gluon.jit
def cp_async_mbarrier_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # cp.async into shared memory completed on an mbarrier (ttng.async_copy_mbarrier_arrive).
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.arange(0, N, layout=layout)
    smem = gl.allocate_shared_memory(gl.int32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=128)
    nv_async_load(smem, x_ptr + offs)
    nv_copy.mbarrier_arrive(bar)
    mbarrier.wait(bar, 0)
    gl.store(y_ptr + offs, smem.load(layout))


@gluon.jit
def cluster_barrier_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # Two CTAs (the tile split over them) synchronized by ttng.cluster_barrier.
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], [[1]])
    offs = gl.arange(0, N, layout=layout)
    x = gl.load(x_ptr + offs)
    cluster.barrier()
    gl.store(y_ptr + offs, x)


@gluon.jit
def async_shared_store_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # A store into a cluster's shared memory signalled on an mbarrier (ttng.async_shared_store).
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], [[1]])
    offs = gl.arange(0, N, layout=layout)
    x = gl.load(x_ptr + offs)
    smem = gl.allocate_shared_memory(gl.int32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0], [[1]]))
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, N * 2)
    hopper.async_store(smem, x, bar)
    mbarrier.wait(bar, 0)
    gl.store(y_ptr + offs, smem.load(layout))


@gluon.jit
def clc_kernel(x_ptr, y_ptr, N: gl.constexpr, CGA: gl.constexpr):
    # Cluster launch control (ttng.clc_*): cancel a pending program, read whose it was; CGA [[0]]
    # in a 2-CTA cluster, each CTA its own result buffer and barrier (there the membar pass adds
    # ttng.fence_mbarrier_init_release_cluster, after the TTGIR is written).
    res = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0], CGA))
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    clc.try_cancel(res, bar)
    mbarrier.wait(bar, 0)
    r = clc.load_result(res)
    if r.is_canceled():
        gl.store(y_ptr, r.program_id(0))


@gluon.jit
def amd_async_copy_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # CDNA4 global -> LDS copies and their wait (ttg.async_*).
    layout: gl.constexpr = gl.BlockedLayout([1], [64], [4], [0])
    offs = gl.arange(0, N, layout=layout)
    smem = gl.allocate_shared_memory(gl.int32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    amd_copy.global_load_to_shared(smem, x_ptr + offs)
    amd_copy.commit_group()
    amd_copy.wait_group(0)
    gl.store(y_ptr + offs, smem.load(layout))


@gluon.jit
def extract_slice_kernel(x_ptr, y_ptr, N: gl.constexpr, TPW: gl.constexpr):
    # The lower half of an N x N tile taken in registers (amdg.extract_slice).
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, TPW], [4, 1], [1, 0])
    r = gl.arange(0, N, layout=gl.SliceLayout(1, layout))[:, None]
    c = gl.arange(0, N, layout=gl.SliceLayout(0, layout))[None, :]
    s = amd_slice(gl.load(x_ptr + r * N + c), [N // 2, N], [N // 2, 0])
    r2 = gl.arange(0, N // 2, layout=gl.SliceLayout(1, layout))[:, None]
    gl.store(y_ptr + r2 * N + c, s)


@gluon.jit
def scaled_downcast_kernel(x_ptr, y_ptr, N: gl.constexpr, TPW: gl.constexpr, FP4: gl.constexpr):
    # An N x N fp32 tile scaled per 32 elements to fp8 (amdg.scaled_downcast_fp8) or packed fp4
    # (amdg.scaled_downcast_fp4, its rows summed: no scratch in that layout).
    layout: gl.constexpr = gl.BlockedLayout([1, 32], [TPW, 1], [4, 1], [1, 0])
    r = gl.arange(0, N, layout=gl.SliceLayout(1, layout))[:, None]
    c = gl.arange(0, N, layout=gl.SliceLayout(0, layout))[None, :]
    x = gl.load(x_ptr + r * N + c)
    sc = gl.full([N, N // 32], 1, gl.uint8, layout)
    if FP4:
        t = gl.sum(cdna4.scaled_downcast(x, sc, "e2m1", axis=1).to(gl.int32), axis=1)
        gl.store(y_ptr + gl.arange(0, N, layout=t.type.layout), t.to(gl.float32))
    else:
        gl.store(y_ptr + r * N + c, cdna4.scaled_downcast(x, sc, "e4m3", axis=1).to(gl.float32))


@gluon.jit
def fp4_repacked_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # Packed fp4 read from LDS as a transposed MFMA operand (amdg.local_load_packed_transposed).
    mfma: gl.constexpr = gl.amd.AMDMFMALayout(version=4, instr_shape=[16, 16, 128], transposed=True,
                                              warps_per_cta=[2, 2])
    dot: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mfma, k_width=16)
    smem = gl.allocate_shared_memory(gl.uint8, [N, N], gl.SwizzledSharedLayout(1, 1, 1, [0, 1]))
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 64], [4, 1], [1, 0])
    v = gl.convert_layout(cdna4.load_shared_fp4_repacked(smem, dot), blocked)
    r = gl.arange(0, N * 2, layout=gl.SliceLayout(1, blocked))[:, None]
    c = gl.arange(0, N // 2, layout=gl.SliceLayout(0, blocked))[None, :]
    gl.store(y_ptr.to(gl.pointer_type(gl.uint8), bitcast=True) + r * (N // 2) + c, v)


@gluon.jit
def tdm_kernel(x_ptr, y_ptr, N: gl.constexpr, OP: gl.constexpr):
    # gfx1250's tensor data mover: an N x N tile loaded (0), or completed on an LDS barrier (1),
    # then stored.
    sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    d = gfx1250.tdm.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [N, N], sl)
    e = gfx1250.tdm.make_tensor_descriptor(y_ptr, [N, N], [N, 1], [N, N], sl)
    smem = gl.allocate_shared_memory(gl.float16, [N, N], sl)
    if OP == 0:
        gfx1250.tdm.async_load(d, [0, 0], smem)
        gfx1250.tdm.async_wait(0)
    else:
        bar = gl.allocate_shared_memory(gl.int64, [1], gfx1250.mbarrier.MBarrierLayout())
        gfx1250.mbarrier.init(bar, 1)
        gfx1250.tdm.async_load(d, [0, 0], smem, mbarrier=bar)
        gfx1250.mbarrier.wait(bar, 0)
        gfx1250.mbarrier.arrive(bar)
    gfx1250.tdm.async_store(e, [0, 0], smem)
    gfx1250.tdm.async_wait(0)


@gluon.jit
def tdm_more_kernel(x_ptr, y_ptr, N: gl.constexpr, OP: gl.constexpr):
    # Triton 3.9's further TDM forms: a load through an updated descriptor (0), rows gathered and
    # scattered (1), two loads fused (2), a prefetch (3).
    sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    d = gfx1250.tdm.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [N, N], sl)
    e = gfx1250.tdm.make_tensor_descriptor(y_ptr, [N, N], [N, 1], [N, N], sl)
    if OP == 3:
        gfx1250.tdm.prefetch(d, [0, 0])
    else:
        smem = gl.allocate_shared_memory(gl.float16, [N, N], sl)
        if OP == 0:
            gfx1250.tdm.async_load(gfx1250.tdm.update_tensor_descriptor(d, add_offsets=[0, 0]), None, smem)
        elif OP == 1:
            rows: gl.constexpr = gl.SliceLayout(1, gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
            idx = gl.arange(0, N, layout=rows).to(gl.int16)
            gfx1250.tdm.async_gather(d, idx, smem)
            gfx1250.tdm.async_wait(0)
            gfx1250.tdm.async_scatter(e, idx, smem)
        else:
            other = gl.allocate_shared_memory(gl.float16, [N, N], sl)
            gfx1250.tdm.async_load_fused([(d, smem, 1), (e, other, 2)])
        gfx1250.tdm.async_wait(0)
        gfx1250.tdm.async_store(e, [0, 0], smem)
        gfx1250.tdm.async_wait(0)


@gluon.jit
def gfx1250_async_copy_kernel(x_ptr, y_ptr, N: gl.constexpr, BARRIER: gl.constexpr):
    # gfx1250 global <-> LDS copies, completed by a wait or on an LDS barrier
    # (amdg.async_copy_mbarrier_arrive).
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.arange(0, N, layout=layout)
    smem = gl.allocate_shared_memory(gl.int32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    gfx1250.async_copy.global_to_shared(smem, x_ptr + offs)
    if BARRIER:
        bar = gl.allocate_shared_memory(gl.int64, [1], gfx1250.mbarrier.MBarrierLayout())
        gfx1250.mbarrier.init(bar, 128)
        gfx1250.async_copy.mbarrier_arrive(bar)
        gfx1250.mbarrier.wait(bar, 0)
        gl.store(y_ptr + offs, smem.load(layout))
    else:
        amd_copy.commit_group()
        amd_copy.wait_group(0)
        gfx1250.async_copy.shared_to_global(y_ptr + offs, smem)
        amd_copy.commit_group()
        amd_copy.wait_group(0)


@gluon.jit
def gfx1250_cluster_kernel(x_ptr, y_ptr, N: gl.constexpr):
    # Two workgroups of a gfx1250 cluster (amdg.cluster_barrier_arrive / _wait).
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], [[1]])
    offs = gl.arange(0, N, layout=layout)
    x = gl.load(x_ptr + offs)
    gfx1250.cluster.arrive()
    gfx1250.cluster.wait()
    gl.store(y_ptr + offs, x)


# ----------------------------------------------------------------------------------------------
# Entries
# ----------------------------------------------------------------------------------------------
I32 = {"x_ptr": "*i32", "y_ptr": "*i32"}
F32 = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
F16 = {"x_ptr": "*fp16", "y_ptr": "*fp16"}


def kernels():
    """(name, op, fn, types, constexprs, target, options): the op named is the one the kernel is
    for (its TTGIR has others)."""
    for target in ("sm_90", "gfx942"):
        for scalar in (0, 1):
            for bn, warps in ((16, 1), (16, 2), (64, 1), (64, 4)):
                if scalar and bn == 16:
                    continue
                kind = "scalar" if scalar else f"bn{bn}"
                yield (f"atomic_load_{kind}_{target}_w{warps}", "tt.atomic_load", atomic_load_kernel, I32,
                       {"BN": bn, "SCALAR": scalar}, target, {"num_warps": warps})
                for timeout in (0, 1):
                    yield (f"atomic_poll_{kind}_t{timeout}_{target}_w{warps}", "tt.atomic_poll", atomic_poll_kernel,
                           I32, {"BN": bn, "TIMEOUT": timeout, "SCALAR": scalar}, target, {"num_warps": warps})
        yield (f"atomic_store_{target}", "tt.atomic_store", atomic_store_kernel, I32, {"BN": 64}, target, {})
        yield (f"map_elementwise_{target}", "tt.map_elementwise", map_elementwise_kernel, F32, {"BN": 64}, target, {})
    for target in ("sm_90", "sm_100"):
        yield (f"descriptor_reduce_{target}", "ttng.async_tma_reduce", descriptor_reduce_kernel, F32,
               {"BM": 32, "BN": 32}, target, {})
    yield ("grid_dependency_sm_90", "tt.grid_dependency_wait", grid_dependency_kernel, I32, {"BN": 64}, "sm_90", {})
    shared_index = {"sm_90": ((128, 1), (128, 4), (64, 4), (16, 1), (16, 4)),
                    "gfx942": ((256, 4), (64, 1), (64, 4), (16, 1), (16, 2))}
    for target, sizes in shared_index.items():
        tpw = tc.TARGETS[target][2]
        for n, warps in sizes:
            for op, name in enumerate(("gather", "scatter", "atomic_scatter_used", "atomic_scatter_unused")):
                if n != sizes[0][0] and op < 2:
                    continue
                label = ("ttg.local_gather", "ttg.local_scatter")[op] if op < 2 else "ttg.local_atomic_scatter_rmw"
                yield (f"shared_{name}_n{n}_{target}_w{warps}", label, shared_index_kernel, I32,
                       {"N": n, "OP": op, "W": warps, "TPW": tpw}, target, {"num_warps": warps})
    yield ("inline_asm_sm_90", "ttg.inline_asm", inline_asm_kernel, I32, {"N": 128}, "sm_90", {})
    yield ("packed_arith_sm_100", "ttng.packed_arith", packed_arith_kernel, F32, {"N": 256}, "sm_100", {})
    yield ("cp_async_mbarrier_sm_90", "ttng.async_copy_mbarrier_arrive", cp_async_mbarrier_kernel, I32, {"N": 128},
           "sm_90", {})
    yield ("cluster_barrier_sm_90", "ttng.cluster_barrier", cluster_barrier_kernel, I32, {"N": 256}, "sm_90",
           {"num_ctas": 2})
    yield ("async_shared_store_sm_90", "ttng.async_shared_store", async_shared_store_kernel, I32, {"N": 256},
           "sm_90", {"num_ctas": 2})
    yield ("clc_sm_100", "ttng.clc_try_cancel", clc_kernel, I32, {"N": 128, "CGA": []}, "sm_100", {})
    yield ("clc_cluster_sm_100", "ttng.clc_try_cancel", clc_kernel, I32, {"N": 128, "CGA": [[0]]}, "sm_100",
           {"num_ctas": 2})
    yield ("amd_async_copy_gfx950", "ttg.async_copy_global_to_local", amd_async_copy_kernel, I32, {"N": 256},
           "gfx950", {})
    for target, tpw in (("gfx950", 64), ("gfx1250", 32)):
        yield (f"extract_slice_{target}", "amdg.extract_slice", extract_slice_kernel, I32, {"N": 64, "TPW": tpw},
               target, {})
        yield (f"scaled_downcast_fp8_{target}", "amdg.scaled_downcast_fp8", scaled_downcast_kernel, F32,
               {"N": 64, "TPW": tpw, "FP4": 0}, target, {})
    yield ("scaled_downcast_fp4_gfx950", "amdg.scaled_downcast_fp4", scaled_downcast_kernel, F32,
           {"N": 64, "TPW": 64, "FP4": 1}, "gfx950", {})
    yield ("fp4_repacked_gfx950", "amdg.local_load_packed_transposed", fp4_repacked_kernel, I32, {"N": 64}, "gfx950",
           {})
    for op, label in enumerate(("amdg.async_tdm_copy_global_to_local", "amdg.init_barrier")):
        yield (f"tdm_op{op}_gfx1250", label, tdm_kernel, F16, {"N": 64, "OP": op}, "gfx1250", {})
    for op, label in enumerate(("amdg.update_tensor_descriptor", "amdg.async_tdm_gather",
                                "amdg.async_tdm_fused_copy_global_to_local", "amdg.tdm_prefetch")):
        yield (f"tdm_more_op{op}_gfx1250", label, tdm_more_kernel, F16, {"N": 64, "OP": op}, "gfx1250", {})
    mm_types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    # Triton 3.6 lowers gfx1250's descriptor loads to pointer loads; 3.9 to the tensor data mover.
    tdm = not triton.__version__.startswith("3.6")
    for desc in (0, 1):
        for stages in (2, 3):
            yield (f"matmul_d{desc}_s{stages}_gfx1250", "amdg.async_tdm_copy_global_to_local" if desc and tdm else "tt.dot",
                   matmul_kernel, mm_types, {"BM": 64, "BN": 64, "BK": 32, "DESC": desc}, "gfx1250",
                   {"num_stages": stages})
    for barrier in (0, 1):
        label = ("amdg.async_copy_local_to_global", "amdg.async_copy_mbarrier_arrive")[barrier]
        yield (f"async_copy_b{barrier}_gfx1250", label, gfx1250_async_copy_kernel, I32, {"N": 128, "BARRIER": barrier},
               "gfx1250", {})
    yield ("cluster_gfx1250", "amdg.cluster_barrier_arrive", gfx1250_cluster_kernel, I32, {"N": 256}, "gfx1250",
           {"num_ctas": 2})


def entries():
    for name, op, fn, types, params, target, options in kernels():
        sig, cons, attrs = tc.build_signature(fn, types, params, "jit", target)
        yield name, [op, target, options.get("num_warps", 4)], fn, sig, cons, attrs, target, options


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-op-fixtures-cache", ["op", "target", "num_warps"], entries)
