"""The catalogue of Pallas TPU kernels the oracle corpus compiles (make_corpus.py).

Every builder takes keyword parameters and returns (fn, args): fn(*args) calls one
pl.pallas_call; args are jax.ShapeDtypeStructs. `catalogue(gen)` lists (kind, params) for a
generation: block sizes are chosen so that many kernels land near the generation's default
scoped limit (16 MiB v4/v5e/v5p, 32 MiB v6e/v7x) on both sides, plus some far over it.

Kinds:
  matmul_acc      blocked matmul, f32 (or i32) accumulator scratch, 3-d grid
  matmul_noacc    one K block: o = dot(x, y) with no scratch, 2-d grid
  matmul_buffered matmul_acc with pipeline_mode=pl.Buffered(n) on the inputs
  flash_fwd       jax.experimental.pallas.ops.tpu.flash_attention forward
  flash_bwd_dkv   its dK/dV backward kernel (_flash_attention_bwd_dkv)
  flash_bwd_dq    its dQ backward kernel (_flash_attention_bwd_dq)
  paged_attention jax.experimental.pallas.ops.tpu.paged_attention (scalar prefetch)
  ragged_paged    ragged_paged_attention (scalar prefetch, manual DMA into VMEM scratch)
  gather_prefetch a PrefetchScalarGridSpec gather (block index read from SMEM)
  gmm             megablox grouped matmul (MoE; scalar prefetch of group metadata)
  layernorm       row-block layer norm, weight/bias blocks with a constant index map
  softmax         row-block softmax
  transpose       block transpose
  reduce_acc      the E1001 pattern: o += x[b] over a reduction grid axis
  rowsum          row sums into a (rows, 1) output (lane padding)
  copy            elementwise x + 1 with odd shapes (padding) and oversized blocks
"""
import json
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

S = jax.ShapeDtypeStruct
MiB = 1 << 20
DEFAULT_LIMIT = {"v4": 16 * MiB, "v5e": 16 * MiB, "v5p": 16 * MiB, "v6e": 32 * MiB, "v7x": 32 * MiB}
DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "i8": jnp.int8, "f8": jnp.float8_e4m3fn,
          "i32": jnp.int32}


def _cp(limit):
  return pltpu.CompilerParams(vmem_limit_bytes=int(limit)) if limit else None


# ---------------------------------------------------------------------------------------------
# matmuls


def matmul_acc(bm, bn, bk, dtype="bf16", m=None, n=None, k=None, limit=None, buffers=None):
  dt = DTYPES[dtype]
  integer = dtype == "i8"
  acc_t = jnp.int32 if integer else jnp.float32
  out_t = jnp.int32 if integer else (jnp.bfloat16 if dtype == "f8" else dt)
  m, n, k = m or 4 * bm, n or 2 * bn, k or 2 * bk

  def kernel(x_ref, y_ref, z_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=acc_t)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
      z_ref[...] = acc_ref[...].astype(z_ref.dtype)

  kw = {} if buffers is None else {"pipeline_mode": pl.Buffered(buffers)}

  def fn(x, y):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), out_t), grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk), **kw),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j), **kw)],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), acc_t)],
        compiler_params=_cp(limit), name="matmul_acc")(x, y)
  return fn, (S((m, k), dt), S((k, n), dt))


