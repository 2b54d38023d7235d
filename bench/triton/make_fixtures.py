# Compiles a sweep of Triton kernels for sm_80/90/100/120 and records Triton's own shared
# memory figure per configuration: the fixtures of backends/triton's exactness test.
#
# Runs on the GPU machine (Triton 3.6, PyTorch 2.11, one H100):
#   python3 bench/triton/make_fixtures.py --out $OUT [--deadline 420] [--jobs 16]
# Writes $OUT/index.json (one record per configuration), $OUT/ttgir.tar.gz (the .ttgir of each
# compiled kernel) and $OUT/alloc.tar.gz (the IR after Triton's own shared-memory allocation
# pass, with allocation.offset attributes, for diagnosing mismatches).
import argparse
import hashlib
import io
import json
import multiprocessing as mp
import os
import platform
import sys
import tarfile
import tempfile
import time
import traceback

import triton
import triton.language as tl

# Per-block dynamic shared memory limits of the compile-only targets (bytes), from the CUDA C
# Programming Guide, "Technical Specifications per Compute Capability" (max shared memory per
# block, opt-in): 8.0: 163 KB, 9.0: 227 KB, 10.0: 227 KB, 12.0: 99 KB. For sm_90 the driver's
# own figure (the one Triton compares against) is also recorded at run time.
TARGET_LIMITS = {80: 166912, 90: 232448, 100: 232448, 120: 101376}

# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def matmul_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, WARP_SPEC: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPEC):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def matmul_persistent_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                 NUM_SMS: tl.constexpr, WARP_SPEC: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True,
                            warp_specialize=WARP_SPEC):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, sm_scale, stride_m, N_CTX, HEAD_DIM: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * stride_m
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in tl.range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(Out.type.element_ty))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    y = xc * rstd * w + b
    tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride_x + offs_n[None, :], mask=mask)
    tl.store(y_ptr + offs_n[:, None] * stride_y + offs_m[None, :], tl.trans(x), mask=mask.T)


@triton.jit
def colsum_kernel(x_ptr, y_ptr, M, N, stride_x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        mask = ((m0 + offs_m)[:, None] < M) & (offs_n[None, :] < N)
        x = tl.load(x_ptr + (m0 + offs_m)[:, None] * stride_x + offs_n[None, :], mask=mask,
                    other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=0)
    tl.store(y_ptr + offs_n, acc, mask=offs_n < N)


@triton.jit
def argmax_kernel(x_ptr, y_ptr, stride_x, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs_m[:, None] * stride_x + offs_n[None, :],
                mask=offs_n[None, :] < N, other=-float("inf"))
    idx = tl.argmax(x, axis=1)
    tl.store(y_ptr + offs_m, idx)


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * BLOCK_N + offs)
    tl.store(y_ptr + row * BLOCK_N + offs, tl.cumsum(x, axis=0))


@triton.jit
def atomic_kernel(x_ptr, counter_ptr, y_ptr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs)
    old = tl.atomic_add(counter_ptr + (offs % 4), x)
    ticket = tl.atomic_add(counter_ptr + 8, 1)
    tl.store(y_ptr + offs, old + ticket)


@triton.jit
def histogram_kernel(x_ptr, y_ptr, BLOCK_N: tl.constexpr, NUM_BINS: tl.constexpr):
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs)
    h = tl.histogram(x, NUM_BINS)
    tl.store(y_ptr + tl.arange(0, NUM_BINS), h)


