# Compiles the kernel catalogue for one Triton version and a list of targets on a CPU-only
# machine (no GPU, no driver) and writes fixtures: per configuration the TTGIR
# (CompiledKernel.asm["ttgir"]), metadata.shared, tensor-memory size, the OutOfResources verdict
# against the target's per-block limit, the compile time, kernel kind, parameters, num_warps,
# num_stages and the specialization regime. See docs/triton-fixtures.md.
#
#   nice -n 10 /work/venvs/triton36/bin/python bench/triton/make_catalogue.py \
#       --out tests/data/triton/catalogue/3.6.0 [--targets sm_80,...,gfx950] [--fraction 1.0]
#
# Writes OUT/index.json (every configuration, compiled or not, with the error of those that
# failed), OUT/<target>.tar.gz (<id>.ttgir of each compiled configuration) and OUT/README.md.
# One compile worker process (a subprocess, restarted after a crash or a timeout); compiles stop
# after the LLVM-IR stage (triton_compile.install_stop_hook) unless --full.
import argparse
import collections
import hashlib
import io
import json
import multiprocessing as mp
import os
import shutil
import sys
import tarfile
import tempfile
import time
import traceback

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triton_compile as tc  # noqa: E402

# ----------------------------------------------------------------------------------------------
# Kinds: kernel, argument types (by dtype), JIT assumptions, configurations
# ----------------------------------------------------------------------------------------------


