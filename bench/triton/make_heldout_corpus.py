# Compiles the held-out corpus (heldout_kernels.py: kinds the catalogue and the fixture sets do
# not have) for one Triton release on a CPU-only machine, with make_catalogue.py's machinery
# (its compile worker, record fields, verdict and output writers), and writes
# tests/data/triton/heldout/<release>/: index.json (every configuration, compiled or not) and
# <target>.tar.gz of <id>.ttgir. tests/data/triton/heldout/README.md has the runs;
# tests/ttgir_heldout_test.cc judges the Triton backend on them.
#
#   nice -n 10 /tmp/venv-bench/bin/python bench/triton/make_heldout_corpus.py \
#       --out tests/data/triton/heldout/3.6.0
#
# Every configuration is compiled for its targets with the JIT's specialization ("jit"); the
# first configuration of each kind also without it ("none"). num_ctas=2 configurations go to
# sm_90 and sm_100 only, AMD options (matrix_instr_nonkdim, kpack, waves_per_eu) to gfx942 and
# gfx950 only.
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_catalogue as mc  # noqa: E402
import triton_compile as tc  # noqa: E402

TARGETS = ["sm_80", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950"]
AMD = ["gfx942", "gfx950"]
CLUSTER = ["sm_90", "sm_100"]


def _kinds():
    import heldout_kernels as hk

    def P(t):
        return "*" + t

    def ints(*names):
        return {n: "i32" for n in names}

    K = {}

    def kind(name, fn, types, div16=(), what=""):
        K[name] = dict(fn=fn, types=types, div16=set(div16), unit=set(), what=what,
                       with_params=False)

    def gemm_like(name, fn, ptrs, strides, div16, what, **fixed):
        # M, N, K and the strides as i32, the pointers of the kind's dtype unless `fixed` says;
        # the strides are multiples of 16 under the JIT, and so are the sizes in `div16`.
        kind(name, fn, lambda dt, out: dict({p: P(dt) for p in ptrs},
                                            **ints("M", "N", "K", *strides), **fixed),
             div16=set(div16) | set(strides), what=what)

    gemm_like("rmsnorm_matmul", hk.rmsnorm_matmul_kernel, ("x_ptr", "g_ptr", "w_ptr", "y_ptr"),
              ("stride_xm", "stride_wk", "stride_ym"), ("N", "K"),
              "RMSNorm fused in front of a GEMM (two passes over K)", eps="fp32")
    gemm_like("swiglu_down", hk.swiglu_down_kernel, ("g_ptr", "u_ptr", "w_ptr", "y_ptr"),
              ("stride_hm", "stride_wk", "stride_ym"), ("N", "K"),
              "SwiGLU gate fused into the down projection")
    gemm_like("int4_matmul", hk.int4_matmul_kernel, ("a_ptr", "s_ptr", "c_ptr"),
              ("stride_am", "stride_bk", "stride_cm"), ("N", "K"),
              "int4 weight-only GEMM, nibbles unpacked in the loop, group scales", b_ptr="*i8")
    kind("conv2d_igemm", hk.conv2d_igemm_kernel,
         lambda dt, out: dict(x_ptr=P(dt), w_ptr=P(dt), y_ptr=P(dt),
                              **ints("B", "H", "W", "C", "OC", "OH", "OW", "stride_wk")),
         div16={"C", "OC", "stride_wk"}, what="NHWC conv2d as an implicit GEMM")
    kind("grouped_gemm", hk.grouped_gemm_kernel,
         lambda dt, out: dict(a_ptrs="*i64", b_ptrs="*i64", c_ptrs="*i64", sizes="*i32",
                              lds="*i32", elem_ptr=P(dt), **ints("group_count", "NUM_PROGRAMS")),
         what="grouped GEMM over pointer arrays, tiles handed out over groups")
    kind("bmm_reshape", hk.bmm_reshape_kernel,
         lambda dt, out: dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(dt),
                              **ints("K", "stride_ab", "stride_am", "stride_bk", "stride_cb",
                                     "stride_cm")),
         div16={"K", "stride_ab", "stride_am", "stride_bk", "stride_cb", "stride_cm"},
         what="batched matmul folded to 2-D by reshapes, one shared B")
    gemm_like("mixed_tile_gemm", hk.mixed_tile_gemm_kernel, ("a_ptr", "b_ptr", "c_ptr"),
              ("stride_am", "stride_bn", "stride_cm"), ("K", ),
              "GEMM with N-major B (transposed in registers), 16x256 / 256x16 / 32x512 tiles")
    gemm_like("persistent_bias", hk.persistent_bias_kernel,
              ("a_ptr", "b_ptr", "bias_ptr", "c_ptr"), ("stride_am", "stride_bk", "stride_cm"),
              ("N", "K"), "persistent pointer GEMM, bias and GELU epilogue")
    kind("dot_scaled_trans", hk.dot_scaled_trans_kernel,
         lambda dt, out: dict(a_ptr=P(dt), a_scale_ptr="*u8", b_ptr=P(dt), b_scale_ptr="*u8",
                              c_ptr=P(out), **ints("K", "stride_ak", "stride_bn", "stride_cm")),
         div16={"K", "stride_ak", "stride_bn", "stride_cm"},
         what="tl.dot_scaled with B (and A) stored transposed")
    gemm_like("loop_options", hk.loop_options_kernel, ("a_ptr", "b_ptr", "c_ptr"),
              ("stride_am", "stride_bk", "stride_cm"), ("M", "N", "K"),
              "tl.range options: loop_unroll_factor, flatten, warp_specialize, "
              "disallow_acc_multi_buffer")
    kind("sliding_window_attn", hk.sliding_window_attn_kernel,
         lambda dt, out: dict(Q=P(dt), K=P(dt), V=P(dt), Out=P(dt), sm_scale="fp32",
                              **ints("stride_m", "N_CTX")),
         div16={"stride_m", "N_CTX"}, what="sliding-window causal attention")
    kind("paged_decode", hk.paged_decode_kernel,
         lambda dt, out: dict(Q=P(dt), KC=P(dt), VC=P(dt), block_tables="*i32", seq_lens="*i32",
                              Out=P(dt), sm_scale="fp32",
                              **ints("stride_qs", "stride_kb", "stride_bt")),
         div16={"stride_qs", "stride_kb", "stride_bt"},
         what="paged-attention decode through block tables, GQA query groups")
    kind("rotary", hk.rotary_kernel,
         lambda dt, out: dict(x_ptr=P(dt), cos_ptr="*fp32", sin_ptr="*fp32", y_ptr=P(dt),
                              stride_t="i32"),
         div16={"stride_t"}, what="rotary embedding, halves or interleaved pairs")
    kind("group_norm", hk.group_norm_kernel,
         lambda dt, out: dict(x_ptr=P(dt), w_ptr=P(dt), b_ptr=P(dt), y_ptr=P(dt), C="i32",
                              HW="i32", eps="fp32"),
         div16={"C", "HW"}, what="GroupNorm forward over NCHW")
    kind("segscan3d", hk.segscan3d_kernel,
         lambda dt, out: dict(x_ptr=P(dt), f_ptr="*i32", y_ptr=P(dt)),
         what="segmented tl.associative_scan of 3-D tiles")
    kind("topk_packed", hk.topk_packed_kernel,
         lambda dt, out: dict(x_ptr=P(dt), vals_ptr="*fp32", idx_ptr="*i32"),
         what="top-k by tl.topk of packed int64 (value, index) keys")
    kind("gather_hist", hk.gather_hist_kernel,
         lambda dt, out: dict(x_ptr="*i32", y_ptr="*i32", h_ptr="*i32"),
         what="tl.histogram, then tl.gather of the counts per element")
    kind("noinline_call", hk.noinline_kernel,
         lambda dt, out: dict(x_ptr=P(dt), y_ptr=P(dt), z_ptr=P(dt)),
         what="non-inlined device functions (noinline=True): softmax, tile GEMM")
    return K