# The seed's Helion GeGLU kernel (shared/seeds/002), written directly in Triton: per row tile,
# x @ gate and x @ up accumulated over H, then gelu(a) * b stored to temp.
@triton.jit
def geglu_kernel(x, gate, up, temp, T, I, H, stride_x, stride_g, stride_u, stride_t,
                 BLOCK_T: tl.constexpr, RDIM: tl.constexpr, BLOCK_H: tl.constexpr):
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_i = tl.arange(0, RDIM)
    mask_t = offs_t < T
    mask_i = offs_i < I
    acc = tl.zeros([BLOCK_T, RDIM], dtype=tl.float32)
    ccc = tl.zeros([BLOCK_T, RDIM], dtype=tl.float32)
    for h0 in tl.range(0, H, BLOCK_H):
        offs_h = h0 + tl.arange(0, BLOCK_H)
        mask_h = offs_h < H
        x_tile = tl.load(x + offs_t[:, None] * stride_x + offs_h[None, :],
                         mask=mask_t[:, None] & mask_h[None, :], other=0)
        g = tl.load(gate + offs_h[:, None] * stride_g + offs_i[None, :],
                    mask=mask_h[:, None] & mask_i[None, :], other=0)
        u = tl.load(up + offs_h[:, None] * stride_u + offs_i[None, :],
                    mask=mask_h[:, None] & mask_i[None, :], other=0)
        acc = acc + tl.dot(x_tile, g, input_precision="tf32", out_dtype=tl.float32)
        ccc = ccc + tl.dot(x_tile, u, input_precision="tf32", out_dtype=tl.float32)
    kbeta = 0.7978845608028654
    a2 = kbeta * ((acc * acc * acc) * 0.044715 + acc)
    a4 = 0.5 * acc * (1 + (2 * tl.sigmoid(2 * a2) - 1))
    tl.store(temp + offs_t[:, None] * stride_t + offs_i[None, :], a4 * ccc,
             mask=mask_t[:, None] & mask_i[None, :])


KERNELS = {
    "matmul": matmul_kernel,
    "matmul_tma": matmul_tma_kernel,
    "matmul_persistent_tma": matmul_persistent_tma_kernel,
    "attn_fwd": attn_fwd_kernel,
    "softmax": softmax_kernel,
    "layernorm": layernorm_kernel,
    "transpose": transpose_kernel,
    "colsum": colsum_kernel,
    "argmax": argmax_kernel,
    "cumsum": cumsum_kernel,
    "atomic": atomic_kernel,
    "histogram": histogram_kernel,
    "geglu": geglu_kernel,
}

# Argument types (non-constexpr), in order; "*T" pointers get divisibility 16 like the JIT's
# specialization of 16-byte-aligned tensors, "i32" gets divisibility 16 when listed in DIV16.
ARGS = {
    "matmul": ["*A", "*A", "*C", "i32", "i32", "i32", "i32", "i32", "i32"],
    "matmul_tma": ["*A", "*A", "*C", "i32", "i32", "i32"],
    "matmul_persistent_tma": ["*A", "*A", "*C", "i32", "i32", "i32"],
    "attn_fwd": ["*A", "*A", "*A", "*A", "fp32", "i32", "i32"],
    "softmax": ["*A", "*A", "i32", "i32", "i32"],
    "layernorm": ["*A", "*A", "*A", "*A", "*fp32", "*fp32", "i32", "i32", "fp32"],
    "transpose": ["*A", "*A", "i32", "i32", "i32", "i32"],
    "colsum": ["*A", "*fp32", "i32", "i32", "i32"],
    "argmax": ["*A", "*i32", "i32", "i32"],
    "cumsum": ["*A", "*A"],
    "atomic": ["*A", "*A", "*A"],
    "histogram": ["*i32", "*i32"],
    "geglu": ["*fp32", "*fp32", "*fp32", "*fp32", "i32", "i32", "i32", "i32", "i32", "i32",
              "i32"],
}
# Integer arguments the JIT would see as multiples of 16 (sizes and strides of aligned tensors).
DIV16 = {
    "matmul": {"M", "N", "K", "stride_am", "stride_bk", "stride_cm"},
    "matmul_tma": {"M", "N", "K"},
    "matmul_persistent_tma": {"M", "N", "K"},
    "attn_fwd": {"stride_m", "N_CTX"},
    "softmax": {"in_stride", "out_stride"},
    "layernorm": {"stride"},
    "transpose": {"M", "N", "stride_x", "stride_y"},
    "colsum": {"stride_x"},
    "argmax": {"stride_x"},
    "geglu": {"stride_x", "stride_g", "stride_u", "stride_t", "H"},
}


