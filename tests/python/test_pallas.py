"""scratchsim.pallas: a pallas_call traced on the CPU and checked for TPU generations."""
import os

import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
pytest.importorskip("jax.experimental.pallas.tpu", reason="this JAX has no Pallas TPU")

import scratchsim  # noqa: E402
import scratchsim.pallas as ssp  # noqa: E402
from scratchsim import _pallas_trace as p2g  # noqa: E402  (the tracer)

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "tpu")


def fatal(report):
    return [v["message"] for v in report["violations"] if v.get("fatal")]


def test_traced_graphs_carry_the_body_and_get_a_spill_estimate():
    fn, args = p2g.example_matmul(bm=1024, bn=1024, bk=1024)
    graph = ssp.to_graph(fn, *args)
    assert "body not read" not in graph
    assert "dots {" in graph
    report = ssp.check(fn, *args, device="tpu_v5e")
    vmem = {s["space"]: s for s in report["spaces"]}["vmem"]
    assert vmem["has_estimates"] and vmem["estimated_bytes"] > 0


def test_traced_graphs_carry_the_exported_call_for_simulate_confirm():
    # pallas.jax_export: the pallas_call alone as jax.export serializes it (flatbuffers needed);
    # where it cannot be written the graph says why in a comment.
    import ast
    import importlib.util
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    graph = ssp.to_graph(fn, *args)
    if importlib.util.find_spec("flatbuffers") is None:
        assert "# not exported (ImportError" in graph and "jax_export" not in graph
        return
    line = next(l for l in graph.splitlines() if l.strip().startswith("jax_export: "))
    blob = ast.literal_eval("b" + line.split(": ", 1)[1])
    exported = jax.export.deserialize(bytearray(blob))
    assert [(a.shape, a.dtype) for a in exported.in_avals] == [(a.shape, a.dtype) for a in args]
    assert exported.platforms == ("tpu",)


def test_simulate_confirms_a_traced_graph_with_libtpu_or_says_why_not():
    # scratchsim.simulate(..., confirm=) is simulate --confirm: libtpu compiles the graph's exported
    # call where it is installed; elsewhere the report says why and the model's verdict stands.
    import importlib.util
    if importlib.util.find_spec("flatbuffers") is None:
        pytest.skip("flatbuffers is not installed: the tracer writes no exported call")
    fn, args = p2g.example_matmul()  # 2048-wide blocks: 64 MiB of windows, over v5e's 16 MiB
    graph = ssp.to_graph(fn, *args)
    with pytest.raises(scratchsim.Error, match="confirm"):
        scratchsim.simulate("tpu_v5e", graph, confirm="yes")
    report = scratchsim.simulate("tpu_v5e", graph, confirm="always")
    c = report["confirmation"]
    assert c["model_verdict"] == "DOES_NOT_FIT"
    if importlib.util.find_spec("libtpu") is None:
        assert "libtpu" in c["error"] and report["verdict"] == "DOES_NOT_FIT"
    else:
        # libtpu's rounded figures travel as its words, not as bytes they are not
        assert c["outcome"] == "vmem_scoped" and c["size_text"] == "64.00M" and "size_bytes" not in c
        assert report["verdict"] == "DOES_NOT_FIT" and report["fits"] is False
        # with its limit raised to the whole 128 MiB libtpu compiles it: the fix it measured
        assert c["capacity_bytes"] == 128 * 2**20 and c["requirement_bytes"] == 76361728
        assert [s["raise_limit_bytes"] for s in report["suggestions"] if s.get("raise_limit_bytes")] == [76361728]


def test_the_runners_vmem_capacity_is_the_device_models():
    # tpu_aot raises a kernel out of VMEM to VMEM_CAPACITY where no capacity is passed (the Python
    # API); simulate passes its device model's highest scoped limit. The two must be one figure.
    import ast
    from scratchsim import _tpu_aot  # backends/tpu/tpu_aot.py, shipped in the package
    tree = ast.parse(open(_tpu_aot.__file__).read())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "VMEM_CAPACITY")
    capacity = eval(compile(ast.Expression(node.value), "tpu_aot.py", "eval"))
    for gen, vmem_bytes in capacity.items():
        spaces = {s["name"]: s for s in scratchsim.device(f"tpu_{gen}")["memory_spaces"]}
        assert spaces["vmem"]["max_scoped_limit_bytes"] == vmem_bytes, gen