def _kinds():
    import catalogue_kernels as ck
    import fixture_kernels as fk

    def P(t):  # pointer
        return "*" + t

    def gemm_types(dt, out):
        return dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(out), M="i32", N="i32", K="i32",
                    stride_am="i32", stride_ak="i32", stride_bk="i32", stride_bn="i32",
                    stride_cm="i32", stride_cn="i32")

    def attn_bwd_types(dt, out, dq=False):
        t = dict(Q=P(dt), K=P(dt), V=P(dt), DO=P(dt), M="*fp32", D="*fp32", sm_scale="fp32",
                 stride_m="i32", N_CTX="i32")
        if dq:
            t["DQ"] = P(dt)
        else:
            t.update(DK=P(dt), DV=P(dt))
        return t

    K = {}

    def kind(name, fn, types, div16=(), unit=(), what="", with_params=False):
        K[name] = dict(fn=fn, types=types, div16=set(div16), unit=set(unit), what=what,
                       with_params=with_params)

    kind("gemm", ck.gemm_kernel, gemm_types,
         div16={"M", "N", "K", "stride_am", "stride_bk", "stride_cm"},
         unit={"stride_ak", "stride_bn", "stride_cn"},
         what="pointer GEMM, every stride an argument (fp16/bf16/fp32)")
    kind("gemm_fp8", ck.gemm_kernel, gemm_types,
         div16={"M", "N", "K", "stride_am", "stride_bk", "stride_cm"},
         unit={"stride_ak", "stride_bn", "stride_cn"}, what="fp8 pointer GEMM, fp16 out")
    kind("gemm_int8", ck.gemm_kernel, gemm_types,
         div16={"M", "N", "K", "stride_am", "stride_bk", "stride_cm"},
         unit={"stride_ak", "stride_bn", "stride_cn"}, what="int8 GEMM, int32 accumulator")
    kind("gemm_tma", fk.matmul_tma_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(out), M="i32", N="i32", K="i32"),
         div16={"M", "N", "K"}, what="device tensor-descriptor GEMM, optional warp_specialize")
    kind("gemm_persistent", ck.gemm_persistent_desc_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(out), M="i32", N="i32", K="i32"),
         div16={"M", "N", "K"},
         what="persistent descriptor GEMM, epilogue subtiling, flatten / warp_specialize")
    kind("gemm_host_desc", ck.gemm_host_desc_kernel,
         lambda dt, out, p: dict(
             a_desc="tensordesc<%s[%d, %d]>" % (dt, p["BLOCK_M"], p["BLOCK_K"]),
             b_desc="tensordesc<%s[%d, %d]>" % (dt, p["BLOCK_N"], p["BLOCK_K"]),
             c_desc="tensordesc<%s[%d, %d]>" % (out, p["BLOCK_M"], p["BLOCK_N"]),
             M="i32", N="i32", K="i32"),
         div16={"M", "N", "K"}, with_params=True,
         what="persistent GEMM on host TensorDescriptor arguments, optional warp_specialize")
    kind("gemm_splitk", ck.gemm_splitk_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr="*fp32", M="i32", N="i32",
                              K="i32", stride_am="i32", stride_bk="i32", stride_cm="i32"),
         div16={"M", "N", "K", "stride_am", "stride_bk", "stride_cm"},
         what="split-K GEMM, tile added into C with tl.atomic_add")
    kind("bmm3d", ck.bmm3d_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(out), K="i32", stride_ab="i32",
                              stride_am="i32", stride_bb="i32", stride_bk="i32",
                              stride_cb="i32", stride_cm="i32"),
         div16={"K", "stride_ab", "stride_am", "stride_bb", "stride_bk", "stride_cb",
                "stride_cm"}, what="3-D (batched) tl.dot")
    kind("dot_scaled", ck.dot_scaled_kernel,
         lambda dt, out: dict(a_ptr=P(dt.split("x")[0]), a_scale_ptr="*u8",
                              b_ptr=P(dt.split("x")[1]), b_scale_ptr="*u8", c_ptr=P(out),
                              K="i32", stride_am="i32", stride_bk="i32", stride_cm="i32"),
         div16={"K", "stride_am", "stride_bk", "stride_cm"},
         what="tl.dot_scaled (MX formats e4m3/e5m2/e2m1, bf16 x e2m1)")
    kind("moe_gemm", ck.moe_gemm_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(out), topk_w_ptr="*fp32",
                              sorted_token_ids_ptr="*i32", expert_ids_ptr="*i32",
                              num_tokens_post_padded_ptr="*i32", N="i32", K="i32", EM="i32",
                              num_valid_tokens="i32", stride_am="i32", stride_be="i32",
                              stride_bn="i32", stride_cm="i32"),
         div16={"N", "K", "EM", "stride_am", "stride_be", "stride_bn", "stride_cm"},
         what="vLLM-style fused MoE grouped GEMM (sorted token ids, expert ids)")
    kind("attn_fwd", fk.attn_fwd_kernel,
         lambda dt, out: dict(Q=P(dt), K=P(dt), V=P(dt), Out=P(dt), sm_scale="fp32",
                              stride_m="i32", N_CTX="i32"),
         div16={"stride_m", "N_CTX"}, what="flash attention forward (fixture kernel)")
    kind("attn_fwd_causal", ck.attn_fwd2_kernel,
         lambda dt, out: dict(Q=P(dt), K=P(dt), V=P(dt), M_out="*fp32", Out=P(dt),
                              sm_scale="fp32", stride_m="i32", N_CTX="i32"),
         div16={"stride_m", "N_CTX"},
         what="flash attention forward, causal mask, LSE out, optional warp_specialize")
    kind("attn_bwd_dkdv", ck.attn_bwd_dkdv_kernel, attn_bwd_types,
         div16={"stride_m", "N_CTX"}, what="flash attention backward, dK/dV")
    kind("attn_bwd_dq", ck.attn_bwd_dq_kernel, lambda dt, out: attn_bwd_types(dt, out, True),
         div16={"stride_m", "N_CTX"}, what="flash attention backward, dQ")
    kind("softmax", fk.softmax_kernel,
         lambda dt, out: dict(out_ptr=P(dt), in_ptr=P(dt), in_stride="i32", out_stride="i32",
                              n_cols="i32"),
         div16={"in_stride", "out_stride"}, what="row softmax (fixture kernel)")
    kind("cross_entropy", ck.cross_entropy_kernel,
         lambda dt, out: dict(logits_ptr=P(dt), labels_ptr="*i64", loss_ptr="*fp32",
                              lse_ptr="*fp32", stride="i32", n_cols="i32"),
         div16={"stride", "n_cols"}, what="fused cross-entropy (online LSE, loss, gradient)")
    kind("reduce2d", ck.reduce2d_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr="*fp32", z_ptr="*i32", stride_m="i32",
                              M="i32", N="i32"),
         div16={"stride_m", "M", "N"},
         what="2-D reductions: sum, max, argmin, Welford (tuple tl.reduce)")
    kind("layernorm_fwd", fk.layernorm_kernel,
         lambda dt, out: dict(X=P(dt), Y=P(dt), W=P(dt), B=P(dt), Mean="*fp32", Rstd="*fp32",
                              stride="i32", N="i32", eps="fp32"),
         div16={"stride"}, what="layer norm forward (fixture kernel)")
    kind("layernorm_bwd", ck.layernorm_bwd_kernel,
         lambda dt, out: dict(DX=P(dt), DY=P(dt), DW="*fp32", DB="*fp32", X=P(dt), W=P(dt),
                              Mean="*fp32", Rstd="*fp32", Lock="*i32", stride="i32", N="i32"),
         div16={"stride", "N"}, what="layer norm backward, spin lock or atomics for dW/dB")
    kind("rmsnorm_fwd", ck.rmsnorm_fwd_kernel,
         lambda dt, out: dict(X=P(dt), Y=P(dt), W=P(dt), Rstd="*fp32", stride="i32", N="i32",
                              eps="fp32"),
         div16={"stride", "N"}, what="RMS norm forward, one tile or looped")
    kind("rmsnorm_bwd", ck.rmsnorm_bwd_kernel,
         lambda dt, out: dict(DX=P(dt), DY=P(dt), DW="*fp32", X=P(dt), W=P(dt), Rstd="*fp32",
                              stride="i32", M="i32", N="i32"),
         div16={"stride", "N"}, what="RMS norm backward, dW over rows")
    kind("scan2d", ck.scan2d_kernel,
         lambda dt, out: dict(x_ptr=P(dt), g_ptr=P(dt), y_ptr=P(dt), stride="i32"),
         div16={"stride"},
         what="tl.cumsum / tl.cumprod / tl.associative_scan (linear recurrence) on 2-D tiles")
    kind("cumsum", fk.cumsum_kernel, lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt)),
         what="1-D tl.cumsum (fixture kernel)")
    kind("sort_topk", ck.sort_topk_kernel, lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt)),
         what="tl.sort / tl.topk / tl.flip")
    kind("transpose", fk.transpose_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt), M="i32", N="i32", stride_x="i32",
                              stride_y="i32"),
         div16={"M", "N", "stride_x", "stride_y"}, what="2-D transpose (fixture kernel)")
    kind("permute3d", ck.permute3d_kernel, lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt)),
         what="tl.permute of 3-D tiles")
    kind("join_split", ck.join_split_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt), z_ptr=P(dt)),
         what="tl.interleave, tl.join + reshape, reshape + tl.split")
    kind("gather", ck.gather_kernel,
         lambda dt, out: dict(src_ptr=P(dt), idx_ptr="*i32", out_ptr=P(dt)),
         what="tl.gather within a tile")
    kind("embedding", ck.embedding_kernel,
         lambda dt, out: dict(table_ptr=P(dt), ids_ptr="*i32", out_ptr=P(dt), grad_ptr=P(dt),
                              stride_t="i32", D="i32"),
         div16={"stride_t", "D"}, what="embedding gather / atomic scatter-add")
    kind("desc_gather", ck.desc_gather_kernel,
         lambda dt, out: dict(x_ptr=P(dt), idx_ptr="*i32", out_ptr=P(dt), M="i32", N="i32"),
         div16={"M", "N"}, what="tensor-descriptor gather / scatter (TMA gather4)")
    kind("histogram", ck.histogram2_kernel,
         lambda dt, out: dict(x_ptr="*i32", y_ptr="*i32", N="i32"), div16={"N"},
         what="tl.histogram, masked or not, merged with atomics or stored")
    kind("colsum", fk.colsum_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr="*fp32", M="i32", N="i32", stride_x="i32"),
         div16={"stride_x"}, what="column sums (fixture kernel)")
    kind("argmax", fk.argmax_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr="*i32", stride_x="i32", N="i32"),
         div16={"stride_x"}, what="row argmax (fixture kernel)")
    kind("atomic", fk.atomic_kernel,
         lambda dt, out: dict(x_ptr=P(dt), counter_ptr=P(dt), y_ptr=P(dt)),
         what="atomics with used results (fixture kernel)")
    kind("geglu", fk.geglu_kernel,
         lambda dt, out: dict(x="*fp32", gate="*fp32", up="*fp32", temp="*fp32", T="i32",
                              I="i32", H="i32", stride_x="i32", stride_g="i32", stride_u="i32",
                              stride_t="i32"),
         div16={"stride_x", "stride_g", "stride_u", "stride_t", "H"},
         what="the seed's GeGLU MLP (fixture kernel)")
    return K