def make_configs():
    C = []

    def add(kind, dtype, params, nw, ns, out=None, options=None, targets=None):
        C.append(dict(kind=kind, dtype=dtype, out_dtype=out or dtype, params=dict(params),
                      num_warps=nw, num_stages=ns, options=dict(options or {}),
                      targets=targets or TARGETS))

    gemm = lambda bm, bn, bk: dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)  # noqa: E731
    add("rmsnorm_matmul", "fp16", gemm(64, 64, 64), 4, 3)
    add("rmsnorm_matmul", "bf16", gemm(128, 128, 32), 8, 2)
    add("rmsnorm_matmul", "fp16", gemm(128, 64, 64), 4, 3, options=dict(num_ctas=2),
        targets=CLUSTER)
    add("swiglu_down", "fp16", gemm(64, 128, 64), 4, 3)
    add("swiglu_down", "bf16", gemm(128, 128, 64), 8, 4)
    add("swiglu_down", "fp16", gemm(128, 128, 32), 4, 2,
        options=dict(matrix_instr_nonkdim=16, waves_per_eu=2), targets=AMD)
    add("int4_matmul", "fp16", dict(gemm(64, 64, 64), GROUP=128), 4, 3)
    add("int4_matmul", "fp16", dict(gemm(128, 128, 128), GROUP=128), 8, 2)
    add("int4_matmul", "fp16", dict(gemm(32, 64, 128), GROUP=64), 4, 2,
        options=dict(kpack=2), targets=AMD)
    conv = lambda bm, bn, bk, k, s, p: dict(gemm(bm, bn, bk), KH=k, KW=k, STRIDE=s, PAD=p)  # noqa
    add("conv2d_igemm", "fp16", conv(64, 64, 32, 3, 1, 1), 4, 3)
    add("conv2d_igemm", "bf16", conv(128, 64, 64, 3, 2, 1), 8, 2)
    add("conv2d_igemm", "fp16", conv(64, 128, 32, 1, 1, 0), 4, 4)
    add("grouped_gemm", "fp16", gemm(64, 64, 32), 4, 2)
    add("grouped_gemm", "bf16", gemm(128, 128, 64), 8, 3)
    add("bmm_reshape", "fp16", dict(BLOCK_B=2, BLOCK_M=32, BLOCK_N=64, BLOCK_K=32), 4, 3)
    add("bmm_reshape", "fp16", dict(BLOCK_B=4, BLOCK_M=16, BLOCK_N=128, BLOCK_K=64), 4, 2)
    add("bmm_reshape", "fp32", dict(BLOCK_B=8, BLOCK_M=16, BLOCK_N=32, BLOCK_K=16), 4, 2)
    add("mixed_tile_gemm", "fp16", dict(gemm(16, 256, 64), EVEN_K=True), 4, 3)
    add("mixed_tile_gemm", "fp16", dict(gemm(256, 16, 64), EVEN_K=False), 4, 3)
    add("mixed_tile_gemm", "bf16", dict(gemm(32, 512, 32), EVEN_K=True), 8, 2)
    add("mixed_tile_gemm", "fp16", dict(gemm(256, 16, 64), EVEN_K=True), 4, 3,
        options=dict(num_ctas=2), targets=CLUSTER)
    pb = lambda bm, bn, bk, gelu: dict(gemm(bm, bn, bk), NUM_SMS=132, GELU=gelu)  # noqa: E731
    add("persistent_bias", "fp16", pb(128, 128, 64, False), 4, 3)
    add("persistent_bias", "bf16", pb(128, 256, 64, True), 8, 3)
    add("persistent_bias", "fp16", pb(64, 128, 64, True), 4, 2,
        options=dict(matrix_instr_nonkdim=32), targets=AMD)
    ds = lambda fmt, ta: dict(gemm(128, 128, 128), FMT=fmt, TRANS_A=ta)  # noqa: E731
    add("dot_scaled_trans", "fp8e4nv", ds("e4m3", False), 4, 2, out="bf16",
        targets=["sm_100", "gfx950"])
    add("dot_scaled_trans", "fp8e4nv", ds("e4m3", True), 4, 3, out="bf16",
        targets=["sm_100", "gfx950"])
    add("dot_scaled_trans", "u8", ds("e2m1", False), 4, 3, out="bf16",
        targets=["sm_100", "gfx950"])
    lo = lambda mode, unroll=1: dict(gemm(128, 128, 64), UNROLL=unroll, MODE=mode)  # noqa: E731
    add("loop_options", "fp16", lo(0, 2), 4, 3)
    add("loop_options", "fp16", lo(1), 4, 3)
    add("loop_options", "fp16", lo(2), 4, 3, targets=CLUSTER)
    add("loop_options", "bf16", lo(3), 4, 3, targets=["sm_90", "sm_100", "gfx950"])
    sw = lambda hd, bm, bn, w: dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, WINDOW=w)  # noqa: E731
    add("sliding_window_attn", "fp16", sw(64, 64, 64, 256), 4, 2)
    add("sliding_window_attn", "bf16", sw(128, 128, 64, 1024), 8, 3)
    add("sliding_window_attn", "fp16", sw(64, 128, 32, 512), 4, 4, targets=AMD)
    add("sliding_window_attn", "fp16", sw(64, 128, 64, 256), 8, 2, options=dict(num_ctas=2),
        targets=CLUSTER)
    pd = lambda hd, bs, g: dict(HEAD_DIM=hd, BLOCK_SIZE=bs, GROUP_H=g)  # noqa: E731
    add("paged_decode", "fp16", pd(128, 16, 16), 4, 2)
    add("paged_decode", "bf16", pd(64, 32, 16), 4, 3)
    add("paged_decode", "fp16", pd(128, 64, 32), 8, 2)
    add("rotary", "fp16", dict(BLOCK_T=32, HEAD_DIM=128, INTERLEAVED=False), 4, 1)
    add("rotary", "bf16", dict(BLOCK_T=16, HEAD_DIM=64, INTERLEAVED=True), 4, 1)
    add("rotary", "fp32", dict(BLOCK_T=64, HEAD_DIM=128, INTERLEAVED=True), 8, 1,
        options=dict(num_ctas=2), targets=CLUSTER)
    gn = lambda bc, bhw: dict(GROUPS=32, BLOCK_C=bc, BLOCK_HW=bhw)  # noqa: E731
    add("group_norm", "fp16", gn(16, 256), 4, 1)
    add("group_norm", "fp32", gn(32, 128), 8, 2)
    add("group_norm", "bf16", gn(8, 1024), 8, 1, options=dict(num_ctas=2), targets=CLUSTER)
    add("segscan3d", "fp32", dict(A=4, B=32, C=16, AXIS=1), 4, 1)
    add("segscan3d", "fp32", dict(A=8, B=16, C=64, AXIS=2), 4, 1)
    add("segscan3d", "fp16", dict(A=16, B=8, C=32, AXIS=0), 2, 1)
    add("topk_packed", "fp32", dict(BLOCK_M=4, BLOCK_N=256, K=8), 4, 1)
    add("topk_packed", "fp16", dict(BLOCK_M=16, BLOCK_N=128, K=16), 4, 1)
    add("topk_packed", "fp32", dict(BLOCK_M=1, BLOCK_N=1024, K=32), 8, 1)
    add("gather_hist", "i32", dict(BLOCK_M=16, BLOCK_N=64, NUM_BINS=64), 4, 1)
    add("gather_hist", "i32", dict(BLOCK_M=8, BLOCK_N=256, NUM_BINS=256), 4, 1)
    add("gather_hist", "i32", dict(BLOCK_M=32, BLOCK_N=32, NUM_BINS=32), 2, 1)
    add("noinline_call", "fp16", dict(ROWS=32, COLS=128, T=32, MODE=0), 4, 1)
    add("noinline_call", "fp16", dict(ROWS=16, COLS=64, T=64, MODE=1), 4, 1)
    add("noinline_call", "fp32", dict(ROWS=64, COLS=64, T=32, MODE=2), 4, 1)
    first = set()
    for c in C:
        c["part"] = 1
        c["regimes"] = ("jit", ) if c["kind"] in first else ("jit", "none")
        first.add(c["kind"])
    # Part 2, added after part 1 was judged: one or two warps and small tiles (the layout
    # conversions and reductions of few warps), JIT-specialized only.
    n = len(C)
    add("rotary", "fp16", dict(BLOCK_T=16, HEAD_DIM=64, INTERLEAVED=False), 1, 1)
    add("rotary", "fp32", dict(BLOCK_T=8, HEAD_DIM=32, INTERLEAVED=True), 2, 1)
    add("segscan3d", "fp32", dict(A=2, B=16, C=16, AXIS=2), 1, 1)
    add("segscan3d", "i32", dict(A=4, B=8, C=16, AXIS=0), 1, 1)
    add("topk_packed", "fp32", dict(BLOCK_M=2, BLOCK_N=64, K=4), 1, 1)
    add("gather_hist", "i32", dict(BLOCK_M=16, BLOCK_N=16, NUM_BINS=16), 1, 1)
    add("group_norm", "fp16", dict(GROUPS=32, BLOCK_C=4, BLOCK_HW=64), 1, 1)
    add("paged_decode", "fp16", dict(HEAD_DIM=64, BLOCK_SIZE=16, GROUP_H=16), 1, 2)
    add("mixed_tile_gemm", "fp16", dict(gemm(16, 64, 32), EVEN_K=True), 1, 2)
    add("bmm_reshape", "fp16", dict(BLOCK_B=2, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16), 1, 2)
    add("noinline_call", "fp32", dict(ROWS=16, COLS=32, T=16, MODE=2), 1, 1)
    add("conv2d_igemm", "fp16", conv(32, 32, 32, 3, 1, 1), 2, 2)
    add("int4_matmul", "fp16", dict(gemm(32, 32, 64), GROUP=64), 2, 2)
    add("swiglu_down", "bf16", gemm(32, 64, 32), 2, 3)
    add("rmsnorm_matmul", "fp16", gemm(32, 32, 32), 2, 2)
    add("sliding_window_attn", "fp16", sw(64, 32, 32, 128), 2, 2)
    add("grouped_gemm", "fp16", gemm(32, 32, 32), 2, 2)
    add("persistent_bias", "fp16", pb(64, 64, 32, False), 2, 2)
    add("loop_options", "fp16", dict(gemm(64, 64, 32), UNROLL=4, MODE=0), 2, 2)
    for c in C[n:]:
        c["part"] = 2
        c["regimes"] = ("jit", )
    for c in C:
        key = json.dumps([c["kind"], c["dtype"], c["out_dtype"], c["params"], c["num_warps"],
                          c["num_stages"], c["options"]], sort_keys=True)
        c["cfg_hash"] = hashlib.sha1(key.encode()).hexdigest()[:10]
    return C