def test_matmul_2048_blocks_do_not_fit_v5e_scoped_vmem():
    fn, args = p2g.example_matmul()
    report = ssp.check(fn, *args, device="tpu_v5e")
    assert report["fits"] is False
    assert "Ran out of memory in memory space vmem" in fatal(report)[0]


def test_smaller_blocks_fit_and_match_the_graph_route():
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    report = ssp.check(fn, *args, device="v6e", keep_graph=True)
    assert report["fits"] is True
    again = scratchsim.simulate("tpu_v6e", report["graph"])
    assert again["spaces"] == report["spaces"]


def test_e1001_seed_shape():
    fn, args = p2g.example_e1001()
    graph = ssp.to_graph(fn, *args)
    assert 'name: "my-custom-kernel"' in graph
    assert ssp.check(fn, *args, device="tpu_v5e")["fits"] is False


def test_prefetch_buffering_and_vmem_limit():
    fn, args = p2g.example_prefetch()
    graph = ssp.to_graph(fn, *args)
    assert "buffer_count: 1" in graph and "vmem_limit_bytes" in graph
    assert ssp.check(fn, *args, device="tpu_v5e")["fits"] is True


def test_no_pallas_call_is_an_error():
    import jax.numpy as jnp
    with pytest.raises(scratchsim.Error):
        ssp.check(lambda x: x + 1, jax.ShapeDtypeStruct((8, 128), jnp.float32))


def test_confirm_takes_only_its_values():
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    with pytest.raises(scratchsim.Error, match="confirm"):
        ssp.check(fn, *args, device="tpu_v5e", confirm="yes")


def test_confirm_only_compiles_what_is_at_risk():
    # A FITS verdict needs no compiler: no "confirmation" in the report, with or without libtpu.
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    report = ssp.check(fn, *args, device="tpu_v5e", confirm="at_risk")
    assert report["verdict"] == "FITS" and "confirmation" not in report


def test_traced_graphs_carry_the_toolchain_and_the_vector_program():
    # pallas.traced_with: what the report compares with the libtpu the spill model was fitted on;
    # body.program: what the vreg replay walks
    from importlib import metadata
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    graph = ssp.to_graph(fn, *args)
    assert f'jax: "{metadata.version("jax")}"' in graph
    assert "program {" in graph and 'op: "dot_general"' in graph


def _two_step_copy(semantics):
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    spec = pl.BlockSpec((512, 1024), lambda i: (i, 0))
    params = pltpu.CompilerParams(dimension_semantics=semantics) if semantics else None

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((1024, 1024), jnp.float32), grid=(2,),
                              in_specs=[spec], out_specs=spec, compiler_params=params)(x)
    return fn, (jax.ShapeDtypeStruct((1024, 1024), jnp.float32),)


def test_traced_graphs_carry_the_dimension_semantics_and_v5p_splits_a_parallel_grid():
    # libtpu's default for an axis the kernel leaves unset is "arbitrary"; on v5p a parallel grid of
    # two steps runs one a TensorCore, its windows single-buffered (megacore_buffering_probe.txt)
    unset, parallel = (ssp.to_graph(fn, *args) for fn, args in map(_two_step_copy, (None, ("parallel",))))
    assert 'dimension_semantics: "arbitrary"' in unset
    assert 'dimension_semantics: "parallel"' in parallel
    window = 512 * 1024 * 4
    peak = {}
    for name, graph in (("unset", unset), ("parallel", parallel)):
        for device in ("tpu_v5e", "tpu_v5p"):
            report = scratchsim.simulate(device, graph)
            peak[name, device] = next(s["peak_bytes"] for s in report["spaces"] if s["space"] == "vmem")
    assert peak["parallel", "tpu_v5p"] == 2 * window
    assert peak["parallel", "tpu_v5e"] == peak["unset", "tpu_v5p"] == 4 * window