def matmul_noacc(bm, bn, k, dtype="bf16", m=None, n=None, limit=None):
  dt = DTYPES[dtype]
  integer = dtype == "i8"
  out_t = jnp.int32 if integer else jnp.float32
  m, n = m or 4 * bm, n or 2 * bn

  def kernel(x_ref, y_ref, z_ref):
    z_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=out_t)

  def fn(x, y):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), out_t), grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)),
                  pl.BlockSpec((k, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=_cp(limit), name="matmul_noacc")(x, y)
  return fn, (S((m, k), dt), S((k, n), dt))


def matmul_buffered(bm, bn, bk, buffers, dtype="bf16", limit=None):
  return matmul_acc(bm, bn, bk, dtype=dtype, limit=limit, buffers=buffers)


# ---------------------------------------------------------------------------------------------
# attention


def _fa():
  from jax.experimental.pallas.ops.tpu import flash_attention as fa
  return fa


def flash_fwd(b, h, s, d, block_q, block_k_major, block_k, block_b=1, dtype="bf16", causal=False):
  fa = _fa()
  dt = DTYPES[dtype]
  bs = fa.BlockSizes(block_q=block_q, block_k_major=block_k_major, block_k=block_k, block_b=block_b)

  def fn(q, k, v):
    return fa.flash_attention(q, k, v, causal=causal, sm_scale=0.125, block_sizes=bs)
  a = S((b, h, s, d), dt)
  return fn, (a, a, a)


def flash_bwd_dkv(b, h, s, d, block_q_major, block_q, block_k_major, block_k, dtype="bf16",
                  causal=False):
  fa = _fa()
  dt = DTYPES[dtype]

  def fn(q, k, v, l, m, do, di):
    return fa._flash_attention_bwd_dkv(
        q, k, v, None, None, l, m, do, di, block_q_major=block_q_major, block_q=block_q,
        block_k_major=block_k_major, block_k=block_k, sm_scale=0.125, causal=causal)
  a = S((b, h, s, d), dt)
  lm = S((b, h, s), jnp.float32)  # the residuals l, m as the forward saves them
  return fn, (a, a, a, lm, lm, a, S((b, h, s), jnp.float32))


def flash_bwd_dq(b, h, s, d, block_q_major, block_k_major, block_k, dtype="bf16", causal=False):
  fa = _fa()
  dt = DTYPES[dtype]

  def fn(q, k, v, l, m, do, di):
    return fa._flash_attention_bwd_dq(
        q, k, v, None, None, l, m, do, di, block_q_major=block_q_major,
        block_k_major=block_k_major, block_k=block_k, sm_scale=0.125, causal=causal,
        mask_value=fa.DEFAULT_MASK_VALUE, debug=False)
  a = S((b, h, s, d), dt)
  lm = S((b, h, s), jnp.float32)  # the residuals l, m as the forward saves them
  return fn, (a, a, a, lm, lm, a, S((b, h, s), jnp.float32))


def paged_attention(batch, q_heads, kv_heads, d, page_size, pages_per_seq, pages_per_block,
                    dtype="bf16"):
  from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention as pa
  dt = DTYPES[dtype]
  total_pages = batch * pages_per_seq

  def fn(q, kp, vp, lengths, idx):
    return pa(q, kp, vp, lengths, idx, pages_per_compute_block=pages_per_block)
  return fn, (S((batch, q_heads, d), dt), S((kv_heads, total_pages, page_size, d), dt),
              S((kv_heads, total_pages, page_size, d), dt), S((batch,), jnp.int32),
              S((batch, pages_per_seq), jnp.int32))


def ragged_paged(tokens, q_heads, kv_heads, d, page_size, pages_per_seq, max_seqs,
                 kv_pages_per_block, queries_per_block, dtype="bf16", limit=None):
  from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention as rpa
  dt = DTYPES[dtype]
  total_pages = max_seqs * pages_per_seq

  def fn(q, kv, kv_lens, idx, cu, ns):
    return rpa(q, kv, kv_lens, idx, cu, ns, sm_scale=0.125,
               num_kv_pages_per_block=kv_pages_per_block, num_queries_per_block=queries_per_block,
               vmem_limit_bytes=limit)
  return fn, (S((tokens, q_heads, d), dt), S((total_pages, page_size, 2 * kv_heads, d), dt),
              S((max_seqs,), jnp.int32), S((max_seqs, pages_per_seq), jnp.int32),
              S((max_seqs + 1,), jnp.int32), S((1,), jnp.int32))


def gather_prefetch(rows, cols, nblocks, dtype="bf16", single_w=True, limit=None):
  dt = DTYPES[dtype]

  def kernel(idx_ref, x_ref, w_ref, o_ref, acc_ref):
    acc_ref[...] = x_ref[...].astype(jnp.float32) * w_ref[...].astype(jnp.float32)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  kw = {"pipeline_mode": pl.Buffered(1)} if single_w else {}

  def fn(idx, x, w):
    return pl.pallas_call(
        kernel, out_shape=S((rows * nblocks, cols), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(nblocks,),
            in_specs=[pl.BlockSpec((rows, cols), lambda i, idx: (idx[i], 0)),
                      pl.BlockSpec((rows, cols), lambda i, idx: (0, 0), **kw)],
            out_specs=pl.BlockSpec((rows, cols), lambda i, idx: (i, 0)),
            scratch_shapes=[pltpu.VMEM((rows, cols), jnp.float32)]),
        compiler_params=_cp(limit), name="gather_prefetch")(idx, x, w)
  return fn, (S((nblocks,), jnp.int32), S((rows * nblocks, cols), dt), S((rows, cols), dt))


def gmm(m, k, n, groups, tm, tk, tn, dtype="bf16"):
  from jax.experimental.pallas.ops.tpu.megablox import gmm as _gmm
  dt = DTYPES[dtype]

  def fn(lhs, rhs, sizes):
    return _gmm(lhs, rhs, sizes, preferred_element_type=dt, tiling=(tm, tk, tn))
  return fn, (S((m, k), dt), S((groups, k, n), dt), S((groups,), jnp.int32))


# ---------------------------------------------------------------------------------------------
# row-wise and layout kernels


def layernorm(rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    mu = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    var = jnp.mean(xc * xc, axis=-1, keepdims=True)
    y = xc * jax.lax.rsqrt(var + 1e-5) * w_ref[...].astype(jnp.float32) + b_ref[...].astype(jnp.float32)
    o_ref[...] = y.astype(o_ref.dtype)

  def fn(x, w, b):
    return pl.pallas_call(
        kernel, out_shape=S((rows, d), dt), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0)), pl.BlockSpec((1, d), lambda i: (0, 0)),
                  pl.BlockSpec((1, d), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((br, d), lambda i: (i, 0)),
        compiler_params=_cp(limit), name="layernorm")(x, w, b)
  return fn, (S((rows, d), dt), S((1, d), dt), S((1, d), dt))


def softmax(rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(o_ref.dtype)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((rows, d), dt), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((br, d), lambda i: (i, 0)),
        compiler_params=_cp(limit), name="softmax")(x)
  return fn, (S((rows, d), dt),)


def transpose(bm, bn, dtype="f32", limit=None, lead=None):
  """A (bm, bn) block transposed whole; with lead, a (lead, bm, bn) block whose two minor dims are
  swapped (lead transposes per grid step)."""
  dt = DTYPES[dtype]
  m, n = 2 * bm, 2 * bn
  front = () if lead is None else (lead,)  # the leading block dim, whole (index 0)
  at = () if lead is None else (0,)

  def kernel(x_ref, o_ref):
    o_ref[...] = jnp.swapaxes(x_ref[...], -1, -2)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S(front + (n, m), dt), grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec(front + (bm, bn), lambda i, j: at + (i, j))],
        out_specs=pl.BlockSpec(front + (bn, bm), lambda i, j: at + (j, i)),
        compiler_params=_cp(limit), name="transpose")(x)
  return fn, (S(front + (m, n), dt),)