def make_configs():
    """Configurations independent of target and regime: (kind, dtype, out, params, num_warps,
    num_stages, options). Every one is compiled for every target and both regimes."""
    C = []

    def add(kind, dtype, params, nw, ns, out=None, options=None, targets=None):
        C.append(dict(kind=kind, dtype=dtype, out_dtype=out or dtype, params=dict(params),
                      num_warps=nw, num_stages=ns, options=dict(options or {}),
                      targets=targets))

    AMD = ["gfx942", "gfx950"]
    # GEMMs
    for (bm, bn, bk, nw) in [(64, 64, 32, 4), (128, 128, 64, 4), (128, 256, 64, 8),
                             (64, 128, 32, 4)]:
        for ns in [2, 3, 4]:
            add("gemm", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                     ACC_INT=False), nw, ns)
    for nw in [4, 8]:
        add("gemm", "bf16", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                                 ACC_INT=False), nw, 3)
    for (bm, bn, bk) in [(64, 64, 32), (128, 128, 32)]:
        add("gemm", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                 ACC_INT=False), 4, 3)
    for nonk in [16, 32]:
        add("gemm", "fp16", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                                 ACC_INT=False), 4, 2, options=dict(matrix_instr_nonkdim=nonk),
            targets=AMD)
    for dt in ["fp8e4nv", "fp8e5"]:
        for (bm, bn, bk, nw) in [(128, 128, 64, 4), (128, 256, 128, 8)]:
            for ns in [3, 4]:
                add("gemm_fp8", dt, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                         ACC_INT=False), nw, ns, out="fp16")
    for dt in ["fp8e4b8", "fp8e5b16"]:
        for (bm, bn, bk, nw) in [(128, 128, 64, 4), (128, 256, 128, 8)]:
            add("gemm_fp8", dt, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                     ACC_INT=False), nw, 3, out="fp16", targets=AMD)
    for (bm, bn, bk, nw) in [(64, 64, 64, 4), (128, 128, 64, 4), (128, 256, 128, 8)]:
        for ns in [2, 3]:
            add("gemm_int8", "i8", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                        ACC_INT=True), nw, ns, out="i32")
    for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64)]:
        for ns in [3, 4]:
            for ws in [False, True]:
                add("gemm_tma", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, WARP_SPEC=ws),
                    8 if bn == 256 else 4, ns)
    for ws in [False, True]:
        add("gemm_tma", "bf16", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, WARP_SPEC=ws), 4, 3)
    for (bm, bn, bk) in [(128, 128, 64), (128, 256, 64)]:
        for sub in [False, True]:
            for ws in [False, True]:
                for ns in [3, 4]:
                    add("gemm_persistent", "fp16",
                        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=148,
                             EPILOGUE_SUBTILE=sub, WARP_SPEC=ws, FLATTEN=not ws),
                        8 if bn == 256 else 4, ns)
    for ws in [False, True]:
        add("gemm_persistent", "bf16",
            dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, NUM_SMS=148,
                 EPILOGUE_SUBTILE=True, WARP_SPEC=ws, FLATTEN=False), 8, 3)
    for (bm, bn, bk, nw) in [(128, 128, 64, 4), (128, 256, 64, 8)]:
        for ws in [False, True]:
            for ns in [3, 4]:
                add("gemm_host_desc", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                   NUM_SMS=148, WARP_SPEC=ws), nw, ns)
    for ws in [False, True]:
        add("gemm_host_desc", "bf16", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, NUM_SMS=148,
                                           WARP_SPEC=ws), 4, 3)
    for (bm, bn, bk) in [(64, 64, 64), (128, 128, 32), (64, 128, 64)]:
        for sk in [4, 8]:
            add("gemm_splitk", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=sk), 4,
                3)
    for sk in [2, 16]:
        add("gemm_splitk", "bf16", dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, SPLIT_K=sk), 4, 2)
    for (bb, bm, bn, bk) in [(2, 64, 64, 32), (4, 32, 32, 32), (2, 128, 64, 64), (8, 16, 16, 16)]:
        for ns in [2, 3]:
            add("bmm3d", "fp16", dict(BLOCK_B=bb, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk), 4, ns)
    for (bb, bm, bn, bk) in [(2, 32, 32, 32), (4, 64, 32, 16)]:
        add("bmm3d", "fp32", dict(BLOCK_B=bb, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk), 4, 2)
    fmts = {"e4m3": "fp8e4nv", "e5m2": "fp8e5", "e2m1": "u8", "bf16": "bf16"}
    for (fa, fb) in [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e2m1", "e2m1"), ("bf16", "e2m1"),
                     ("e4m3", "e2m1")]:
        for (bm, bn, bk, nw, ns) in [(128, 128, 128, 4, 2), (128, 128, 128, 4, 3),
                                     (128, 256, 128, 8, 3)]:
            add("dot_scaled", fmts[fa] + "x" + fmts[fb],
                dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, A_FMT=fa, B_FMT=fb), nw, ns,
                out="bf16")
    for i, (bm, bn, bk) in enumerate([(16, 64, 64), (64, 64, 32), (64, 128, 64),
                                      (128, 128, 64)]):
        for ns in [2, 3]:
            add("moe_gemm", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, TOP_K=2,
                                         MUL_ROUTED_WEIGHT=(ns == 3)), 4 if bm < 128 else 8, ns)
    for bm in [32, 64]:
        add("moe_gemm", "bf16", dict(BLOCK_M=bm, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, TOP_K=8,
                                     MUL_ROUTED_WEIGHT=True), 4, 3)
    # Attention
    for hd in [64, 128]:
        for (bm, bn) in [(64, 64), (128, 64)]:
            for ns in [2, 3]:
                add("attn_fwd", "fp16", dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn),
                    8 if bm == 128 else 4, ns)
    add("attn_fwd", "bf16", dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=128), 8, 3)
    for hd in [64, 128]:
        for (bm, bn) in [(64, 64), (128, 64)]:
            for causal in [False, True]:
                add("attn_fwd_causal", "fp16",
                    dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, WARP_SPEC=False),
                    8 if bm == 128 else 4, 3 if causal else 2)
    for (bm, bn, ns) in [(128, 64, 2), (128, 128, 3)]:
        for causal in [False, True]:
            add("attn_fwd_causal", "fp16",
                dict(HEAD_DIM=128, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, WARP_SPEC=True), 4, ns)
    add("attn_fwd_causal", "bf16", dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=True,
                                        WARP_SPEC=False), 8, 3)
    for hd in [64, 128]:
        for (bm, bn) in [(32, 128), (64, 64), (64, 128)]:
            for causal in [False, True]:
                add("attn_bwd_dkdv", "fp16", dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn,
                                                  CAUSAL=causal), 8 if bn == 128 else 4,
                    3 if causal else 2)
        for (bm, bn) in [(128, 32), (64, 64), (128, 64)]:
            for causal in [False, True]:
                add("attn_bwd_dq", "fp16", dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn,
                                                CAUSAL=causal), 8 if bm == 128 else 4,
                    2 if causal else 3)
    add("attn_bwd_dkdv", "bf16", dict(HEAD_DIM=128, BLOCK_M=64, BLOCK_N=128, CAUSAL=True), 8, 2)
    add("attn_bwd_dq", "bf16", dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=True), 8, 2)
    # Reductions, norms
    nw_for = {1024: 4, 4096: 8, 8192: 16, 16384: 16}
    for bn in [1024, 4096, 16384]:
        for nw in [4, 8, 16]:
            add("softmax", "fp16", dict(BLOCK_N=bn), nw, 1)
        add("softmax", "fp32", dict(BLOCK_N=bn), nw_for[bn], 1)
    for bn in [1024, 4096, 16384]:
        for nw in [4, 8, 16]:
            add("cross_entropy", "fp16", dict(BLOCK_N=bn), nw, 1)
    for dt in ["bf16", "fp32"]:
        for bn in [4096, 16384]:
            add("cross_entropy", dt, dict(BLOCK_N=bn), nw_for[bn], 2)
    for (bm, bn, nw) in [(32, 128, 4), (64, 64, 4), (8, 1024, 8)]:
        for axis in [0, 1]:
            for op in ["sum", "max", "argmin", "welford"]:
                add("reduce2d", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=axis, OP=op), nw, 1)
    for (bm, bn, nw) in [(32, 128, 4), (16, 512, 8)]:
        for axis in [0, 1]:
            add("reduce2d", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=axis, OP="sum"), nw, 1)
    for dt in ["fp16", "fp32"]:
        for bn in [1024, 4096, 16384]:
            for nw in ([4, 8] if dt == "fp16" else [nw_for[bn]]):
                add("layernorm_fwd", dt, dict(BLOCK_N=bn), nw, 1)
    for dt in ["fp16", "fp32"]:
        for bn in [1024, 4096, 8192]:
            for lock in [False, True]:
                add("layernorm_bwd", dt, dict(BLOCK_N=bn, GROUP_SIZE_M=64, LOCK=lock),
                    nw_for[bn], 1)
    for dt in ["fp16", "bf16"]:
        for bn in [1024, 4096, 16384]:
            for one in [True, False]:
                add("rmsnorm_fwd", dt, dict(BLOCK_N=bn if one else bn // 4, ONE_PASS=one),
                    nw_for[bn], 1)
    for dt in ["fp16", "bf16"]:
        for bn in [1024, 4096, 8192]:
            for rows in [4, 16]:
                add("rmsnorm_bwd", dt, dict(BLOCK_N=bn, ROWS_PER_PROGRAM=rows), nw_for[bn],
                    2 if rows == 16 else 1)
    # Scans, sort
    for i, (bm, bn, nw) in enumerate([(4, 256, 4), (32, 32, 4), (16, 128, 4), (64, 16, 2)]):
        for axis in [0, 1]:
            for op in ["cumsum", "cumprod", "linrec"]:
                add("scan2d", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=axis, OP=op,
                                           REVERSE=(i + axis) % 2 == 1), nw, 1)
    for (bm, bn) in [(8, 256), (32, 64)]:
        add("scan2d", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=1, OP="cumsum", REVERSE=False),
            4, 1)
    for bn in [256, 1024, 4096]:
        add("cumsum", "fp32", dict(BLOCK_N=bn), 4, 1)
    for (bm, bn, nw) in [(4, 256, 4), (16, 64, 4), (2, 1024, 8)]:
        for op, k in [("sort", 1), ("flip", 1), ("topk", 8)]:
            add("sort_topk", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn, K=k, OP=op), nw, 1)
    for (bm, bn) in [(16, 128), (4, 512)]:
        add("sort_topk", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, K=16, OP="topk"), 4, 1)
    # Layout changes
    for dt in ["fp16", "fp32"]:
        for (bm, bn) in [(32, 32), (64, 64), (128, 64), (64, 128), (128, 128)]:
            add("transpose", dt, dict(BLOCK_M=bm, BLOCK_N=bn), 4, 1)
    for (bm, bn) in [(64, 64), (128, 128)]:
        add("transpose", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn), 8, 1)
    for (a, b, c) in [(4, 64, 32), (16, 16, 16), (8, 32, 64), (2, 128, 16)]:
        for perm in [0, 1, 2]:
            add("permute3d", "fp16", dict(A=a, B=b, C=c, PERM=perm), 4, 1)
    for (a, b, c) in [(8, 32, 16), (4, 16, 64)]:
        for perm in [0, 2]:
            add("permute3d", "fp32", dict(A=a, B=b, C=c, PERM=perm), 4, 1)
    for (bm, bn) in [(32, 64), (64, 128), (16, 256)]:
        for mode in [0, 1, 2]:
            add("join_split", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, MODE=mode), 4, 1)
    for mode in [0, 1, 2]:
        add("join_split", "fp32", dict(BLOCK_M=32, BLOCK_N=64, MODE=mode), 4, 1)
    # Gather, scatter, histograms
    for (bm, bn) in [(32, 32), (64, 128), (128, 16), (16, 256)]:
        for axis in [0, 1]:
            add("gather", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=axis), 4, 1)
    for (bm, bn) in [(64, 64), (32, 128)]:
        for axis in [0, 1]:
            add("gather", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn, AXIS=axis), 4, 1)
    for (bt, bd) in [(16, 128), (32, 256), (64, 64), (8, 1024)]:
        for sc in [False, True]:
            add("embedding", "fp16", dict(BLOCK_T=bt, BLOCK_D=bd, SCATTER=sc), 4, 1)
    for (bt, bd) in [(16, 128), (32, 256)]:
        add("embedding", "fp32", dict(BLOCK_T=bt, BLOCK_D=bd, SCATTER=True), 4, 1)
    for (bx, by) in [(8, 64), (16, 128), (32, 128), (8, 256)]:
        add("desc_gather", "fp16", dict(BLOCK_X=bx, BLOCK_Y=by), 4, 1)
    for (bx, by) in [(8, 64), (32, 32)]:
        add("desc_gather", "fp32", dict(BLOCK_X=bx, BLOCK_Y=by), 4, 1)
    for bn in [1024, 4096]:
        for bins in [64, 256, 1024]:
            for (masked, glob) in [(False, False), (True, True)]:
                add("histogram", "i32", dict(BLOCK_N=bn, NUM_BINS=bins, MASKED=masked,
                                             GLOBAL=glob), 4 if bn == 1024 else 8, 1)
    # Fixture kernels of the GPU sweep, a few each.
    for (bm, bn, nw) in [(32, 32, 4), (64, 64, 4), (128, 64, 8), (64, 128, 2)]:
        add("colsum", "fp16", dict(BLOCK_M=bm, BLOCK_N=bn), nw, 2)
    for (bm, bn) in [(1, 1024), (4, 256), (16, 128)]:
        add("argmax", "fp32", dict(BLOCK_M=bm, BLOCK_N=bn), 4, 1)
    for bn in [256, 1024, 4096]:
        add("atomic", "fp32", dict(BLOCK_N=bn), 4, 1)
    for (bt, bh, ns) in [(16, 16, 3), (16, 32, 2), (32, 16, 4)]:
        add("geglu", "fp32", dict(BLOCK_T=bt, RDIM=2048, BLOCK_H=bh), 4, ns)
    for c in C:
        key = json.dumps([c["kind"], c["dtype"], c["out_dtype"], c["params"], c["num_warps"],
                          c["num_stages"], c["options"]], sort_keys=True)
        c["cfg_hash"] = hashlib.sha1(key.encode()).hexdigest()[:10]
    return C