def expand(configs, targets):
    out = []
    for c in configs:
        for t in c["targets"]:
            if t not in targets:
                continue
            for reg in c["regimes"]:
                r = {k: v for k, v in c.items() if k not in ("targets", "regimes")}
                r.update(target=t, regime=reg,
                         id="%s_%s_%s_%s" % (c["kind"], t, reg, c["cfg_hash"]))
                out.append(r)
    return out


def kinds_worker_main(conn, kinds, cache_root, stop_after_llir):
    # make_catalogue's worker, compiling the kinds `kinds()` returns instead of the catalogue's.
    mc._kinds = kinds
    mc.worker_main(conn, cache_root, stop_after_llir)


class Worker(mc.Worker):
    """make_catalogue's worker over another corpus's kinds (a module-level function, so the
    spawned process can import it)."""

    def __init__(self, cache_root, stop_after_llir, kinds=None):
        self.kinds = kinds or _kinds
        super().__init__(cache_root, stop_after_llir)

    def start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=kinds_worker_main,
                                     args=(child, self.kinds) + self.args, daemon=True)
        self.proc.start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--kinds", default="")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--extend", action="store_true",
                    help="keep the records and TTGIR already in OUT and compile only the "
                         "configurations they lack (a part added later)")
    args = ap.parse_args()
    targets = args.targets.split(",")
    cfgs = make_configs()
    if args.kinds:
        cfgs = [c for c in cfgs if c["kind"] in set(args.kinds.split(","))]
    todo = expand(cfgs, targets)
    if args.list:
        for c in todo:
            print(c["id"], c["dtype"], json.dumps(c["params"]), c["num_warps"], c["num_stages"],
                  json.dumps(c["options"]))
        print(len(todo), "configurations")
        return
    compile_corpus(args, todo, _kinds, dict(kinds={k: v["what"] for k, v in _kinds().items()}),
                   "make_heldout_corpus.py")