def test_check_compiles_by_default_only_where_libtpu_is_importable(monkeypatch):
    # confirm="auto": without libtpu nothing is compiled, and an AT RISK verdict says how to settle it
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "libtpu" else real(name, *a))
    fn, args = p2g.example_matmul(bm=2048, bn=2048, bk=2048)
    report = ssp.check(fn, *args, device="tpu_v6e")
    assert "confirmation" not in report
    with pytest.raises(scratchsim.Error, match="'auto'"):
        ssp.check(fn, *args, device="tpu_v6e", confirm="sometimes")


def _libtpu_installed():
    import importlib.util
    return importlib.util.find_spec("libtpu") is not None


@pytest.mark.skipif(_libtpu_installed(), reason="libtpu is installed here: the confirmed path is tested instead")
def test_confirm_without_libtpu_says_why_and_keeps_the_verdict():
    fn, args = p2g.example_matmul(bm=512, bn=512, bk=512)
    report = ssp.check(fn, *args, device="tpu_v5e", confirm="always")
    assert "not installed" in report["confirmation"]["error"]
    assert report["verdict"] == "FITS" and report["confirmation"]["model_verdict"] == "FITS"
    assert "confirmed_verdict" not in report["confirmation"]


def _run_with_libtpu(script):
    """The JSON last line `script` prints, run in a process of its own: libtpu must see its
    environment before JAX starts, and takes one process at a time."""
    import json
    import subprocess
    import sys
    from test_tpu_oracle import _libtpu_busy
    if _libtpu_busy():
        pytest.skip("another process holds libtpu (/tmp/libtpu_lockfile)")
    env = dict(os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# Flash attention's backward dq kernel, q and k blocks of 2048 with k steps of 512 (corpus row
# v5e/flash_bwd_dq/19b7204447): the register-spill band reaches past v5e's 16 MiB scoped limit, so
# the model says AT RISK; libtpu compiles it in 16,703,488 B, 73,728 B below the limit.
_FLASH_AT_RISK = """
import json, jax, jax.numpy as jnp
import scratchsim.pallas as ssp
from jax.experimental.pallas.ops.tpu import flash_attention as fa
def fn(q, k, v, l, m, do, di):
    return fa._flash_attention_bwd_dq(q, k, v, None, None, l, m, do, di, block_q_major=2048,
                                      block_k_major=2048, block_k=512, sm_scale=0.125, causal=False,
                                      mask_value=fa.DEFAULT_MASK_VALUE, debug=False)
a = jax.ShapeDtypeStruct((1, 2, 4096, 128), jnp.bfloat16)
lm = jax.ShapeDtypeStruct((1, 2, 4096), jnp.float32)
r = ssp.check(fn, a, a, a, lm, lm, a, lm, device="tpu_v5e", confirm="at_risk")
print(json.dumps({k: r.get(k) for k in ("verdict", "confirmation", "suggestions")}))
"""


@pytest.mark.skipif(not _libtpu_installed(), reason="libtpu is not installed (pip install 'jax[tpu]==0.10.2'): "
                    "the unconfirmed path is tested instead")
def test_confirm_with_libtpu_settles_an_at_risk_kernel():
    # libtpu's verdict is the verdict; the model's stays beside it, and nothing is left to change
    r = _run_with_libtpu(_FLASH_AT_RISK)
    assert r["confirmation"]["model_verdict"] == "AT_RISK"
    assert r["confirmation"]["outcome"] == "fits" and r["confirmation"]["confirmed_verdict"] == "FITS"
    assert r["verdict"] == "FITS" and not r["suggestions"]
    assert r["confirmation"]["scoped_vmem_bytes"] == 16703488


# The first holdout sweep's band miss (v7x 896 x 896 x 512 bf16, tests/data/tpu/README.md) with its
# limit at 10,240,000 B: the model says FITS, libtpu fails it and, raised to the whole 64 MiB,
# compiles it in 10,371,072 B (backends/tpu/testdata/confirm_expected.txt).
_OUT_OF_VMEM = """
import json, sys
sys.path.insert(0, %r)
import scratchsim.pallas as ssp
import tpu_kernels
fn, args = tpu_kernels.matmul_acc(896, 896, 512, "bf16", limit=10_240_000)
r = ssp.check(fn, *args, device="tpu_v7x", confirm="always")
print(json.dumps({k: r.get(k) for k in ("verdict", "confirmation", "suggestions")}))
"""


@pytest.mark.skipif(not _libtpu_installed(), reason="libtpu is not installed (pip install 'jax[tpu]==0.10.2'): "
                    "the unconfirmed path is tested instead")
def test_confirm_measures_what_a_kernel_out_of_vmem_needs():
    # libtpu's DOES_NOT_FIT is the verdict, the model's FITS stays beside it, and the limit fix is
    # the one libtpu measured
    r = _run_with_libtpu(_OUT_OF_VMEM % BENCH)
    c = r["confirmation"]
    assert c["model_verdict"] == "FITS" and c["confirmed_verdict"] == "DOES_NOT_FIT"
    assert r["verdict"] == "DOES_NOT_FIT"
    assert c["capacity_bytes"] == 64 * 2**20 and c["requirement_bytes"] == 10371072
    assert [s["raise_limit_bytes"] for s in r["suggestions"] if s.get("raise_limit_bytes")] == [10371072]


# Ragged paged attention's lowering asks the TPU's device kind: traced on the CPU alone its graph
# carries no exported call; traced under v6e's device (device=) it does, and the export compiles.
_RAGGED = """
import json, sys
sys.path.insert(0, %r)
import scratchsim, scratchsim.pallas as ssp
import tpu_kernels
fn, args = tpu_kernels.build("ragged_paged", {"d": 128, "kv_heads": 1, "kv_pages_per_block": 8, "max_seqs": 16,
                             "page_size": 16, "pages_per_seq": 64, "q_heads": 8, "queries_per_block": 32,
                             "tokens": 1024})
plain = ssp.to_graph(fn, *args)
traced = ssp.to_graph(fn, *args, device="tpu_v6e")
r = scratchsim.simulate("tpu_v6e", traced, confirm="always")
print(json.dumps({"plain": "jax_export" in plain, "traced": "jax_export" in traced,
                  "confirmation": r.get("confirmation")}))
"""


@pytest.mark.skipif(not _libtpu_installed(), reason="libtpu is not installed (pip install 'jax[tpu]==0.10.2'): "
                    "no TPU device to trace under")
def test_a_kernel_that_asks_the_device_kind_exports_when_traced_under_the_device():
    r = _run_with_libtpu(_RAGGED % BENCH)
    assert r["plain"] is False and r["traced"] is True
    assert not r["confirmation"].get("error") and r["confirmation"]["outcome"] == "fits", r["confirmation"]


def test_device_without_libtpu_is_an_error_naming_it():
    if _libtpu_installed():
        pytest.skip("libtpu is installed here: tracing under the device is tested instead")
    fn, args = p2g.example_matmul()
    with pytest.raises(scratchsim.Error, match="device='tpu_v6e': libtpu is not installed"):
        ssp.to_graph(fn, *args, device="tpu_v6e")


def _flash(seq, head_dim):
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu import flash_attention as fa
    bs = fa.BlockSizes(block_q=1024, block_k_major=4096, block_k=512, block_b=1)
    a = jax.ShapeDtypeStruct((1, 2, seq, head_dim), jnp.bfloat16)
    return (lambda q, k, v: fa.flash_attention(q, k, v, sm_scale=0.125, block_sizes=bs)), (a, a, a)


def test_scratch_of_a_single_kv_step_is_forwarded_when_lane_aligned():
    # One kv grid step (block_k_major = the sequence): the pl.when(program_id == 0) branches fold,
    # and Mosaic allocates none of the 128-wide m and l scratch; a 64-wide accumulator stays
    # (libtpu 0.0.42.1 on v5e and v6e, docs/tpu.md). Two kv steps keep all three.
    fn, args = _flash(4096, 64)
    graph = ssp.to_graph(fn, *args)
    assert 'temporary_scratch: "scratch0"' in graph and 'temporary_scratch: "scratch1"' in graph
    assert 'temporary_scratch: "scratch2"' not in graph
    fn, args = _flash(8192, 64)
    assert "temporary_scratch" not in ssp.to_graph(fn, *args)


def _merged_matmul(masked):
    # One 512 x 1024 x 1024 f32 block whose result is written into the output rows a mask picks,
    # as megablox gmm writes its group's rows (docs/tpu.md, "What a matmul holds")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, y_ref, o_ref):
        acc = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)
        if masked:
            rows = jax.lax.broadcasted_iota(jnp.int32, acc.shape, 0)
            acc = jnp.where(rows < 300, acc, o_ref[...])
        o_ref[...] = acc

    def fn(x, y):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((512, 1024), jnp.float32))(x, y)

    return fn, (jax.ShapeDtypeStruct((512, 1024), jnp.float32), jax.ShapeDtypeStruct((1024, 1024), jnp.float32))