def expand(configs, targets, regimes, fraction):
    if fraction < 1.0:
        # The same share of every kind (at least one configuration each), chosen by hash: the
        # same configurations for every target, regime and version.
        keep = set()
        by_kind = {}
        for c in configs:
            by_kind.setdefault(c["kind"], []).append(c["cfg_hash"])
        for hs in by_kind.values():
            hs = sorted(hs)
            keep.update(hs[:max(1, int(round(fraction * len(hs))))])
        configs = [c for c in configs if c["cfg_hash"] in keep]
    out = []
    for c in configs:
        for t in targets:
            if c["targets"] and t not in c["targets"]:
                continue
            for reg in regimes:
                r = {k: v for k, v in c.items() if k != "targets"}
                r.update(target=t, regime=reg, id="%s_%s_%s_%s" % (c["kind"], t, reg,
                                                                   c["cfg_hash"]))
                out.append(r)
    return out


# ----------------------------------------------------------------------------------------------
# Worker
# ----------------------------------------------------------------------------------------------


def compile_cfg(cfg, kinds):
    """Compile one configuration in this process; returns the record (with 'ttgir')."""
    spec = kinds[cfg["kind"]]
    rec = {k: cfg[k] for k in ["id", "kind", "target", "regime", "dtype", "out_dtype", "params",
                               "num_warps", "num_stages", "options", "cfg_hash"]}
    rec["limit"] = tc.shared_limit(cfg["target"])
    fn = spec["fn"]
    if spec["with_params"]:
        types = spec["types"](cfg["dtype"], cfg["out_dtype"], cfg["params"])
    else:
        types = spec["types"](cfg["dtype"], cfg["out_dtype"])
    sig, constexprs, attrs = tc.build_signature(fn, types, cfg["params"], cfg["regime"],
                                                cfg["target"], spec["div16"], spec["unit"])
    rec["signature"] = {k: v for k, v in sig.items() if v != "constexpr"}
    rec["constexpr_args"] = {k: v for k, v in constexprs.items() if k not in cfg["params"]}
    rec["attrs"] = {fn.arg_names[i[0]]: v for i, v in attrs.items()}
    opts = dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **cfg["options"])
    k, secs = tc.compile_kernel(fn, sig, constexprs, attrs, cfg["target"], opts)
    md = tc.metadata_of(k)
    rec["compile_s"] = round(secs, 4)
    rec["shared"] = int(md["shared"])
    rec["tmem"] = md.get("tmem_size")
    rec["metadata"] = {k2: v for k2, v in md.items() if k2 not in ("shared", "tmem_size")}
    over_smem = rec["shared"] > rec["limit"]
    over_tmem = (rec["tmem"] or 0) > tc.TMEM_COLUMNS
    if over_smem:
        rec["verdict"] = "out_of_resources"
        rec["verdict_message"] = ("out of resource: shared memory, Required: %d, Hardware "
                                  "limit: %d" % (rec["shared"], rec["limit"]))
    elif over_tmem:
        rec["verdict"] = "out_of_resources"
        rec["verdict_message"] = ("out of resource: tensor memory, Required: %d, Hardware "
                                  "limit: %d" % (rec["tmem"], tc.TMEM_COLUMNS))
    else:
        rec["verdict"] = "fits"
    rec["ttgir"] = k.asm["ttgir"]
    return rec


