# Kernels of the held-out corpus (make_heldout_corpus.py): kinds that neither the catalogue
# (catalogue_kernels.py, fixture_kernels.py) nor the fixture sets contain, written for Triton
# >= 3.6 after the structure real kernels have (fused norms in front of a GEMM, gated MLPs,
# weight-only quantized GEMMs, convolutions as GEMMs, paged KV caches, packed top-k...). They are
# compiled through ASTSource only and never run. Nothing the Triton backend models was fitted on
# them: they judge it.
import triton
import triton.language as tl

# ----------------------------------------------------------------------------------------------
# GEMMs with something fused in
# ----------------------------------------------------------------------------------------------


@triton.jit
def rmsnorm_matmul_kernel(x_ptr, g_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_wk, stride_ym,
                          eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    # y = (x / rms(x) * g) @ w: a first pass over K for the rows' mean square, a second one
    # normalizing each K slab before the dot.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    ss = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rm[:, None] * stride_xm + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0).to(tl.float32)
        ss += tl.sum(x * x, axis=1)
    inv = 1.0 / tl.sqrt(ss / K + eps)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rm[:, None] * stride_xm + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        g = tl.load(g_ptr + k + rk, mask=(k + rk) < K, other=0.0)
        xn = (x.to(tl.float32) * inv[:, None] * g[None, :].to(tl.float32)).to(w_ptr.dtype.element_ty)
        w = tl.load(w_ptr + (k + rk)[:, None] * stride_wk + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(xn, w, acc)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def swiglu_down_kernel(g_ptr, u_ptr, w_ptr, y_ptr, M, N, K, stride_hm, stride_wk, stride_ym,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # The MLP's down projection with the SwiGLU gate fused: h = silu(gate) * up per K slab.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        offs = rm[:, None] * stride_hm + (k + rk)[None, :]
        g = tl.load(g_ptr + offs).to(tl.float32)
        u = tl.load(u_ptr + offs).to(tl.float32)
        h = (g * tl.sigmoid(g) * u).to(w_ptr.dtype.element_ty)
        w = tl.load(w_ptr + (k + rk)[:, None] * stride_wk + rn[None, :])
        acc = tl.dot(h, w, acc)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def int4_matmul_kernel(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP: tl.constexpr):
    # Weight-only int4: B holds two signed nibbles per byte along K; unpacked in the loop
    # (shifts, join, permute, reshape), scaled per GROUP rows of K, then a 16-bit dot.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rkh = tl.arange(0, BLOCK_K // 2)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
        packed = tl.load(b_ptr + (k // 2 + rkh)[:, None] * stride_bk + rn[None, :])
        lo = (packed << 4) >> 4
        hi = packed >> 4
        w = tl.join(lo, hi)  # [BLOCK_K // 2, BLOCK_N, 2]
        w = tl.permute(w, (0, 2, 1)).reshape(BLOCK_K, BLOCK_N)
        s = tl.load(s_ptr + (k // GROUP) * N + rn)
        wf = w.to(tl.float16) * s[None, :]
        acc = tl.dot(a, wf, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


@triton.jit
def conv2d_igemm_kernel(x_ptr, w_ptr, y_ptr, B, H, W, C, OC, OH, OW, stride_wk,
                        KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr,
                        PAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    # NHWC convolution as an implicit GEMM: rows are output pixels, K runs over (kh, kw, c);
    # the input patch is gathered through computed addresses with padding masks.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ow = rm % OW
    oh = (rm // OW) % OH
    ob = rm // (OW * OH)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    KTOT = KH * KW * C
    for k0 in range(0, KTOT, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        c = rk % C
        kw = (rk // C) % KW
        kh = rk // (C * KW)
        ih = oh[:, None] * STRIDE - PAD + kh[None, :]
        iw = ow[:, None] * STRIDE - PAD + kw[None, :]
        ok = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & (ob[:, None] < B) & (rk[None, :] < KTOT)
        x = tl.load(x_ptr + ((ob[:, None] * H + ih) * W + iw) * C + c[None, :], mask=ok, other=0.0)
        w = tl.load(w_ptr + rk[:, None] * stride_wk + rn[None, :],
                    mask=(rk[:, None] < KTOT) & (rn[None, :] < OC), other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(y_ptr + rm[:, None] * OC + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < B * OH * OW) & (rn[None, :] < OC))


@triton.jit
def grouped_gemm_kernel(a_ptrs, b_ptrs, c_ptrs, sizes, lds, group_count, NUM_PROGRAMS, elem_ptr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Grouped GEMM over arrays of pointers (one problem per group, sizes [g, 3] = M, N, K),
    # tiles of all groups handed out to a fixed grid; elem_ptr only names the element type.
    DTYPE = elem_ptr.dtype.element_ty
    pid = tl.program_id(0)
    seen = 0
    for g in range(group_count):
        m = tl.load(sizes + g * 3)
        n = tl.load(sizes + g * 3 + 1)
        k = tl.load(sizes + g * 3 + 2)
        tiles_m = tl.cdiv(m, BLOCK_M)
        tiles = tiles_m * tl.cdiv(n, BLOCK_N)
        while pid >= seen and pid < seen + tiles:
            a = tl.load(a_ptrs + g).to(tl.pointer_type(DTYPE))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(DTYPE))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(DTYPE))
            lda = tl.load(lds + g * 3)
            ldb = tl.load(lds + g * 3 + 1)
            ldc = tl.load(lds + g * 3 + 2)
            t = pid - seen
            rm = (t % tiles_m) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = (t // tiles_m) * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_K)):
                x = tl.load(a + rm[:, None] * lda + (kk * BLOCK_K + rk)[None, :])
                y = tl.load(b + (kk * BLOCK_K + rk)[:, None] * ldb + rn[None, :])
                acc += tl.dot(x, y)
            tl.store(c + rm[:, None] * ldc + rn[None, :], acc.to(DTYPE))
            pid += NUM_PROGRAMS
        seen += tiles


@triton.jit
def bmm_reshape_kernel(a_ptr, b_ptr, c_ptr, K, stride_ab, stride_am, stride_bk, stride_cb,
                       stride_cm, BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Batched matmul against one shared B: the [B, M, K] tile is folded into [B*M, K] for a 2-D
    # dot and the result unfolded to [B, M, N].
    pid_b = tl.program_id(0)
    pid_n = tl.program_id(1)
    ob = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    om = tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_B * BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + ob[:, None, None] * stride_ab + om[None, :, None] * stride_am +
                    (k + ok)[None, None, :])
        b = tl.load(b_ptr + (k + ok)[:, None] * stride_bk + on[None, :])
        acc = tl.dot(tl.reshape(a, (BLOCK_B * BLOCK_M, BLOCK_K)), b, acc)
    c = tl.reshape(acc, (BLOCK_B, BLOCK_M, BLOCK_N)).to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + ob[:, None, None] * stride_cb + om[None, :, None] * stride_cm +
             on[None, None, :], c)


@triton.jit
def mixed_tile_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           EVEN_K: tl.constexpr):
    # A GEMM with B stored N-major (a transposed load) and skinny or wide tiles.
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // num_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % num_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
            bt = tl.load(b_ptr + rn[:, None] * stride_bn + (k + rk)[None, :])
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :],
                        mask=(k + rk)[None, :] < K, other=0.0)
            bt = tl.load(b_ptr + rn[:, None] * stride_bn + (k + rk)[None, :],
                         mask=(k + rk)[None, :] < K, other=0.0)
        acc = tl.dot(a, tl.trans(bt), acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def persistent_bias_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                           stride_cm, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GELU: tl.constexpr):
    # Persistent pointer GEMM: a fixed grid walks the output tiles, adds a bias row and an
    # optional tanh-GELU in the epilogue.
    start = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    for tile in tl.range(start, num_m * num_n, NUM_SMS):
        rm = (tile % num_m) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = (tile // num_m) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
            acc = tl.dot(a, b, acc)
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        if GELU:
            inner = 0.7978845608 * (acc + 0.044715 * acc * acc * acc)
            acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def dot_scaled_trans_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, K, stride_ak,
                            stride_bn, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr, FMT: tl.constexpr, TRANS_A: tl.constexpr):
    # MX GEMM with B stored [N, K] (transposed in registers) and A optionally stored [K, M].
    DIV: tl.constexpr = 2 if FMT == "e2m1" else 1
    SK: tl.constexpr = BLOCK_K // 32
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K // DIV)
    rs = tl.arange(0, SK)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if TRANS_A:
            a = tl.trans(tl.load(a_ptr + (k * (BLOCK_K // DIV) + rk)[:, None] * stride_ak +
                                 rm[None, :]))
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_ak + (k * (BLOCK_K // DIV) + rk)[None, :])
        bt = tl.load(b_ptr + rn[:, None] * stride_bn + (k * (BLOCK_K // DIV) + rk)[None, :])
        sa = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + (k * SK + rs)[None, :])
        sb = tl.load(b_scale_ptr + rn[:, None] * (K // 32) + (k * SK + rs)[None, :])
        acc = tl.dot_scaled(a, sa, FMT, tl.trans(bt), sb, FMT, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def loop_options_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        UNROLL: tl.constexpr, MODE: tl.constexpr):
    # The same GEMM under tl.range's options: MODE 0 loop_unroll_factor on the K loop, 1 a
    # two-deep tile loop with flatten=True, 2 warp_specialize on the K loop, 3 disallowing the
    # accumulator's multi-buffering.
    pid = tl.program_id(0)
    rk = tl.arange(0, BLOCK_K)
    if MODE == 1:
        for tm in tl.range(pid, tl.cdiv(M, BLOCK_M), tl.num_programs(0), flatten=True):
            rm = tm * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = tl.arange(0, BLOCK_N)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in tl.range(0, K, BLOCK_K):
                a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
                b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
                acc = tl.dot(a, b, acc)
            tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))
    else:
        rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        if MODE == 0:
            for k in tl.range(0, K, BLOCK_K, loop_unroll_factor=UNROLL):
                a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
                b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
                acc = tl.dot(a, b, acc)
        elif MODE == 2:
            for k in tl.range(0, K, BLOCK_K, warp_specialize=True):
                a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
                b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
                acc = tl.dot(a, b, acc)
        else:
            for k in tl.range(0, K, BLOCK_K, disallow_acc_multi_buffer=True):
                a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
                b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
                acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


# ----------------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------------


@triton.jit
def sliding_window_attn_kernel(Q, K, V, Out, sm_scale, stride_m, N_CTX, HEAD_DIM: tl.constexpr,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               WINDOW: tl.constexpr):
    # Causal attention restricted to the last WINDOW keys: the key loop starts at the window's
    # first block, the mask drops keys past the query and before the window.
    start_m = tl.program_id(0)
    off_h = tl.program_id(1).to(tl.int64) * N_CTX * stride_m
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_h + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full((BLOCK_M, ), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lo = tl.maximum(start_m * BLOCK_M - WINDOW, 0) // BLOCK_N * BLOCK_N
    hi = (start_m + 1) * BLOCK_M
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(K + off_h + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        d = offs_m[:, None] - (start_n + offs_n)[None, :]
        qk = tl.where((d >= 0) & (d < WINDOW), qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + off_h + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(Out + off_h + offs_m[:, None] * stride_m + offs_d[None, :],
             (acc / l_i[:, None]).to(Out.dtype.element_ty))


@triton.jit
def paged_decode_kernel(Q, KC, VC, block_tables, seq_lens, Out, sm_scale, stride_qs, stride_kb,
                        stride_bt, HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                        GROUP_H: tl.constexpr):
    # Decode attention over a paged KV cache: one sequence and one KV head per program, the
    # GROUP_H query heads sharing it (GQA) as the dot's rows; each page's physical block number
    # read from the block table.
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    offs_h = tl.arange(0, GROUP_H)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, BLOCK_SIZE)
    q = tl.load(Q + seq * stride_qs + (kvh * GROUP_H + offs_h)[:, None] * HEAD_DIM + offs_d[None, :])
    n = tl.load(seq_lens + seq)
    m_i = tl.full((GROUP_H, ), float("-inf"), tl.float32)
    l_i = tl.zeros((GROUP_H, ), dtype=tl.float32)
    acc = tl.zeros((GROUP_H, HEAD_DIM), dtype=tl.float32)
    for b in range(0, tl.cdiv(n, BLOCK_SIZE)):
        phys = tl.load(block_tables + seq * stride_bt + b).to(tl.int64)
        base = phys * stride_kb + kvh * BLOCK_SIZE * HEAD_DIM
        kv_off = base + offs_t[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(KC + kv_off)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        qk = tl.where((b * BLOCK_SIZE + offs_t)[None, :] < n, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(VC + kv_off)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(Out + seq * stride_qs + (kvh * GROUP_H + offs_h)[:, None] * HEAD_DIM + offs_d[None, :],
             (acc / l_i[:, None]).to(Out.dtype.element_ty))


@triton.jit
def rotary_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, stride_t, BLOCK_T: tl.constexpr,
                  HEAD_DIM: tl.constexpr, INTERLEAVED: tl.constexpr):
    # Rotary position embedding of a [tokens, head_dim] tile: halves rotated (NeoX) or
    # interleaved pairs (GPT-J), split and joined back in registers.
    HALF: tl.constexpr = HEAD_DIM // 2
    pid = tl.program_id(0)
    rt = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    rd = tl.arange(0, HEAD_DIM)
    rh = tl.arange(0, HALF)
    x = tl.load(x_ptr + rt[:, None] * stride_t + rd[None, :]).to(tl.float32)
    c = tl.load(cos_ptr + rt[:, None] * HALF + rh[None, :])
    s = tl.load(sin_ptr + rt[:, None] * HALF + rh[None, :])
    if INTERLEAVED:
        x1, x2 = tl.split(tl.reshape(x, (BLOCK_T, HALF, 2)))
    else:
        x1, x2 = tl.split(tl.permute(tl.reshape(x, (BLOCK_T, 2, HALF)), (0, 2, 1)))
    y1 = x1 * c - x2 * s
    y2 = x2 * c + x1 * s
    if INTERLEAVED:
        y = tl.reshape(tl.join(y1, y2), (BLOCK_T, HEAD_DIM))
    else:
        y = tl.reshape(tl.permute(tl.join(y1, y2), (0, 2, 1)), (BLOCK_T, HEAD_DIM))
    tl.store(y_ptr + rt[:, None] * stride_t + rd[None, :], y.to(y_ptr.dtype.element_ty))


# ----------------------------------------------------------------------------------------------
# Norms, scans, sorts, gathers
# ----------------------------------------------------------------------------------------------


@triton.jit
def group_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, eps, GROUPS: tl.constexpr,
                      BLOCK_C: tl.constexpr, BLOCK_HW: tl.constexpr):
    # GroupNorm over NCHW: one (sample, group) per program; the group's C/GROUPS channels x HW
    # pixels walked in [BLOCK_C, BLOCK_HW] tiles for the mean and variance, then normalized
    # with each channel's affine weight.
    n = tl.program_id(0)
    g = tl.program_id(1)
    cpg = C // GROUPS
    base = x_ptr + (n * C + g * cpg) * HW
    rc = tl.arange(0, BLOCK_C)
    rp = tl.arange(0, BLOCK_HW)
    s = tl.zeros((BLOCK_C, BLOCK_HW), dtype=tl.float32)
    ss = tl.zeros((BLOCK_C, BLOCK_HW), dtype=tl.float32)
    for p in range(0, HW, BLOCK_HW):
        msk = (rc[:, None] < cpg) & ((p + rp)[None, :] < HW)
        x = tl.load(base + rc[:, None] * HW + (p + rp)[None, :], mask=msk, other=0.0).to(tl.float32)
        s += x
        ss += x * x
    cnt = cpg * HW
    mean = tl.sum(tl.sum(s, axis=1), axis=0) / cnt
    var = tl.sum(tl.sum(ss, axis=1), axis=0) / cnt - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + g * cpg + rc, mask=rc < cpg, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + g * cpg + rc, mask=rc < cpg, other=0.0).to(tl.float32)
    for p in range(0, HW, BLOCK_HW):
        msk = (rc[:, None] < cpg) & ((p + rp)[None, :] < HW)
        x = tl.load(base + rc[:, None] * HW + (p + rp)[None, :], mask=msk, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w[:, None] + b[:, None]
        tl.store(y_ptr + (n * C + g * cpg) * HW + rc[:, None] * HW + (p + rp)[None, :],
                 y.to(y_ptr.dtype.element_ty), mask=msk)


@triton.jit
def _seg_combine(f1, v1, f2, v2):
    # Segmented sum: a set flag on the right starts a new segment.
    return f1 | f2, tl.where(f2 != 0, v2, v1 + v2)


@triton.jit
def segscan3d_kernel(x_ptr, f_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr,
                     AXIS: tl.constexpr):
    # Segmented prefix sums of a 3-D tile along AXIS, segment starts given by flags.
    ra = tl.arange(0, A)[:, None, None]
    rb = tl.arange(0, B)[None, :, None]
    rc = tl.arange(0, C)[None, None, :]
    offs = ra * B * C + rb * C + rc
    x = tl.load(x_ptr + offs)
    f = tl.load(f_ptr + offs)
    _, y = tl.associative_scan((f, x), axis=AXIS, combine_fn=_seg_combine)
    tl.store(y_ptr + offs, y)


@triton.jit
def topk_packed_kernel(x_ptr, vals_ptr, idx_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       K: tl.constexpr):
    # Top-k by one sort of packed keys: the float's order-preserving integer image in the high
    # 32 bits, the column index in the low ones; unpacked after tl.topk.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rm[:, None] * BLOCK_N + rn[None, :]).to(tl.float32)
    bits = x.to(tl.int32, bitcast=True)
    key = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
    packed = (key.to(tl.int64) << 32) | rn[None, :].to(tl.int64)
    top = tl.topk(packed, K)
    idx = (top & 0xFFFFFFFF).to(tl.int32)
    kb = (top >> 32).to(tl.int32)
    val = tl.where(kb < 0, kb ^ 0x7FFFFFFF, kb).to(tl.float32, bitcast=True)
    rk = tl.arange(0, K)
    tl.store(vals_ptr + rm[:, None] * K + rk[None, :], val)
    tl.store(idx_ptr + rm[:, None] * K + rk[None, :], idx)


@triton.jit
def gather_hist_kernel(x_ptr, y_ptr, h_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       NUM_BINS: tl.constexpr):
    # Bucket counts of a tile's keys (tl.histogram), then each element's bucket population
    # gathered back per row (tl.gather of the broadcast histogram): a frequency encoding.
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    keys = tl.load(x_ptr + rm[:, None] * BLOCK_N + rn[None, :]) & (NUM_BINS - 1)
    h = tl.histogram(tl.reshape(keys, (BLOCK_M * BLOCK_N, )), NUM_BINS)
    tl.store(h_ptr + tl.arange(0, NUM_BINS), h)
    table = tl.broadcast_to(h[None, :], (BLOCK_M, NUM_BINS))
    tl.store(y_ptr + rm[:, None] * BLOCK_N + rn[None, :], tl.gather(table, keys, axis=1))


# ----------------------------------------------------------------------------------------------
# Non-inlined device functions
# ----------------------------------------------------------------------------------------------


@triton.jit(noinline=True)
def _softmax_rows(X, Y, ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    x = tl.load(X + r * COLS + c).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(Y + r * COLS + c, (p / tl.sum(p, axis=1)[:, None]).to(Y.dtype.element_ty))


@triton.jit(noinline=True)
def _tile_dot(A, B, C, T: tl.constexpr):
    r = tl.arange(0, T)
    a = tl.load(A + r[:, None] * T + r[None, :])
    b = tl.load(B + r[:, None] * T + r[None, :])
    tl.store(C + r[:, None] * T + r[None, :], tl.dot(a, b).to(C.dtype.element_ty))


@triton.jit
def noinline_kernel(x_ptr, y_ptr, z_ptr, ROWS: tl.constexpr, COLS: tl.constexpr,
                    T: tl.constexpr, MODE: tl.constexpr):
    # Device functions kept as calls (noinline=True): a row softmax (MODE 0), a tile GEMM
    # (MODE 1), or both with a cross-warp reduction of the caller's own live across them.
    pid = tl.program_id(0)
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    own = tl.load(x_ptr + r * COLS + c)
    if MODE != 1:
        _softmax_rows(x_ptr + pid * ROWS * COLS, y_ptr + pid * ROWS * COLS, ROWS, COLS)
    if MODE != 0:
        _tile_dot(x_ptr, y_ptr, z_ptr + pid * T * T, T)
    tl.store(z_ptr + tl.arange(0, COLS), tl.sum(own, axis=0))