def test_a_dot_merged_under_a_mask_is_marked_and_holds_a_second_column_on_v5e():
    fn, args = _merged_matmul(True)
    assert "masked_merge: true" in ssp.to_graph(fn, *args)
    plain_fn, plain_args = _merged_matmul(False)
    assert "masked_merge" not in ssp.to_graph(plain_fn, *plain_args)
    spilled = lambda f, a: {s["space"]: s for s in ssp.check(f, *a, device="tpu_v5e")["spaces"]}["vmem"]["estimated_bytes"]
    # two 128-wide columns of f32 partials (512 KiB) against one, less the same registers kept
    assert spilled(fn, args) - spilled(plain_fn, plain_args) == 512 * 128 * 4


def _one_hot_sum(compare):
    # segment_sum of bench/tpu/heldout_kernels.py: a one-hot of (1, 256) segment ids against an
    # iota block, then a dot; with compare=False the ids are added to the block instead
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(seg_ref, x_ref, o_ref):
        rows = jax.lax.broadcasted_iota(jnp.int32, (8, 256), 0)
        hot = (rows == seg_ref[...]) if compare else (rows + seg_ref[...]) > 3
        o_ref[...] = jnp.dot(hot.astype(jnp.float32), x_ref[...], preferred_element_type=jnp.float32)

    def fn(seg, x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 512), jnp.float32))(seg, x)

    return fn, (jax.ShapeDtypeStruct((1, 256), jnp.int32), jax.ShapeDtypeStruct((256, 512), jnp.float32))