def make_configs():
    cfgs = []

    def add(kernel, targets, dtype, params, num_warps, num_stages, out_dtype=None):
        for t in targets:
            cfgs.append(dict(kernel=kernel, target=t, dtype=dtype, out_dtype=out_dtype or dtype,
                             params=dict(params), num_warps=num_warps, num_stages=num_stages))

    all_t = [80, 90, 100, 120]
    # GEMM sweep on the real device: dtypes x tiles x stages x warps.
    tiles = [(64, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64), (256, 128, 64),
             (64, 128, 128)]
    for dtype in ["fp16", "bf16", "fp32", "fp8e4nv"]:
        for (bm, bn, bk) in tiles:
            if dtype == "fp32" and bk > 64:
                continue
            for ns in [1, 2, 3, 4, 5]:
                for nw in [4, 8]:
                    if nw == 4 and bm * bn >= 256 * 128:
                        continue
                    p = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
                    od = "fp16" if dtype == "fp8e4nv" else dtype
                    add("matmul", [90], dtype, p, nw, ns, od)
    # Reduced GEMM sweep on the compile-only targets.
    for dtype in ["fp16", "bf16", "fp32", "fp8e4nv"]:
        for (bm, bn, bk) in [(64, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64)]:
            if dtype == "fp32" and bk > 32:
                continue
            for ns in [2, 3, 4]:
                od = "fp16" if dtype == "fp8e4nv" else dtype
                t = [80, 100, 120] if dtype != "fp8e4nv" else [100, 120]
                add("matmul", t, dtype, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8),
                    8 if bm * bn >= 128 * 256 else 4, ns, od)
    # TMA GEMMs (descriptors; rewritten to pointers below sm_90), optionally warp-specialized.
    for dtype in ["fp16", "bf16", "fp8e4nv"]:
        for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64), (128, 128, 128)]:
            for ns in [2, 3, 4]:
                for ws in [False, True]:
                    t = [90, 100] if ws else [80, 90, 100, 120]
                    if dtype == "fp8e4nv":
                        t = [x for x in t if x >= 90]
                    od = "fp16" if dtype == "fp8e4nv" else dtype
                    add("matmul_tma", t, dtype,
                        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, WARP_SPEC=ws),
                        8 if bn == 256 else 4, ns, od)
    for dtype in ["fp16", "bf16"]:
        for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64)]:
            for ns in [3, 4]:
                for ws in [False, True]:
                    t = [90, 100] if ws else [90, 100, 120]
                    add("matmul_persistent_tma", t, dtype,
                        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_SMS=132, WARP_SPEC=ws),
                        8 if bn == 256 else 4, ns)
    # Attention forward.
    for dtype in ["fp16", "bf16"]:
        for hd in [64, 128]:
            for (bm, bn) in [(64, 64), (128, 64), (128, 128)]:
                for ns in [2, 3]:
                    nw = 8 if bm == 128 else 4
                    add("attn_fwd", all_t if ns == 3 else [90], dtype,
                        dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn), nw, ns)
    # Row reductions.
    for dtype in ["fp16", "fp32"]:
        for bn in [256, 1024, 4096, 16384]:
            for nw in [4, 8, 16]:
                add("softmax", [90] if nw != 8 else all_t, dtype, dict(BLOCK_N=bn), nw, 1)
                add("layernorm", [90] if nw != 8 else all_t, dtype, dict(BLOCK_N=bn), nw, 1)
    for dtype in ["fp16", "fp32"]:
        for (bm, bn) in [(32, 32), (64, 64), (128, 64), (64, 128), (128, 128)]:
            for nw in [4, 8]:
                add("transpose", [90] if nw == 8 else all_t, dtype,
                    dict(BLOCK_M=bm, BLOCK_N=bn), nw, 1)
                add("colsum", [90] if nw == 8 else [80, 90], dtype,
                    dict(BLOCK_M=bm, BLOCK_N=bn), nw, 2)
    for (bm, bn) in [(1, 1024), (4, 256), (16, 128)]:
        for nw in [4, 8]:
            add("argmax", [90], "fp32", dict(BLOCK_M=bm, BLOCK_N=bn), nw, 1)
    for bn in [256, 1024, 4096]:
        for nw in [4, 8]:
            add("cumsum", [90, 80], "fp32", dict(BLOCK_N=bn), nw, 1)
            add("atomic", [90], "fp32", dict(BLOCK_N=bn), nw, 1)
    for (bn, bins) in [(1024, 64), (4096, 256), (1024, 1024)]:
        add("histogram", [90], "i32", dict(BLOCK_N=bn, NUM_BINS=bins), 4, 1)
    # The seed's GeGLU: fp32, 4 warps; the seed used BLOCK_T=16, RDIM=2048, BLOCK_H=16, 3 stages.
    for (bt, bh) in [(16, 16), (16, 32), (32, 16)]:
        for ns in [1, 2, 3, 4]:
            add("geglu", [90] if ns != 3 else all_t, "fp32",
                dict(BLOCK_T=bt, RDIM=2048, BLOCK_H=bh), 4, ns)
    for (bt, rd) in [(16, 1024), (16, 512), (64, 256)]:
        add("geglu", [90], "fp32", dict(BLOCK_T=bt, RDIM=rd, BLOCK_H=16), 4, 3)
    for i, c in enumerate(cfgs):
        key = json.dumps([c["kernel"], c["target"], c["dtype"], c["out_dtype"], c["params"],
                          c["num_warps"], c["num_stages"]], sort_keys=True)
        c["id"] = "%s_sm%d_%s" % (c["kernel"], c["target"], hashlib.sha1(key.encode()).hexdigest()[:10])
    return cfgs