def worker_main(conn, cache_root, stop_after_llir):
    import triton  # noqa: F401
    tc.set_cache_dir(cache_root)
    tc.install_stop_hook(stop_after_llir)
    kinds = _kinds()
    errpath = os.path.join(cache_root, "stderr.txt")
    while True:
        cfg = conn.recv()
        if cfg is None:
            return
        # Capture what MLIR / LLVM print on the C level (diagnostics of a failed pass).
        sys.stderr.flush()
        saved = os.dup(2)
        fd = os.open(errpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
        try:
            rec = compile_cfg(cfg, kinds)
        except Exception as e:  # noqa: BLE001
            rec = {k: cfg[k] for k in ["id", "kind", "target", "regime", "dtype", "out_dtype",
                                       "params", "num_warps", "num_stages", "options",
                                       "cfg_hash"]}
            rec["verdict"] = "compile_error"
            rec["error"] = "%s: %s" % (type(e).__name__, str(e)[-1500:])
            rec["traceback_tail"] = traceback.format_exc()[-800:]
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        if rec.get("verdict") == "compile_error":
            try:
                with open(errpath, errors="replace") as f:
                    err = f.read()
                # MLIR's diagnostics ("loc: error: ..."), not the reproducer it dumps.
                lines = [ln for ln in err.splitlines()
                         if " error: " in ln or ln.startswith("error") or
                         " note: Pipeline failed" in ln]
                if lines:
                    rec["stderr_errors"] = lines[:6]
                elif err.strip():
                    rec["stderr_tail"] = err[-600:]
            except OSError:
                pass
        # Keep the cache small: every compile is fresh anyway (always_compile).
        for d in os.listdir(cache_root):
            p = os.path.join(cache_root, d)
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
        conn.send(rec)


class Worker:

    def __init__(self, cache_root, stop_after_llir):
        self.ctx = mp.get_context("spawn")
        self.args = (cache_root, stop_after_llir)
        self.start()

    def start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker_main, args=(child, ) + self.args, daemon=True)
        self.proc.start()

    def run(self, cfg, timeout):
        self.conn.send(cfg)
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
            why = "worker died (exit code %s)" % self.proc.exitcode
        elif not self.proc.is_alive():
            why = "worker died (exit code %s)" % self.proc.exitcode
        else:
            why = "timeout after %ds" % timeout
        self.proc.kill()
        self.proc.join()
        self.start()
        rec = {k: cfg[k] for k in ["id", "kind", "target", "regime", "dtype", "out_dtype",
                                   "params", "num_warps", "num_stages", "options", "cfg_hash"]}
        rec.update(verdict="compile_error", error=why)
        return rec

    def close(self):
        try:
            self.conn.send(None)
            self.proc.join(10)
        except (OSError, BrokenPipeError):
            pass
        if self.proc.is_alive():
            self.proc.kill()


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------