def compile_corpus(args, todo, kinds, extra_info, script, on_record=None, index_keys=()):
    """Compiles `todo` (configurations with "id" and "part") with kinds() into args.out, keeping
    what args.extend finds there; on_record(rec) may add fields before a record is kept."""
    import triton
    targets = args.targets.split(",")
    done, dates = {}, []
    if args.extend:
        done = mc.load_outputs(args.out)
        dates = json.load(open(os.path.join(args.out, "index.json")))["info"].get("dates", [])
    print("triton %s: %d configurations, %d already compiled" % (triton.__version__, len(todo),
                                                                 len(done)), flush=True)
    start = time.time()
    cache_root = tempfile.mkdtemp(prefix="triton-corpus-")
    worker = Worker(cache_root, True, kinds)
    recs = []
    try:
        for i, cfg in enumerate(todo):
            if cfg["id"] in done:
                done[cfg["id"]]["part"] = cfg["part"]
                recs.append(done[cfg["id"]])
                continue
            rec = worker.run(cfg, args.timeout)
            rec["part"] = cfg["part"]
            rec["version"] = rec["triton_version"] = triton.__version__
            rec["tmem_size"] = rec.get("tmem")
            if on_record:
                on_record(rec)
            recs.append(rec)
            if (i + 1) % 25 == 0:
                print("%d/%d %.0fs errors %d" % (i + 1, len(todo), time.time() - start,
                                                 sum(r["verdict"] == "compile_error"
                                                     for r in recs)), flush=True)
    finally:
        worker.close()
        shutil.rmtree(cache_root, ignore_errors=True)
    ok = [r for r in recs if r["verdict"] != "compile_error"]
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = dict(tc.triton_versions(), date=date, dates=dates + [date],
                stage="llir", targets=targets, configs=len(recs), compiled=len(ok),
                wall_s=round(time.time() - start, 1),
                limits={t: tc.shared_limit(t) for t in targets},
                machine="CPU only, one compile worker process",
                command="nice -n 10 %s bench/triton/%s %s" % (
                    sys.executable, script, " ".join(sys.argv[1:])), **extra_info)
    mc.INDEX_KEYS = mc.INDEX_KEYS + ["triton_version", "tmem_size", "part"] + list(index_keys)
    mc.write_outputs(args.out, info, recs, targets)
    print("compiled %d/%d in %.0fs" % (len(ok), len(recs), time.time() - start))
    return recs

if __name__ == "__main__":
    main()
