# The kernels of the fixture sweep (make_fixtures.py) and their argument types, shared with the
# CPU catalogue (make_catalogue.py). Moving them here from make_fixtures.py changed nothing but
# the file name in the IR's #loc lines.
import triton
import triton.language as tl


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