INDEX_KEYS = ["id", "kind", "target", "version", "dtype", "out_dtype", "params", "num_warps",
              "num_stages", "options", "regime", "signature", "constexpr_args", "attrs",
              "shared", "tmem", "limit", "verdict", "verdict_message", "compile_s", "metadata",
              "cfg_hash", "error", "stderr_errors", "stderr_tail"]


def write_outputs(out, info, recs, targets):
    os.makedirs(out, exist_ok=True)
    for t in targets:
        path = os.path.join(out, "%s.tar.gz" % t)
        with tarfile.open(path, "w:gz", compresslevel=9) as tar:
            for r in recs:
                if r["target"] != t or not r.get("ttgir"):
                    continue
                data = r["ttgir"].encode()
                ti = tarfile.TarInfo(r["id"] + ".ttgir")
                ti.size = len(data)
                ti.mtime = 0
                tar.addfile(ti, io.BytesIO(data))
    index = [{k: r[k] for k in INDEX_KEYS if k in r} for r in recs]
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"info": info, "records": index}, f, indent=0, sort_keys=True)
        f.write("\n")


def load_outputs(out):
    """{id: record with 'ttgir'} from OUT/index.json and OUT/<target>.tar.gz."""
    d = json.load(open(os.path.join(out, "index.json")))
    recs = {r["id"]: r for r in d["records"]}
    for t in d["info"]["targets"]:
        path = os.path.join(out, "%s.tar.gz" % t)
        if not os.path.exists(path):
            continue
        with tarfile.open(path) as tar:
            for m in tar:
                if m.isfile() and m.name.endswith(".ttgir"):
                    fid = m.name[:-len(".ttgir")]
                    if fid in recs:
                        recs[fid]["ttgir"] = tar.extractfile(m).read().decode()
    prior = d["info"].get("wall_s", 0.0)
    n = max(1, len(recs))
    for r in recs.values():
        r["_wall_s"] = prior / n
    return recs