def test_a_row_vector_compared_against_a_block_is_broadcast_down_the_sublanes():
    # Mosaic replicates a (1, n) operand of any elementwise op against a block, a compare as an add:
    # on v4 libtpu lists one 4 KiB temporary per vreg of it and its internal scratch (segment_sum's
    # rows of tests/data/tpu/heldout_families.jsonl.gz); 256 i32 lanes are 2 vregs
    for compare in (True, False):
        fn, args = _one_hot_sum(compare)
        assert 'row_broadcast_bytes: "8192"' in ssp.to_graph(fn, *args)



def _column_statistics(weighted):
    # Welford's column mean and variance of bench/tpu/heldout_kernels.py in one step: rows reduced
    # over the block's sublanes, made (1, n) and subtracted from the block; with weighted=True a
    # loaded (1, n) weight row scales it too
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, w_ref, o_ref):
        x = x_ref[...]
        mean = jnp.sum(x, axis=0, keepdims=True) / x.shape[0]
        centred = x - mean
        var = jnp.mean(centred * centred, axis=0)
        out = centred * jax.lax.rsqrt(var + 1e-5)[None, :]
        o_ref[...] = out * w_ref[...] if weighted else out

    def fn(x, w):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((256, 512), jnp.float32))(x, w)

    return fn, (jax.ShapeDtypeStruct((256, 512), jnp.float32), jax.ShapeDtypeStruct((1, 512), jnp.float32))


def test_a_block_reduced_over_its_sublanes_is_a_row_in_every_sublane():
    # Mosaic's infer_vector_layout replicates a multi_reduction's reduced dims: a column sum made
    # (1, n), and what is computed from such rows alone, is already in every sublane, so
    # broadcasting it down the block needs no v4 temporaries; a loaded row still does (4 vregs)
    fn, args = _column_statistics(weighted=False)
    graph = ssp.to_graph(fn, *args)
    assert 'row_broadcast_bytes: "0"' in graph or "row_broadcast_bytes" not in graph
    assert graph.count('"f32[1,512]{sublanes replicated}"') >= 3  # the mean, its quotient, the scale
    assert '"f32[1,512]"' not in graph
    fn, args = _column_statistics(weighted=True)
    graph = ssp.to_graph(fn, *args)
    assert 'row_broadcast_bytes: "16384"' in graph
    assert graph.count('"f32[1,512]"') == 1  # the loaded weight