# ----------------------------------------------------------------------------------------------
# Worker (spawned process)
# ----------------------------------------------------------------------------------------------


def _signature(cfg):
    fn = KERNELS[cfg["kernel"]]
    types = list(ARGS[cfg["kernel"]])
    sig, attrs = {}, {}
    div16 = DIV16.get(cfg["kernel"], set())
    argi = 0
    for i, name in enumerate(fn.arg_names):
        if name in cfg["params"]:
            sig[name] = "constexpr"
            continue
        t = types[argi]
        argi += 1
        if t == "*A":
            t = "*" + cfg["dtype"]
        elif t == "*C":
            t = "*" + cfg["out_dtype"]
        sig[name] = t
        if t.startswith("*") or name in div16:
            attrs[(i, )] = [["tt.divisibility", 16]]
    return fn, sig, attrs


def _alloc_ir(ttgir_text, cap):
    """The IR after Triton's own shared-memory allocation pass (offsets attached)."""
    from triton._C.libtriton import ir, passes, nvidia
    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
        f.write(ttgir_text)
        path = f.name
    mod = ir.parse_mlir_module(path, ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    for getter in [lambda: passes.ttgpuir.add_combine_tensor_select_and_if,
                   lambda: passes.ttgpuir.add_allocate_warp_groups,
                   lambda: passes.convert.add_scf_to_cf,
                   lambda: passes.gluon.add_inliner]:
        try:
            getter()(pm)
        except AttributeError:
            pass
    try:
        from triton.backends.nvidia.compiler import get_ptx_version_from_options, CUDAOptions
        ptx = get_ptx_version_from_options(CUDAOptions(), cap)
    except Exception:
        ptx = 88
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, ptx)
    try:
        pm.run(mod, "alloc")
    except TypeError:
        pm.run(mod)
    os.unlink(path)
    return str(mod)