def summary(recs):
    by = {}
    for r in recs:
        d = by.setdefault((r["kind"], r["target"]), {"ok": 0, "oor": 0, "err": 0})
        if r["verdict"] == "compile_error":
            d["err"] += 1
        else:
            d["ok"] += 1
            d["oor"] += r["verdict"] == "out_of_resources"
    return by


def write_readme(out, info, recs, targets, cmd):
    by = summary(recs)
    kinds = sorted({r["kind"] for r in recs})
    lines = ["# Triton %s kernel catalogue" % info["triton"], "",
             "Written by `bench/triton/make_catalogue.py` on a CPU-only machine (no GPU, no "
             "driver): `triton.compile(ASTSource(...), target=GPUTarget(...))` for each target, "
             "stopped after the LLVM-IR stage (where Triton sets `metadata.shared` and "
             "`tmem_size`)" if info["stage"] == "llir" else
             "Written by `bench/triton/make_catalogue.py` on a CPU-only machine (full compile "
             "to cubin / hsaco)", "",
             "- Triton %s, Python %s" % (info["triton"], info["python"]),
             "- date: %s; %d configurations, %d compiled, %d compile errors (recorded in "
             "`index.json` with the error); wall time %.0f s on one worker process; compile "
             "time median %.3f s" % (info["date"], info["configs"], info["compiled"],
                                     info["configs"] - info["compiled"], info["wall_s"],
                                     info["compile_s_median"]),
             "- command: `%s`" % cmd]
    if info.get("planned", info["configs"]) > info["configs"]:
        lines.append("- the run was stopped before the end: %d of the %d planned configurations "
                     "were compiled (compile order is round-robin over kinds)" %
                     (info["configs"], info["planned"]))
    lines += ["",
             "Files: `index.json` (`info`, and per configuration `id`, `kind`, `target`, "
             "`version`, `dtype`, `params`, `num_warps`, `num_stages`, `options`, `regime` "
             "(`jit`: the JIT's specialization, divisibility 16 and unit strides as constexpr 1; "
             "`none`: no specialization), `signature`, `attrs`, `shared` (`metadata.shared`), "
             "`tmem` (`metadata.tmem_size`, NVIDIA), `limit`, `verdict` (`fits`, "
             "`out_of_resources`, `compile_error`), `verdict_message`, `compile_s`, `error`), "
             "and `<target>.tar.gz` with `<id>.ttgir` per compiled configuration. The same "
             "configuration has the same hash suffix in every target, regime and version.", "",
             "Compiled / out of resources / compile errors per kind and target:", "",
             "| kind | " + " | ".join(targets) + " |",
             "|---|" + "---|" * len(targets)]
    for k in kinds:
        cells = []
        for t in targets:
            d = by.get((k, t))
            cells.append("-" if not d else "%d / %d / %d" % (d["ok"], d["oor"], d["err"]))
        lines.append("| %s | %s |" % (k, " | ".join(cells)))
    tot = []
    for t in targets:
        ok = sum(d["ok"] for (k, tt), d in by.items() if tt == t)
        oor = sum(d["oor"] for (k, tt), d in by.items() if tt == t)
        err = sum(d["err"] for (k, tt), d in by.items() if tt == t)
        tot.append("%d / %d / %d" % (ok, oor, err))
    lines.append("| **all** | %s |" % " | ".join(tot))
    from catalogue_report import short_error
    errs = {}
    for r in recs:
        if r["verdict"] == "compile_error":
            key = (r["kind"], short_error(r))
            errs.setdefault(key, collections.Counter())[r["target"]] += 1
    if errs:
        lines += ["", "Compile errors (kind [target count]: the error, numbers as N; the full "
                  "text is in index.json):", ""]
        for (k, m), ts in sorted(errs.items()):
            lines.append("- %s [%s]: `%s`" % (k, ", ".join("%s %d" % (t, ts[t]) for t in targets
                                                           if t in ts), m.replace("`", "'")))
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def redo_errors(out, timeout, full):
    """Compile the configurations of OUT/index.json that failed once more, to record MLIR's
    diagnostics with the current worker (their error fields are replaced; nothing else is)."""
    path = os.path.join(out, "index.json")
    d = json.load(open(path))
    todo = [r for r in d["records"] if r["verdict"] == "compile_error"]
    print("recompiling %d failed configurations" % len(todo), flush=True)
    cache_root = tempfile.mkdtemp(prefix="triton-catalogue-")
    worker = Worker(cache_root, not full)
    try:
        for r in todo:
            cfg = {k: r[k] for k in ["id", "kind", "target", "regime", "dtype", "out_dtype",
                                     "params", "num_warps", "num_stages", "options",
                                     "cfg_hash"]}
            new = worker.run(cfg, timeout)
            for k in ["error", "stderr_errors", "stderr_tail"]:
                r.pop(k, None)
                if k in new:
                    r[k] = new[k]
            if new["verdict"] != "compile_error":
                r["error"] = "compiled when retried (shared %s); first attempt failed" % \
                    new.get("shared")
    finally:
        worker.close()
        shutil.rmtree(cache_root, ignore_errors=True)
    with open(path, "w") as f:
        json.dump(d, f, indent=0, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets", default=",".join(tc.TARGETS))
    ap.add_argument("--regimes", default=",".join(tc.REGIMES))
    ap.add_argument("--kinds", default="", help="comma-separated kinds (default: all)")
    ap.add_argument("--fraction", type=float, default=1.0,
                    help="keep this share of the configurations (by hash, the same ones for "
                         "every target, regime and version)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per compile")
    ap.add_argument("--full", action="store_true",
                    help="compile to cubin / hsaco instead of stopping after LLVM IR")
    ap.add_argument("--list", action="store_true", help="print the configurations and exit")
    ap.add_argument("--resume", action="store_true",
                    help="keep the records of OUT/partial.jsonl and compile only the rest")
    ap.add_argument("--finalize", action="store_true",
                    help="write the outputs from OUT/partial.jsonl without compiling more "
                         "(a run stopped early; the README says how many were left out)")
    ap.add_argument("--redo-errors", action="store_true",
                    help="recompile the failed configurations of OUT/index.json to refresh "
                         "their error messages, and rewrite index.json and README.md")
    ap.add_argument("--readme-only", action="store_true",
                    help="rewrite OUT/README.md from OUT/index.json")
    args = ap.parse_args()
    import triton
    if args.redo_errors or args.readme_only:
        if args.redo_errors:
            redo_errors(args.out, args.timeout, args.full)
        d = json.load(open(os.path.join(args.out, "index.json")))
        cmd = d["info"].get("command")
        if not cmd:  # an index written before info had the command: take the README's
            for line in open(os.path.join(args.out, "README.md")):
                if line.startswith("- command: `"):
                    cmd = line.strip()[len("- command: `"):-1]
        write_readme(args.out, d["info"], d["records"], d["info"]["targets"], cmd or "?")
        return
    targets = args.targets.split(",")
    for t in targets:
        if t not in tc.TARGETS:
            sys.exit("unknown target %s (known: %s)" % (t, ", ".join(tc.TARGETS)))
    cfgs = make_configs()
    if args.kinds:
        ks = set(args.kinds.split(","))
        cfgs = [c for c in cfgs if c["kind"] in ks]
    todo = expand(cfgs, targets, args.regimes.split(","), args.fraction)
    # Round-robin over kinds, so that a run stopped early (see --finalize) still covers every
    # kind; the outputs list the records in catalogue order whatever the compile order.
    rank, seen = {}, collections.Counter()
    for c in todo:
        rank[c["id"]] = (seen[c["kind"]], c["kind"])
        seen[c["kind"]] += 1
    order = {c["id"]: i for i, c in enumerate(todo)}
    compile_order = sorted(todo, key=lambda c: rank[c["id"]])
    if args.limit:
        todo = todo[:args.limit]
    if args.list:
        for c in todo:
            print(c["id"], c["dtype"], json.dumps(c["params"]), c["num_warps"], c["num_stages"])
        print(len(todo), "configurations")
        return
    print("triton %s: %d configurations, targets %s" % (triton.__version__, len(todo),
                                                        ",".join(targets)), flush=True)
    start = time.time()
    # Records are appended to OUT/partial.jsonl as they come; a run that was stopped goes on
    # from there (--resume) and the file is removed once the outputs are written.
    os.makedirs(args.out, exist_ok=True)
    partial = os.path.join(args.out, "partial.jsonl")
    done = {}
    if args.finalize:
        args.resume = True
    if args.resume and os.path.exists(partial):
        with open(partial) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                done[r["id"]] = r
        print("resuming: %d records already compiled" % len(done), flush=True)
    elif args.resume and os.path.exists(os.path.join(args.out, "index.json")):
        # A finished run (its partial.jsonl is gone): take its records and TTGIR back, e.g.
        # to extend it to a larger --fraction.
        done = load_outputs(args.out)
        with open(partial, "w") as f:
            for r in done.values():
                f.write(json.dumps(r) + "\n")
        print("extending: %d records from index.json" % len(done), flush=True)
    prior_s = sum(r.get("_wall_s", 0.0) for r in done.values())
    cache_root = tempfile.mkdtemp(prefix="triton-catalogue-")
    worker = None if args.finalize else Worker(cache_root, not args.full)
    recs = []
    pf = open(partial, "a" if args.resume else "w")
    try:
        for i, cfg in enumerate(compile_order):
            if args.finalize:
                if cfg["id"] in done:
                    recs.append(done[cfg["id"]])
                continue
            if cfg["id"] in done:
                recs.append(done[cfg["id"]])
                continue
            t0 = time.time()
            rec = worker.run(cfg, args.timeout)
            rec["version"] = triton.__version__
            rec["_wall_s"] = time.time() - t0
            recs.append(rec)
            pf.write(json.dumps(rec) + "\n")
            pf.flush()
            if (i + 1) % 50 == 0 or i + 1 == len(todo):
                el = time.time() - start
                print("%d/%d %.0fs (%.2f s/config, eta %.0fs) errors %d" %
                      (i + 1, len(todo), el, el / (i + 1), el / (i + 1) * (len(todo) - i - 1),
                       sum(r["verdict"] == "compile_error" for r in recs)), flush=True)
    finally:
        pf.close()
        if worker:
            worker.close()
        shutil.rmtree(cache_root, ignore_errors=True)
    recs.sort(key=lambda r: order.get(r["id"], len(order)))
    ok = [r for r in recs if r["verdict"] != "compile_error"]
    times = sorted(r["compile_s"] for r in ok) or [0.0]
    info = dict(tc.triton_versions(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                stage="binary" if args.full else "llir", targets=targets,
                planned=len(todo),
                regimes=args.regimes.split(","), fraction=args.fraction, configs=len(recs),
                compiled=len(ok), wall_s=round(time.time() - start + prior_s, 1),
                compile_s_median=times[len(times) // 2],
                compile_s_total=round(sum(times), 1),
                limits={t: tc.shared_limit(t) for t in targets},
                machine="CPU only, one compile worker process",
                env={"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")})
    cmd = "nice -n 10 %s bench/triton/make_catalogue.py %s" % (
        sys.executable, " ".join(a for a in sys.argv[1:] if a not in ("--resume", "--finalize")))
    info["command"] = cmd
    write_outputs(args.out, info, recs, targets)
    write_readme(args.out, info, recs, targets, cmd)
    os.unlink(partial)
    print("compiled %d/%d in %.0fs; out of resources %d" %
          (len(ok), len(recs), time.time() - start,
           sum(r["verdict"] == "out_of_resources" for r in ok)))


if __name__ == "__main__":
    main()