def _masked_top1(rows, cols):
    # one round of topk_mask of bench/tpu/heldout_kernels.py in a loop: the column index is an
    # iota along the minor dim, carried into the loop and compared against the block
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        col = jax.lax.broadcasted_iota(jnp.int32, (rows, cols), 1).astype(jnp.float32)
        row = jax.lax.broadcasted_iota(jnp.int32, (rows, cols), 0)

        def body(t, x):
            m = jnp.max(x, axis=-1, keepdims=True)
            return jnp.where(col == m, -1.0, x) + row.astype(jnp.float32)
        o_ref[...] = jax.lax.fori_loop(0, 2, body, x_ref[...])

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float32))(x)

    return fn, (jax.ShapeDtypeStruct((rows, cols), jnp.float32),)


def test_an_iota_and_what_is_computed_from_it_alone_keep_a_replicated_layout():
    # Mosaic's layout of an iota along the minor dim replicates the sublanes (along the second-minor,
    # the lanes), and an elementwise op or convert of such values keeps it: one vreg per 128 lanes
    # (per 8 rows). topk_mask's spill slots follow it (tests/data/tpu/heldout_families.jsonl.gz).
    fn, args = _masked_top1(128, 1024)
    graph = ssp.to_graph(fn, *args)
    assert graph.count('"i32[128,1024]{sublanes replicated}"') == 1
    # the converted column index and the row index: where each is made and as the loop's operand
    assert graph.count('"f32[128,1024]{sublanes replicated}"') == 2
    assert graph.count('"i32[128,1024]{lanes replicated}"') == 2
    assert graph.count('"f32[128,1024]{lanes replicated}"') == 1  # converted in the loop
    # compared against the block's maximum, the result is a whole block again
    assert '"i1[128,1024]{' not in graph


def test_a_broadcast_replicates_the_dims_it_expands():
    # Mosaic's broadcast layout replicates each minor dim the broadcast expands: a (1, n) row down
    # the sublanes, a (m, 1) column across the lanes, a scalar both; an operand replicated on both
    # axes does not change what an elementwise op keeps
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, w_ref, o_ref):
        x = x_ref[...]
        row = jnp.broadcast_to(w_ref[...], (128, 1024))
        col = jnp.broadcast_to(jnp.sum(x, axis=-1, keepdims=True), (128, 1024))
        lanes = jax.lax.broadcasted_iota(jnp.int32, (128, 1024), 1).astype(jnp.float32)
        o_ref[...] = x * row + col * jnp.full((128, 1024), 2.0, jnp.float32) + jnp.maximum(lanes, w_ref[...])

    def fn(x, w):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((128, 1024), jnp.float32))(x, w)

    graph = ssp.to_graph(fn, jax.ShapeDtypeStruct((128, 1024), jnp.float32),
                         jax.ShapeDtypeStruct((1, 1024), jnp.float32))
    # the row, the converted lane index and its maximum with the (1, n) row, broadcast implicitly
    assert graph.count('"f32[128,1024]{sublanes replicated}"') == 3
    assert graph.count('"f32[128,1024]{sublanes and lanes replicated}"') == 1  # the scalar 2.0
    assert graph.count('"f32[128,1024]{lanes replicated}"') == 2  # the column and its product


def _sliced(strides):
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jax.lax.slice(x, (0, 32), (256, 128), strides) * 2.0

    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((256, 96 // (strides or (1, 1))[1]),
                                                                     jnp.float32))(x)
    return fn, (jax.ShapeDtypeStruct((256, 128), jnp.float32),)


def test_a_slice_records_its_start_the_layout_offset_of_its_result():
    fn, args = _sliced(None)
    graph = ssp.to_graph(fn, *args)
    line = next(l for l in graph.splitlines() if 'op: "slice"' in l)
    assert line.count("start_indices:") == 2 and "start_indices: 32" in line


def test_a_strided_slice_records_no_start():
    # A strided slice gathers elements: its result does not keep its operand's vregs.
    fn, args = _sliced((1, 2))
    graph = ssp.to_graph(fn, *args)
    line = next(l for l in graph.splitlines() if 'op: "slice"' in l)
    assert "start_indices" not in line
