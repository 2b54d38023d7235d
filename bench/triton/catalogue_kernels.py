# Kernels of the CPU fixture catalogue (make_catalogue.py) beyond those of the GPU sweep
# (fixture_kernels.py). Written for Triton >= 3.6 and compiled through ASTSource only, so they
# never run; they are meant to be the shapes real kernels take (the Triton tutorials, vLLM's
# fused MoE, Liger's cross-entropy and norms), each exercising different TTGIR constructs.
import triton
import triton.language as tl

# ----------------------------------------------------------------------------------------------
# GEMMs
# ----------------------------------------------------------------------------------------------


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, ACC_INT: tl.constexpr):
    # Pointer GEMM with every stride an argument: the JIT regime turns the unit strides into
    # constexpr 1 (contiguous, vectorized loads), the plain regime keeps them runtime values.
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
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    if ACC_INT:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if ACC_INT:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        else:
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
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def gemm_persistent_desc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr,
                                EPILOGUE_SUBTILE: tl.constexpr, WARP_SPEC: tl.constexpr,
                                FLATTEN: tl.constexpr):
    # Tutorial 09's persistent device-descriptor GEMM with epilogue subtiling.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    if EPILOGUE_SUBTILE:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                           block_shape=[BLOCK_M, BLOCK_N // 2])
    else:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                           block_shape=[BLOCK_M, BLOCK_N])
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN,
                            warp_specialize=WARP_SPEC):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([offs_am, ki * BLOCK_K])
            b = b_desc.load([offs_bn, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        if EPILOGUE_SUBTILE:
            acc = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c_desc.store([offs_am, offs_bn], acc0.to(c_desc.dtype))
            c_desc.store([offs_am, offs_bn + BLOCK_N // 2], acc1.to(c_desc.dtype))
        else:
            c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


@triton.jit
def gemm_splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       SPLIT_K: tl.constexpr):
    # Split-K: each program reduces one slice of K and adds its tile into C with atomics.
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    A = a_ptr + ram[:, None] * stride_am + rk[None, :]
    B = b_ptr + rk[:, None] * stride_bk + rbn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_rem = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(A, mask=rk[None, :] < k_rem, other=0.0)
        b = tl.load(B, mask=rk[:, None] < k_rem, other=0.0)
        acc = tl.dot(a, b, acc)
        A += BLOCK_K * SPLIT_K
        B += BLOCK_K * SPLIT_K * stride_bk
    C = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.atomic_add(C, acc, mask=mask, sem="relaxed")


@triton.jit
def bmm3d_kernel(a_ptr, b_ptr, c_ptr, K, stride_ab, stride_am, stride_bb, stride_bk, stride_cb,
                 stride_cm, BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    # A 3-D (batched) tl.dot: [B, M, K] x [B, K, N].
    ob = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    om = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    on = tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + ob[:, None, None] * stride_ab + om[None, :, None] * stride_am + ok[None, None, :]
    b_ptrs = b_ptr + ob[:, None, None] * stride_bb + ok[None, :, None] * stride_bk + on[None, None, :]
    acc = tl.zeros((BLOCK_B, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + ob[:, None, None] * stride_cb + om[None, :, None] * stride_cm + on[None, None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def dot_scaled_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, K, stride_am, stride_bk,
                      stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, A_FMT: tl.constexpr, B_FMT: tl.constexpr):
    # Microscaled (MX) GEMM: e2m1 operands packed two per byte, e8m0 scales per 32 elements of K;
    # A_FMT "bf16" has no scale.
    A_DIV: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_DIV: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    SK: tl.constexpr = BLOCK_K // 32
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_ka = tl.arange(0, BLOCK_K // A_DIV)
    offs_kb = tl.arange(0, BLOCK_K // B_DIV)
    offs_s = tl.arange(0, SK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_ka[None, :]
    b_ptrs = b_ptr + offs_kb[:, None] * stride_bk + offs_n[None, :]
    sa_ptrs = a_scale_ptr + offs_m[:, None] * (K // 32) + offs_s[None, :]
    sb_ptrs = b_scale_ptr + offs_n[:, None] * (K // 32) + offs_s[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        sb = tl.load(sb_ptrs)
        if A_FMT == "bf16":
            acc = tl.dot_scaled(a, None, A_FMT, b, sb, B_FMT, acc)
        else:
            sa = tl.load(sa_ptrs)
            acc = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, acc)
        a_ptrs += BLOCK_K // A_DIV
        b_ptrs += (BLOCK_K // B_DIV) * stride_bk
        sa_ptrs += SK
        sb_ptrs += SK
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def moe_gemm_kernel(a_ptr, b_ptr, c_ptr, topk_w_ptr, sorted_token_ids_ptr, expert_ids_ptr,
                    num_tokens_post_padded_ptr, N, K, EM, num_valid_tokens, stride_am, stride_be,
                    stride_bn, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, TOP_K: tl.constexpr,
                    MUL_ROUTED_WEIGHT: tl.constexpr):
    # vLLM's fused MoE grouped GEMM: token rows gathered through sorted_token_ids, the expert's
    # weight picked per block through expert_ids.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(EM, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_token[:, None] // TOP_K * stride_am + offs_k[None, :])
    off_experts = tl.load(expert_ids_ptr + pid_m)
    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_K),
                    other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_w_ptr + offs_token, mask=token_mask, other=0)
        acc = acc * w[:, None]
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=token_mask[:, None] & (offs_cn[None, :] < N))


# ----------------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------------


@triton.jit
def attn_fwd2_kernel(Q, K, V, M_out, Out, sm_scale, stride_m, N_CTX, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                     WARP_SPEC: tl.constexpr):
    # Flash attention forward with causal masking, the log-sum-exp output the backward needs,
    # and optionally a warp-specialized KV loop.
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
    hi = N_CTX
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WARP_SPEC):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk = qk - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M_out + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(Out.type.element_ty))


@triton.jit
def attn_bwd_dkdv_kernel(Q, K, V, DO, DK, DV, M, D, sm_scale, stride_m, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         CAUSAL: tl.constexpr):
    # Flash attention backward, dK and dV for one block of keys (tutorial 06's _attn_bwd_dkdv).
    pid = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * stride_m
    start_n = pid * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + base + offs_n[:, None] * stride_m + offs_d[None, :])
    v = tl.load(V + base + offs_n[:, None] * stride_m + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    lo = 0
    if CAUSAL:
        lo = start_n
    for start_m in tl.range(lo, N_CTX, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        qT = tl.load(Q + base + offs_m[None, :] * stride_m + offs_d[:, None])
        m = tl.load(M + off_hz * N_CTX + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if CAUSAL:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(DO + base + offs_m[:, None] * stride_m + offs_d[None, :])
        dv += tl.dot(pT.to(do.dtype), do)
        Di = tl.load(D + off_hz * N_CTX + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dk += tl.dot(dsT.to(qT.dtype), tl.trans(qT))
    dk *= sm_scale
    tl.store(DK + base + offs_n[:, None] * stride_m + offs_d[None, :], dk.to(DK.type.element_ty))
    tl.store(DV + base + offs_n[:, None] * stride_m + offs_d[None, :], dv.to(DV.type.element_ty))


@triton.jit
def attn_bwd_dq_kernel(Q, K, V, DO, DQ, M, D, sm_scale, stride_m, N_CTX, HEAD_DIM: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # Flash attention backward, dQ for one block of queries (tutorial 06's _attn_bwd_dq).
    pid = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * stride_m
    start_m = pid * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    do = tl.load(DO + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m = tl.load(M + off_hz * N_CTX + offs_m)
    Di = tl.load(D + off_hz * N_CTX + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = N_CTX
    if CAUSAL:
        hi = start_m + BLOCK_M
    for start_n in tl.range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kT = tl.load(K + base + offs_n[None, :] * stride_m + offs_d[:, None])
        vT = tl.load(V + base + offs_n[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m[:, None])
        if CAUSAL:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds.to(kT.dtype), tl.trans(kT))
    dq *= sm_scale
    tl.store(DQ + base + offs_m[:, None] * stride_m + offs_d[None, :], dq.to(DQ.type.element_ty))


# ----------------------------------------------------------------------------------------------
# Reductions, norms, cross-entropy
# ----------------------------------------------------------------------------------------------


@triton.jit
def _welford_combine(m1, s1, n1, m2, s2, n2):
    n = n1 + n2
    w2 = tl.where(n == 0, 0.0, n2 / n)
    d = m2 - m1
    return m1 + d * w2, s1 + s2 + d * d * n1 * w2, n


@triton.jit
def reduce2d_kernel(x_ptr, y_ptr, z_ptr, stride_m, M, N, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    # A 2-D tile reduced along AXIS: sum, max, argmin (a value + index tuple reduction) or
    # Welford's mean/variance (a three-operand tl.reduce with a user combine function).
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride_m + offs_n[None, :], mask=mask,
                other=0.0).to(tl.float32)
    if AXIS == 0:
        offs_o = offs_n
    else:
        offs_o = offs_m
    if OP == "sum":
        tl.store(y_ptr + offs_o, tl.sum(x, axis=AXIS))
    elif OP == "max":
        tl.store(y_ptr + offs_o, tl.max(x, axis=AXIS))
    elif OP == "argmin":
        tl.store(z_ptr + offs_o, tl.argmin(x, axis=AXIS, tie_break_left=True))
    else:
        mean, m2, cnt = tl.reduce((x, tl.zeros_like(x), mask.to(tl.float32)), AXIS,
                                  _welford_combine)
        tl.store(y_ptr + offs_o, mean)
        tl.store(y_ptr + offs_o + BLOCK_M, m2 / tl.maximum(cnt, 1.0))


@triton.jit
def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, lse_ptr, stride, n_cols,
                         BLOCK_N: tl.constexpr):
    # Liger-style fused cross-entropy: online log-sum-exp over the row, loss, then the gradient
    # written over the logits in a second pass.
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * stride
    label = tl.load(labels_ptr + row)
    m = float("-inf")
    s = 0.0
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    lse = m + tl.log(s)
    x_label = tl.load(logits_ptr + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_label)
    tl.store(lse_ptr + row, lse)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        g = tl.exp(x - lse)
        g = tl.where(cols == label, g - 1.0, g)
        tl.store(logits_ptr + cols, g.to(logits_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def layernorm_bwd_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                         BLOCK_N: tl.constexpr, GROUP_SIZE_M: tl.constexpr, LOCK: tl.constexpr):
    # Tutorial 05's layer-norm backward: dX per row, partial dW/dB accumulated per group either
    # under a spin lock (atomic_cas / atomic_xchg around plain loads and stores) or by atomics.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=mask)
    partial_dw = dy * xhat
    partial_db = dy
    DW += lock_id * N + cols
    DB += lock_id * N + cols
    if LOCK:
        Lock += lock_id
        Count = Lock + GROUP_SIZE_M
        while tl.atomic_cas(Lock, 0, 1) == 1:
            pass
        count = tl.load(Count)
        if count == 0:
            tl.atomic_xchg(Count, 1)
        else:
            partial_dw += tl.load(DW, mask=mask)
            partial_db += tl.load(DB, mask=mask)
        tl.store(DW, partial_dw, mask=mask)
        tl.store(DB, partial_db, mask=mask)
        tl.debug_barrier()
        tl.atomic_xchg(Lock, 0)
    else:
        tl.atomic_add(DW, partial_dw, mask=mask)
        tl.atomic_add(DB, partial_db, mask=mask)


@triton.jit
def rmsnorm_fwd_kernel(X, Y, W, Rstd, stride, N, eps, BLOCK_N: tl.constexpr,
                       ONE_PASS: tl.constexpr):
    # RMSNorm forward, the row in one tile (ONE_PASS) or looped in BLOCK_N chunks.
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    if ONE_PASS:
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        w = tl.load(W + cols, mask=mask)
        tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for off in range(0, N, BLOCK_N):
            cols = off + tl.arange(0, BLOCK_N)
            x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for off in range(0, N, BLOCK_N):
            cols = off + tl.arange(0, BLOCK_N)
            mask = cols < N
            x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=mask)
            tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + row, rstd)


@triton.jit
def rmsnorm_bwd_kernel(DX, DY, DW, X, W, Rstd, stride, M, N, BLOCK_N: tl.constexpr,
                       ROWS_PER_PROGRAM: tl.constexpr):
    # RMSNorm backward (Liger style): dX per row, dW accumulated in registers over the rows of
    # the program and written once.
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(pid * ROWS_PER_PROGRAM, min((pid + 1) * ROWS_PER_PROGRAM, M)):
        x = tl.load(X + r * stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + r * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + r)
        xhat = x * rstd
        wdy = w * dy
        c = tl.sum(xhat * wdy, axis=0) / N
        dx = (wdy - xhat * c) * rstd
        tl.store(DX + r * stride + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(DW + pid * N + cols, dw, mask=mask)


# ----------------------------------------------------------------------------------------------
# Scans
# ----------------------------------------------------------------------------------------------


@triton.jit
def _linrec_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def scan2d_kernel(x_ptr, g_ptr, y_ptr, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  AXIS: tl.constexpr, OP: tl.constexpr, REVERSE: tl.constexpr):
    # 2-D scans along AXIS: tl.cumsum, tl.cumprod, or a first-order linear recurrence
    # h = g * h + x through tl.associative_scan of a (g, x) tuple.
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs = offs_m[:, None] * stride + offs_n[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        y = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    elif OP == "cumprod":
        y = tl.cumprod(x, axis=AXIS, reverse=REVERSE)
    else:
        g = tl.load(g_ptr + offs)
        _, y = tl.associative_scan((g, x), axis=AXIS, combine_fn=_linrec_combine,
                                   reverse=REVERSE)
    tl.store(y_ptr + offs, y)


@triton.jit
def sort_topk_kernel(x_ptr, y_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     K: tl.constexpr, OP: tl.constexpr):
    # Bitonic tl.sort / tl.topk / tl.flip along the last dimension of a tile.
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :])
    if OP == "sort":
        tl.store(y_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], tl.sort(x, descending=True))
    elif OP == "flip":
        tl.store(y_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], tl.flip(x, 1))
    else:
        offs_k = tl.arange(0, K)
        tl.store(y_ptr + offs_m[:, None] * K + offs_k[None, :], tl.topk(x, K))


# ----------------------------------------------------------------------------------------------
# Layout changes
# ----------------------------------------------------------------------------------------------


@triton.jit
def permute3d_kernel(x_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr,
                     PERM: tl.constexpr):
    # tl.permute of a contiguous [A, B, C] tile, stored contiguous in the permuted order.
    ia = tl.arange(0, A)
    ib = tl.arange(0, B)
    ic = tl.arange(0, C)
    base = tl.program_id(0) * (A * B * C)
    x = tl.load(x_ptr + base + ia[:, None, None] * (B * C) + ib[None, :, None] * C + ic[None, None, :])
    if PERM == 0:
        y = tl.permute(x, (2, 1, 0))
        offs = ic[:, None, None] * (B * A) + ib[None, :, None] * A + ia[None, None, :]
    elif PERM == 1:
        y = tl.permute(x, (1, 0, 2))
        offs = ib[:, None, None] * (A * C) + ia[None, :, None] * C + ic[None, None, :]
    else:
        y = tl.permute(x, (0, 2, 1))
        offs = ia[:, None, None] * (C * B) + ic[None, :, None] * B + ib[None, None, :]
    tl.store(y_ptr + base + offs, y)


@triton.jit
def join_split_kernel(x_ptr, y_ptr, z_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      MODE: tl.constexpr):
    # tl.interleave, tl.join + tl.reshape, and tl.reshape + tl.split of 2-D tiles.
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_n2 = tl.arange(0, 2 * BLOCK_N)
    if MODE == 0:
        x = tl.load(x_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :])
        y = tl.load(y_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :])
        z = tl.interleave(x, y)
        tl.store(z_ptr + offs_m[:, None] * (2 * BLOCK_N) + offs_n2[None, :], z)
    elif MODE == 1:
        x = tl.load(x_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :])
        y = tl.load(y_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :])
        z = tl.reshape(tl.join(x, tl.trans(tl.trans(y))), (BLOCK_M, 2 * BLOCK_N))
        tl.store(z_ptr + offs_m[:, None] * (2 * BLOCK_N) + offs_n2[None, :], z * 2)
    else:
        z = tl.load(z_ptr + offs_m[:, None] * (2 * BLOCK_N) + offs_n2[None, :])
        a, b = tl.split(tl.reshape(z, (BLOCK_M, BLOCK_N, 2)))
        tl.store(x_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], a + b)
        tl.store(y_ptr + offs_n[:, None] * BLOCK_M + offs_m[None, :], tl.trans(a - b))


# ----------------------------------------------------------------------------------------------
# Gather, scatter, histograms
# ----------------------------------------------------------------------------------------------


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  AXIS: tl.constexpr):
    # tl.gather within a tile (the index tensor selects along AXIS).
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs = offs_m[:, None] * BLOCK_N + offs_n[None, :]
    src = tl.load(src_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(src, idx, axis=AXIS))


@triton.jit
def embedding_kernel(table_ptr, ids_ptr, out_ptr, grad_ptr, stride_t, D, BLOCK_T: tl.constexpr,
                     BLOCK_D: tl.constexpr, SCATTER: tl.constexpr):
    # Embedding lookup (indexed gather through pointers) and its backward as an atomic
    # scatter-add (SCATTER).
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    ids = tl.load(ids_ptr + offs_t)
    mask = offs_d[None, :] < D
    if SCATTER:
        g = tl.load(grad_ptr + offs_t[:, None] * stride_t + offs_d[None, :], mask=mask, other=0.0)
        tl.atomic_add(table_ptr + ids[:, None] * stride_t + offs_d[None, :], g, mask=mask)
    else:
        rows = tl.load(table_ptr + ids[:, None] * stride_t + offs_d[None, :], mask=mask)
        tl.store(out_ptr + offs_t[:, None] * stride_t + offs_d[None, :], rows, mask=mask)


@triton.jit
def histogram2_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr, NUM_BINS: tl.constexpr,
                      MASKED: tl.constexpr, GLOBAL: tl.constexpr):
    # tl.histogram of a block (optionally masked), merged into the global histogram with
    # atomics (GLOBAL) or stored per program.
    pid = tl.program_id(0)
    offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0)
    if MASKED:
        h = tl.histogram(x, NUM_BINS, mask=offs < N)
    else:
        h = tl.histogram(x, NUM_BINS)
    bins = tl.arange(0, NUM_BINS)
    if GLOBAL:
        tl.atomic_add(y_ptr + bins, h)
    else:
        tl.store(y_ptr + pid * NUM_BINS + bins, h)


@triton.jit
def desc_gather_kernel(x_ptr, idx_ptr, out_ptr, M, N, BLOCK_X: tl.constexpr,
                       BLOCK_Y: tl.constexpr):
    # Tensor-descriptor row gather (TMA gather4 on Blackwell) and scatter.
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1],
                                     block_shape=[1, BLOCK_Y])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1],
                                         block_shape=[1, BLOCK_Y])
    rows = tl.load(idx_ptr + tl.arange(0, BLOCK_X))
    y0 = tl.program_id(0) * BLOCK_Y
    vals = desc.gather(rows, y0)
    out_desc.scatter(vals * 2, rows, y0)


@triton.jit
def gemm_host_desc_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr,
                          WARP_SPEC: tl.constexpr):
    # Persistent GEMM on host-side tensor descriptors (TensorDescriptor arguments: the TMA
    # descriptor is a kernel parameter, no ttng.tensormap_create), optionally warp-specialized.
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=not WARP_SPEC,
                            warp_specialize=WARP_SPEC):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))