def reduce_acc(bm, d, nb=4, dtype="bf16", limit=None):
  """models/graphs/tpu_e1001.pbtxt's structure: o[bm-blocks of (M, d)] += x[b]."""
  dt = DTYPES[dtype]
  m = 2 * bm

  def kernel(x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
      o_ref[...] = jnp.zeros_like(o_ref)
    o_ref[...] += x_ref[0]

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((m, d), dt), grid=(m // bm, nb),
        in_specs=[pl.BlockSpec((1, bm, d), lambda i, b: (b, i, 0))],
        out_specs=pl.BlockSpec((bm, d), lambda i, b: (i, 0)),
        compiler_params=_cp(limit), name="reduce_acc")(x)
  return fn, (S((nb, m, d), dt),)


def rowsum(rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref):
    o_ref[...] = jnp.sum(x_ref[...].astype(jnp.float32), axis=-1, keepdims=True)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((rows, 1), jnp.float32), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((br, 1), lambda i: (i, 0)),
        compiler_params=_cp(limit), name="rowsum")(x)
  return fn, (S((rows, d), dt),)


def copy(br, d, lead=1, dtype="f32", grid=4, limit=None, body="add"):
  """x + 1 (body="add") or x (body="copy": Mosaic has no int8 add) over blocks (lead, br, d) of
  an array (lead, grid*br, d): d need not be a multiple of 128 (the block takes the whole dim),
  br need not be a multiple of 8 when grid == 1."""
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref):
    if body == "copy":
      o_ref[...] = x_ref[...]
    else:
      o_ref[...] = x_ref[...] + jnp.ones((), dt)

  shape = (lead, grid * br, d)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S(shape, dt), grid=(grid,),
        in_specs=[pl.BlockSpec((lead, br, d), lambda i: (0, i, 0))],
        out_specs=pl.BlockSpec((lead, br, d), lambda i: (0, i, 0)),
        compiler_params=_cp(limit), name="copy")(x)
  return fn, (S(shape, dt),)