def compile_one(cfg):
    import triton as _t
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    rec = {k: cfg[k] for k in ["id", "kernel", "target", "dtype", "out_dtype", "params",
                               "num_warps", "num_stages"]}
    rec["target_limit"] = TARGET_LIMITS[cfg["target"]]
    try:
        fn, sig, attrs = _signature(cfg)
        rec["signature"] = sig
        src = ASTSource(fn, sig, constexprs=dict(cfg["params"]), attrs=attrs)
        target = GPUTarget("cuda", cfg["target"], 32)
        t0 = time.perf_counter()
        k = _t.compile(src, target=target,
                       options={"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})
        rec["compile_s"] = time.perf_counter() - t0
        md = k.metadata
        rec["shared"] = int(md.shared)
        for key in ["tmem_size", "num_ctas", "global_scratch_size", "global_scratch_align",
                    "profile_scratch_size", "name"]:
            if hasattr(md, key):
                v = getattr(md, key)
                if isinstance(v, (int, str, float, bool)) or v is None:
                    rec[key] = v
        rec["metadata_num_warps"] = int(md.num_warps)
        ttgir = k.asm.get("ttgir")
        rec["ttgir"] = ttgir
        rec["over_target_limit"] = rec["shared"] > rec["target_limit"]
        if cfg["target"] == 90:
            # The launch-time check of the real device (compiler.py _init_handles).
            try:
                k._init_handles()
                rec["loaded"] = True
            except _t.runtime.errors.OutOfResources as e:
                rec["out_of_resources"] = {"required": getattr(e, "required", None),
                                           "limit": getattr(e, "limit", None),
                                           "name": getattr(e, "name", None),
                                           "message": str(e)}
            except Exception as e:  # noqa: BLE001
                rec["load_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        try:
            rec["alloc_ir"] = _alloc_ir(ttgir, cfg["target"])
        except Exception as e:  # noqa: BLE001
            rec["alloc_ir_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
    except Exception as e:  # noqa: BLE001
        rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:1500])
        rec["traceback"] = traceback.format_exc()[-3000:]
    return rec


def _init_worker(cache_root):
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(dir=cache_root)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=420.0)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    cfgs = make_configs()
    if args.limit:
        cfgs = cfgs[:args.limit]
    print("configs:", len(cfgs), flush=True)
    info = {"triton": triton.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    try:
        import torch
        info["torch"] = torch.__version__
        info["device"] = torch.cuda.get_device_name(0)
        info["capability"] = list(torch.cuda.get_device_capability(0))
        from triton.runtime import driver
        props = driver.active.utils.get_device_properties(0)
        info["max_shared_mem_sm90_driver"] = props.get("max_shared_mem")
        info["device_properties"] = {k: v for k, v in props.items()
                                     if isinstance(v, (int, str))}
    except Exception as e:  # noqa: BLE001
        info["device_error"] = str(e)
    print(json.dumps(info), flush=True)

    cache_root = tempfile.mkdtemp()
    ctx = mp.get_context("spawn")
    # Heavy kernels first so the tail of the run is short ones.
    order = sorted(range(len(cfgs)), key=lambda i: (cfgs[i]["kernel"] not in
                                                    ("attn_fwd", "geglu", "matmul_persistent_tma"),
                                                    cfgs[i]["target"] != 90))
    results = {}
    pool = ctx.Pool(args.jobs, initializer=_init_worker, initargs=(cache_root, ),
                    maxtasksperchild=40)
    pending = {i: pool.apply_async(compile_one, (cfgs[i], )) for i in order}
    while pending and time.time() - start < args.deadline:
        done = [i for i, r in pending.items() if r.ready()]
        for i in done:
            try:
                results[i] = pending.pop(i).get()
            except Exception as e:  # noqa: BLE001
                results[i] = {"id": cfgs[i]["id"], "error": "worker: %s" % e}
        if not done:
            time.sleep(0.2)
        if len(results) % 50 == 0 and done:
            print("done %d/%d at %.0fs" % (len(results), len(cfgs), time.time() - start),
                  flush=True)
    for i in pending:
        results[i] = dict({k: cfgs[i][k] for k in ["id", "kernel", "target", "dtype",
                                                     "out_dtype", "params", "num_warps",
                                                     "num_stages"]},
                          error="not compiled: deadline reached")
    pool.terminate()

    recs = [results[i] for i in range(len(cfgs))]
    tg = tarfile.open(os.path.join(args.out, "ttgir.tar.gz"), "w:gz")
    ta = tarfile.open(os.path.join(args.out, "alloc.tar.gz"), "w:gz")
    for r in recs:
        for key, tar, ext in [("ttgir", tg, ".ttgir"), ("alloc_ir", ta, ".alloc.mlir")]:
            text = r.pop(key, None)
            if text:
                data = text.encode()
                ti = tarfile.TarInfo(r["id"] + ext)
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
    tg.close()
    ta.close()
    ok = [r for r in recs if "shared" in r]
    info["configs"] = len(recs)
    info["compiled"] = len(ok)
    info["wall_s"] = time.time() - start
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"info": info, "records": recs}, f, indent=1, sort_keys=True)
    errs = {}
    for r in recs:
        if "error" in r:
            errs.setdefault((r["kernel"], r["target"]), []).append(r["error"][:200])
    for k, v in sorted(errs.items()):
        print("ERRORS", k, len(v), v[0])
    oor = [r for r in recs if "out_of_resources" in r]
    print("compiled %d/%d, OutOfResources on sm_90: %d, over target limit: %d, %.0fs" %
          (len(ok), len(recs), len(oor), sum(1 for r in ok if r["over_target_limit"]),
           time.time() - start))
    tr = [r for r in recs if "traceback" in r]
    if tr:
        print(tr[0]["traceback"])


if __name__ == "__main__":
    main()
