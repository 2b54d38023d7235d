"""The Triton kernels of the Python package's measurements and tests (no torch needed to import).

matmul_kernel: bench/planner/sweep_triton_matmul.py's matmul (C = A x B, fp32 accumulation,
GROUP_M tile order), the kernel the planner's Triton matmul graph family
(models/graphs/triton_matmul.pbtxt) was validated on; its signature and body are the same.
matmul_clocked_kernel: the same with its first block reading the SM's cycle counter and the
nanosecond timer at its start and end (bench/planner/burst_clock.py: the SM clock of a launch).
matmul_splitk_kernel: the same matmul with K split over SPLIT_K programs per output tile (grid axis
1), each adding its partial product into C with an atomic add (C zeroed first; SPLIT_K=1 stores
like matmul_kernel): the split-K family (models/graphs/triton_matmul_splitk.pbtxt).
attn_fwd_kernel: a flash-attention forward (online softmax, one (batch, head) per grid column,
N_CTX a multiple of BLOCK_N), the shape of Triton's fused-attention tutorial without masking.
"""
import itertools

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def _read_clock():
    """The SM's cycle counter and the GPU's nanosecond timer, read together."""
    cycles = tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    ns = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    return cycles, ns


@triton.jit
def matmul_clocked_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                          stride_cm, stride_cn, clock_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """matmul_kernel whose block 0 writes its SM's cycle counter and the nanosecond timer at its
    start and end to clock_ptr[0:4]: cycles over nanoseconds is the SM clock the launch ran at."""
    cycles0, ns0 = _read_clock()
    _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    cycles1, ns1 = _read_clock()
    if tl.program_id(0) == 0:
        tl.store(clock_ptr, cycles0)
        tl.store(clock_ptr + 1, ns0)
        tl.store(clock_ptr + 2, cycles1)
        tl.store(clock_ptr + 3, ns1)


@triton.jit
def _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One program's tile of C = A x B (the body of matmul_kernel)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def matmul_splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                         stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    # This program's share of the K steps: cdiv(K steps, SPLIT_K) of them, the last share shorter.
    k_steps = tl.cdiv(K, BLOCK_K)
    steps_per_split = tl.cdiv(k_steps, SPLIT_K)
    k_first = pid_k * steps_per_split
    k_end = min(k_first + steps_per_split, k_steps)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + (k_first * BLOCK_K + offs_k)[None, :] * stride_ak
    b_ptrs = b_ptr + (k_first * BLOCK_K + offs_k)[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_first, k_end):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if SPLIT_K == 1:
        tl.store(c_ptrs, c, mask=c_mask)
    else:
        tl.atomic_add(c_ptrs, c, mask=c_mask, sem="relaxed")


# The runtime arguments' types as the JIT sees 16-byte aligned fp16 tensors and sizes that are
# multiples of 16 (scratchsim.triton's signature form); unit strides are the JIT's constexpr 1.
MATMUL_SIGNATURE = {
    "a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32:16", "N": "i32:16", "K": "i32:16",
    "stride_am": "i32:16", "stride_ak": 1, "stride_bk": "i32:16", "stride_bn": 1, "stride_cm": "i32:16",
    "stride_cn": 1,
}


def matmul_configs(block_m=(32, 64, 128, 256), block_n=(32, 64, 128, 256), block_k=(32, 64, 128),
                   stages=(2, 3, 4, 5), warps=(4, 8)):
    """The matmul space: triton.Config per (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps)."""
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in itertools.product(block_m, block_n, block_k, stages, warps)]


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, sm_scale, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
                    stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    q = tl.load(q_ptrs)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_base + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty))


ATTN_SIGNATURE = {
    "Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
    "stride_qz": "i32:16", "stride_qh": "i32:16", "stride_qm": "i32:16", "stride_kz": "i32:16",
    "stride_kh": "i32:16", "stride_kn": "i32:16", "stride_vz": "i32:16", "stride_vh": "i32:16",
    "stride_vn": "i32:16", "stride_oz": "i32:16", "stride_oh": "i32:16", "stride_om": "i32:16",
    "H": "i32", "N_CTX": "i32:16",
}


def attn_configs(head_dim=128, block_m=(32, 64, 128, 256), block_n=(32, 64, 128, 256), stages=(1, 2, 3, 4, 5),
                 warps=(4, 8)):
    """The attention space: triton.Config per (BLOCK_M, BLOCK_N, num_stages, num_warps)."""
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "HEAD_DIM": head_dim}, num_stages=s, num_warps=w)
            for m, n, s, w in itertools.product(block_m, block_n, stages, warps)]