def matmul_grid(bm, bn, bk, dtype="bf16", limit=None):
  """matmul_acc over a regular grid of blocks (the catalogue's "matmul_grid" kind): its own kind
  so that it can be compiled on its own (make_corpus.py --kinds matmul_grid) and judged apart."""
  return matmul_acc(bm, bn, bk, dtype=dtype, limit=limit)


BUILDERS = {f.__name__: f for f in (
    matmul_acc, matmul_noacc, matmul_buffered, matmul_grid, flash_fwd, flash_bwd_dkv, flash_bwd_dq,
    paged_attention, ragged_paged, gather_prefetch, gmm, layernorm, softmax, transpose,
    reduce_acc, rowsum, copy)}


# ---------------------------------------------------------------------------------------------
# the catalogue


def _dtypes_for(gen):
  """Matmul input dtypes to try on a generation (fp8 only where the MXU has it: v7x; int8
  everywhere: Mosaic rejects what the generation lacks and the corpus records that)."""
  out = ["bf16", "f32", "i8"]
  if gen in ("v6e", "v7x"):
    out.append("f8")
  return out


def catalogue(gen):
  """[(kind, params)] for one generation."""
  L = DEFAULT_LIMIT[gen]
  big = L >= 32 * MiB
  cat = []
  add = lambda kind, **p: cat.append((kind, p))

  # matmul with accumulator: square and rectangular blocks across the limit.
  sq = [128, 256, 384, 512, 640, 768, 896, 1024] + ([1152, 1280, 1536] if big else [])
  for dt in _dtypes_for(gen):
    for b in (sq if dt == "bf16" else [128, 256, 512, 768, 1024]):
      add("matmul_acc", bm=b, bn=b, bk=b, dtype=dt)
  for (bm, bn, bk) in [(256, 1024, 512), (512, 1024, 256), (1024, 512, 512), (1024, 1024, 256),
                       (256, 2048, 256), (2048, 256, 256), (512, 512, 2048), (128, 2048, 1024),
                       (1024, 1024, 512), (768, 1024, 512), (512, 2048, 512), (1024, 2048, 256)]:
    add("matmul_acc", bm=bm, bn=bn, bk=bk, dtype="bf16")
    add("matmul_acc", bm=bm, bn=bn, bk=bk, dtype="f32")
  # explicit vmem_limit_bytes: the same kernel under several limits
  for lim in (4, 8, 12, 24, 48):
    add("matmul_acc", bm=512, bn=512, bk=512, dtype="bf16", limit=lim * MiB)
    add("matmul_acc", bm=1024, bn=1024, bk=512, dtype="bf16", limit=lim * MiB)

  # matmul without accumulator (one K block)
  for (bm, bn, k) in [(256, 256, 1024), (256, 256, 4096), (512, 512, 2048), (512, 512, 4096),
                      (128, 128, 8192), (1024, 256, 2048), (256, 1024, 4096), (512, 1024, 2048),
                      (1024, 1024, 1024), (128, 2048, 2048)] + ([(1024, 1024, 2048), (512, 512, 8192)] if big else []):
    add("matmul_noacc", bm=bm, bn=bn, k=k, dtype="bf16")
    add("matmul_noacc", bm=bm, bn=bn, k=k, dtype="f32")
    add("matmul_noacc", bm=bm, bn=bn, k=k, dtype="i8")

  # Buffered(n)
  for nbuf in (1, 3, 4):
    for b in (256, 512, 768, 1024):
      add("matmul_buffered", bm=b, bn=b, bk=b, buffers=nbuf)
      add("matmul_buffered", bm=b, bn=b, bk=b, buffers=nbuf, dtype="f32")

  # flash attention
  # (blocks of 2048 and more take 10-25 s per compile: few of them)
  for d in (64, 128, 256, 80):
    for (bq, bkm, bk) in [(128, 128, 128), (512, 512, 128), (512, 512, 512), (1024, 1024, 512),
                          (1024, 2048, 512)] + ([(2048, 2048, 1024)] if d == 128 else []):
      add("flash_fwd", b=1, h=2, s=4096, d=d, block_q=bq, block_k_major=bkm, block_k=bk)
  for bb in (2, 4):
    add("flash_fwd", b=4, h=2, s=2048, d=128, block_q=1024, block_k_major=1024, block_k=512, block_b=bb)
  add("flash_fwd", b=1, h=2, s=4096, d=128, block_q=1024, block_k_major=1024, block_k=512, dtype="f32")
  add("flash_fwd", b=1, h=2, s=4096, d=128, block_q=2048, block_k_major=2048, block_k=512, dtype="f32")
  add("flash_fwd", b=1, h=2, s=4096, d=128, block_q=1024, block_k_major=1024, block_k=512, causal=True)
  for d in (64, 128, 256):
    for (bqm, bq, bkm, bk) in [(128, 128, 128, 128), (512, 256, 512, 256), (1024, 512, 1024, 512),
                               (2048, 512, 2048, 512)]:
      add("flash_bwd_dkv", b=1, h=2, s=4096, d=d, block_q_major=bqm, block_q=bq, block_k_major=bkm, block_k=bk)
    for (bqm, bkm, bk) in [(128, 128, 128), (512, 512, 256), (1024, 1024, 512), (2048, 2048, 512)]:
      add("flash_bwd_dq", b=1, h=2, s=4096, d=d, block_q_major=bqm, block_k_major=bkm, block_k=bk)

  # paged / ragged attention (scalar prefetch)
  for (qh, kvh, d, ps, ppb) in [(8, 1, 128, 16, 8), (8, 1, 128, 64, 8), (32, 8, 128, 16, 16),
                                (32, 8, 128, 64, 16), (16, 2, 256, 128, 32), (8, 8, 128, 128, 64)]:
    add("paged_attention", batch=8, q_heads=qh, kv_heads=kvh, d=d, page_size=ps,
        pages_per_seq=128, pages_per_block=ppb)
  for (qh, kvh, d, ps, kvpb, qpb) in [(8, 1, 128, 16, 8, 32), (32, 8, 128, 16, 16, 64),
                                       (32, 8, 128, 32, 32, 128), (16, 4, 128, 64, 32, 256),
                                       (32, 8, 128, 128, 64, 256), (64, 8, 128, 64, 64, 512)]:
    add("ragged_paged", tokens=1024, q_heads=qh, kv_heads=kvh, d=d, page_size=ps,
        pages_per_seq=64, max_seqs=16, kv_pages_per_block=kvpb, queries_per_block=qpb)
  for (r, c) in [(128, 512), (512, 1024), (1024, 1024), (1024, 2048), (2048, 1024), (2048, 2048)]:
    add("gather_prefetch", rows=r, cols=c, nblocks=8)
    add("gather_prefetch", rows=r, cols=c, nblocks=8, single_w=False)

  # grouped matmul (MoE)
  for (tm, tk, tn) in [(128, 128, 128), (256, 512, 256), (512, 512, 512), (512, 1024, 1024),
                       (1024, 1024, 1024), (1024, 2048, 1024), (2048, 1024, 1024), (2048, 2048, 1024)]:
    add("gmm", m=4096, k=4096, n=4096, groups=8, tm=tm, tk=tk, tn=tn)
  add("gmm", m=4096, k=4096, n=4096, groups=8, tm=512, tk=1024, tn=1024, dtype="f32")
  add("gmm", m=4096, k=4096, n=4096, groups=8, tm=1024, tk=1024, tn=1024, dtype="f32")

  # row-wise kernels
  for dt in ("f32", "bf16"):
    for (d, br) in [(1024, 256), (1024, 1024), (4096, 128), (4096, 256), (4096, 512), (8192, 128),
                    (8192, 256), (8192, 512), (768, 512), (5120, 256)]:
      add("layernorm", rows=8192, d=d, br=br, dtype=dt)
      add("softmax", rows=8192, d=d, br=br, dtype=dt)
  for dt in ("f32", "bf16"):
    for (bm, bn) in [(128, 128), (256, 512), (512, 512), (1024, 512), (512, 2048), (1024, 1024),
                     (2048, 1024), (1024, 2048)]:
      add("transpose", bm=bm, bn=bn, dtype=dt)
  for dt in ("bf16", "f32"):
    for bm in (128, 256, 512, 768, 1024, 1536, 2048):
      add("reduce_acc", bm=bm, d=4096, dtype=dt)
  for (d, br) in [(128, 2048), (1024, 1024), (4096, 256), (4096, 512), (8192, 512), (2048, 2048)]:
    add("rowsum", rows=8192, d=d, br=br)

  # copies: near the limit, odd shapes (padding), 1- and 3-d blocks, oversized blocks
  for frac in (0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0, 4.0):
    rows = int(frac * L / (4 * 4096)) // 8 * 8
    add("copy", br=rows, d=1024, dtype="f32")
  for (br, d, dt) in [(1000, 200, "f32"), (1000, 200, "bf16"), (333, 1000, "f32"), (4096, 130, "f32"),
                      (4096, 130, "bf16"), (4096, 130, "i8"), (2048, 3, "f32"), (2048, 1, "bf16"),
                      (17, 4096, "f32"), (17, 4096, "bf16"), (17, 4096, "i8"), (4000, 520, "bf16")]:
    add("copy", br=br, d=d, dtype=dt, grid=1)
  for (lead, br, d, dt) in [(4, 512, 512, "f32"), (8, 256, 1024, "bf16"), (16, 8, 4096, "bf16"),
                            (4, 1024, 1024, "f32"), (32, 16, 2048, "i8")]:
    add("copy", lead=lead, br=br, d=d, dtype=dt)
  # int8 without arithmetic, and second-minor extents that tell 8- from 16-row bf16 tiles
  for (br, d, dt) in [(4096, 130, "i8"), (17, 4096, "i8"), (100, 1000, "i8"), (24, 4096, "bf16"),
                      (40, 1024, "bf16"), (8, 4096, "bf16"), (3, 4096, "bf16"), (1, 4096, "bf16"),
                      (3, 4096, "i8"), (3, 4096, "f32")]:
    add("copy", br=br, d=d, dtype=dt, grid=1, body="copy")
  add("copy", lead=32, br=16, d=2048, dtype="i8", body="copy")
  add("copy", lead=1, br=32, d=4096, dtype="i8", body="copy")
  add("copy", lead=1, br=16, d=4096, dtype="bf16", body="copy")
  # A regular grid of matmul blocks (what the register spills of one dot follow: its left
  # operand, its k passes, its n columns of MXU tiles), leaving out kernels listed above.
  listed = {json.dumps(p, sort_keys=True) for kind, p in cat if kind == "matmul_acc"}
  for dt in (["bf16", "f32", "i8"] if gen in ("v5e", "v6e") else ["bf16"]):
    for bm in (128, 256, 512, 768, 1024):
      for bn in (128, 256, 512, 1024):
        for bk in (256, 512, 1024):
          p = {"bm": bm, "bn": bn, "bk": bk, "dtype": dt}
          if json.dumps(p, sort_keys=True) not in listed:
            add("matmul_grid", **p)
  return _interleave(cat)


def _interleave(cat):
  """Spreads the kinds evenly through the list (each kind's entries keep their order), so that
  a run cut short still has every kind in proportion."""
  by = {}
  for kind, p in cat:
    by.setdefault(kind, []).append(p)
  keyed = [((i + 0.5) / len(ps), kind, i, p) for kind, ps in by.items() for i, p in enumerate(ps)]
  keyed.sort(key=lambda t: (t[0], t[1]))
  return [(kind, p) for _, kind, _, p in keyed]


def build(kind, params):
  return BUILDERS[kind](**params)
