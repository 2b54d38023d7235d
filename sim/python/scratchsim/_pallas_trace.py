"""The Pallas tracer: a scratchsim KernelGraph (textproto with a `pallas` message) from real Pallas code.

Traces a function that calls `pl.pallas_call` (no TPU needed: tracing runs on CPU) and reads
each pallas_call's grid, BlockSpecs, scratch shapes, scalar-prefetch operands and
vmem_limit_bytes from the jaxpr, and its body's figures (scratchsim._pallas_body), so users need
not transcribe them by hand. scratchsim.pallas is its interface; bench/tpu/pallas_to_graph.py is
its command line.

Each graph carries its pallas_call as jax.export serializes it (pallas.jax_export; needs the
flatbuffers package), which `simulate --confirm` compiles with libtpu.
"""
from . import _pallas_body

_DTYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int32": "i32", "int16": "i16", "int8": "i8", "int4": "i4", "uint32": "u32",
    "uint16": "u16", "uint8": "u8", "bool": "i1", "float8_e4m3fn": "f8e4m3fn",
    "float8_e5m2": "f8e5m2",
}


def _dtype(dtype):
  name = str(dtype)
  if name not in _DTYPES:
    raise ValueError(f"dtype {name!r} has no scratchsim name (known: {sorted(_DTYPES)})")
  return _DTYPES[name]


def _block_dim(d):
  """An int block extent; squeezed (None / pl.Squeezed) dims are 1."""
  if d is None:
    return 1
  if isinstance(d, int):
    return d
  for attr in ("block_size", "size"):
    v = getattr(d, attr, None)
    if isinstance(v, int):
      return v
  return 1  # pl.Squeezed() and other markers of a size-1 window


def _space(obj):
  """'vmem', 'smem', 'any' or 'semaphore' from an aval or block mapping."""
  for holder in (obj, getattr(obj, "transformed_block_aval", None), getattr(obj, "block_aval", None)):
    ms = getattr(holder, "memory_space", None)
    if ms is not None:
      s = str(ms).upper()
      if "SEMAPHORE" in s:
        return "semaphore"
      if "SMEM" in s:
        return "smem"
      if "ANY" in s or "HBM" in s:
        return "any"
      if "VMEM" in s:
        return "vmem"
  dtype = str(getattr(obj, "dtype", ""))
  if "sem" in dtype:
    return "semaphore"
  return "vmem"


def _used_axes(index_map_jaxpr, num_grid):
  """Grid axes the index map reads (a conservative use-def scan of its jaxpr)."""
  jaxpr = getattr(index_map_jaxpr, "jaxpr", index_map_jaxpr)
  grid_vars = list(jaxpr.invars[:num_grid])
  used = set()
  for eqn in jaxpr.eqns:
    for v in eqn.invars:
      used.add(id(v))
  for v in jaxpr.outvars:
    used.add(id(v))
  return [i for i, v in enumerate(grid_vars) if id(v) in used]


def _find_pallas_calls(jaxpr, out):
  for eqn in jaxpr.eqns:
    if eqn.primitive.name == "pallas_call":
      out.append(eqn)
    for p in eqn.params.values():
      sub = getattr(p, "jaxpr", None)
      if sub is not None and hasattr(sub, "eqns"):
        _find_pallas_calls(sub, out)
      elif hasattr(p, "eqns"):
        _find_pallas_calls(p, out)


def _q(s):
  return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _spec(field, name, bm, grid_rank, indent="  "):
  lines = [f"{indent}{field} {{", f"{indent}  name: {_q(name)}"]
  aval = bm.array_aval
  lines.append(f"{indent}  dtype: {_q(_dtype(aval.dtype))}")
  space = _space(bm)
  if space != "vmem":
    lines.append(f"{indent}  memory_space: {_q(space)}")
  for d in aval.shape:
    lines.append(f"{indent}  array_shape: {_q(d)}")
  for d in bm.block_shape:
    lines.append(f"{indent}  block_shape: {_q(_block_dim(d))}")
  mode = getattr(bm, "pipeline_mode", None)
  count = getattr(mode, "buffer_count", None)
  if isinstance(count, int):
    lines.append(f"{indent}  buffer_count: {count}")
  axes = _used_axes(bm.index_map_jaxpr, grid_rank)
  if not axes:
    lines.append(f"{indent}  constant_index_map: true")
  for a in axes:
    lines.append(f"{indent}  index_map_axes: {a}")
  lines.append(f"{indent}}}")
  return lines


def _compiler_param(params, name):
  """The first set value of CompilerParams field `name` in the pallas_call's compiler_params (a
  CompilerParams, or a dict of them by backend, or plain dicts); None where none sets it."""
  cp = params.get("compiler_params")
  candidates = list(cp.values()) if isinstance(cp, dict) else [cp] if cp is not None else []
  for c in candidates:
    v = c.get(name) if isinstance(c, dict) else getattr(c, name, None)
    if v:
      return v
  return None


def _dimension_semantics(params, rank):
  """CompilerParams.dimension_semantics as strings, one per grid axis ("arbitrary" where the
  kernel sets none: libtpu's default)."""
  sem = _compiler_param(params, "dimension_semantics")
  if not sem:
    return ["arbitrary"] * rank
  return [str(getattr(s, "value", s)).lower().split(".")[-1] for s in sem]


def _vmem_limit(params):
  v = _compiler_param(params, "vmem_limit_bytes")
  return int(v) if v else None


def graph_from_eqn(eqn, graph_name, export=True):
  """The KernelGraph textproto of one pallas_call equation; with export, its exported call too
  (pallas.jax_export, for simulate --confirm; 5-15 KB a graph that the model does not read)."""
  gm = eqn.params["grid_mapping"]
  # A dynamic grid extent (DynamicGridDim, e.g. megablox gmm's active tiles) has no static
  # value; 2 stands for "more than one" (only extent 1 changes the buffering).
  grid = [g if isinstance(g, int) else 2 for g in gm.grid]
  dynamic = [i for i, g in enumerate(gm.grid) if not isinstance(g, int)]
  nsp = int(getattr(gm, "num_index_operands", 0))
  n_in = int(gm.num_inputs)
  n_out = int(gm.num_outputs)
  # JAX passes the pallas_call's name= as the "name" param (older releases: name_and_src_info).
  call_name = eqn.params.get("name")
  if not isinstance(call_name, str) or not call_name:
    call_name = getattr(eqn.params.get("name_and_src_info"), "name", None) or graph_name
  lines = ["# Generated by scratchsim.pallas from a traced pallas_call.",
           f"name: {_q(graph_name)}"]
  if dynamic:
    lines.insert(1, f"# grid axes {dynamic} are dynamic; written as 2 (more than one step).")
  limit = _vmem_limit(eqn.params)
  if limit:
    lines += ["tpu {", f"  vmem_limit_bytes: {_q(limit)}", "}"]
  lines.append("pallas {")
  lines.append(f"  name: {_q(call_name)}")
  for g in grid:
    lines.append(f"  grid: {_q(g)}")
  # Scalar-prefetch operands come first among the call's operands: whole arrays in SMEM.
  for i in range(nsp):
    aval = eqn.invars[i].aval
    lines += ["  scalar_prefetch {", f"    name: {_q(f'prefetch{i}')}",
              f"    dtype: {_q(_dtype(aval.dtype))}"]
    lines += [f"    array_shape: {_q(d)}" for d in aval.shape]
    lines.append("  }")
  bms = list(gm.block_mappings)
  for i, bm in enumerate(bms[:n_in]):
    lines += _spec("in_specs", f"in{i}", bm, len(grid))
  for i, bm in enumerate(bms[n_in:n_in + n_out]):
    lines += _spec("out_specs", f"out{i}", bm, len(grid))
  for i, aval in enumerate(getattr(gm, "scratch_avals", ())):
    inner = getattr(aval, "inner_aval", aval)
    space = _space(aval)
    lines += ["  scratch_shapes {", f"    name: {_q(f'scratch{i}')}", f"    memory_space: {_q(space)}"]
    if space != "semaphore":
      lines.append(f"    dtype: {_q(_dtype(inner.dtype))}")
    lines += [f"    shape: {_q(d)}" for d in getattr(inner, "shape", ())]
    lines.append("  }")
  # What the body keeps in vector registers (_pallas_body): the TPU lowering's spill estimate. The
  # reader walks JAX's jaxpr internals (equation params, aval attributes); a JAX that moved them
  # raises AttributeError or KeyError, and the graph goes without a body, saying why here (the
  # report then notes that spills are not estimated). Any other failure is a bug and propagates.
  try:
    lines += _pallas_body.body_textproto(_pallas_body.summarize(eqn))
  except (AttributeError, KeyError) as e:
    lines.insert(1, f"# body not read (this JAX's jaxpr is not as the body reader knows it: {type(e).__name__}: "
                    f"{str(e)[:200]}); spills are not estimated")
  try:
    if export:
      lines.append(f"  jax_export: {_bytes_literal(export_call(eqn))}")
  except Exception as e:  # pylint: disable=broad-except
    lines.insert(1, f"# not exported ({type(e).__name__}: {str(e)[:200]}); simulate --confirm cannot compile it "
                    "(a kernel whose lowering asks the TPU's device kind exports when traced under the generation's "
                    "device: scratchsim.pallas.to_graph(..., device=))")
  lines += [f"  dimension_semantics: {_q(s)}" for s in _dimension_semantics(eqn.params, len(grid))]
  lines += _toolchain_textproto()
  lines.append("}")
  return "\n".join(lines) + "\n"


def _toolchain_textproto():
  """pallas.traced_with: the jax, jaxlib and libtpu installed here (pip's versions; a package not
  installed is left out). The report says when libtpu is not the one the spill model was fitted
  on, and the lowering applies this JAX's pipelining rules."""
  from importlib import metadata
  found = []
  for field, packages in (("jax", ("jax",)), ("jaxlib", ("jaxlib",)), ("libtpu", ("libtpu", "libtpu-nightly"))):
    for package in packages:
      try:
        found.append(f"    {field}: {_q(metadata.version(package))}")
        break
      except metadata.PackageNotFoundError:
        continue
  return ["  traced_with {", *found, "  }"] if found else []


def export_call(eqn):
  """The pallas_call equation alone, as jax.export serializes it for the TPU (StableHLO with the
  Mosaic kernel): what `simulate --confirm` hands libtpu. Exported without a target device, it
  compiles for every generation as the traced function does (libtpu 0.0.42.1: the same verdict
  and bytes, backends/tpu/testdata/confirm_expected.txt on v4-v7x); exported under a
  generation's device (jax.default_device, as bench/tpu/confirm_cli.py does for
  tests/data/tpu/export_confirm.jsonl.gz), for that generation. Needs the flatbuffers package."""
  import jax
  from jax import export
  args = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]

  def call(*operands):
    return eqn.primitive.bind(*operands, **eqn.params)

  return bytes(export.export(jax.jit(call), platforms=["tpu"])(*args).serialize())


def _bytes_literal(data):
  """A textproto bytes literal: printable ASCII as is, the rest as octal escapes."""
  out = []
  for b in data:
    c = chr(b)
    if c in '"\\':
      out.append("\\" + c)
    elif 32 <= b < 127:
      out.append(c)
    else:
      out.append(f"\\{b:03o}")
  return '"' + "".join(out) + '"'


def pallas_call_equations(fn, args):
  """The pallas_call equations of fn(*args)'s jaxpr, in call order."""
  import jax
  closed = jax.make_jaxpr(fn)(*args)
  eqns = []
  _find_pallas_calls(closed.jaxpr, eqns)
  if not eqns:
    raise ValueError("the traced function calls no pl.pallas_call")
  return eqns


def graphs_from_function(fn, args, name, export=True):
  """graph_from_eqn of every pallas_call fn(*args) makes, in call order."""
  eqns = pallas_call_equations(fn, args)
  return [graph_from_eqn(e, name if len(eqns) == 1 else f"{name}_{k}", export) for k, e in enumerate(eqns)]


def example_matmul(m=8192, n=8192, k=8192, bm=2048, bn=2048, bk=2048):
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(x_ref, y_ref, z_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)
    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
      z_ref[...] = acc_ref[...].astype(z_ref.dtype)

  def fn(x, y):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        name="matmul",
    )(x, y)

  x = jax.ShapeDtypeStruct((m, k), jnp.bfloat16)
  y = jax.ShapeDtypeStruct((k, n), jnp.bfloat16)
  return fn, (x, y)


def example_e1001(bm=2048):
  """The structure of models/graphs/tpu_e1001.pbtxt: o[bf16 2048x4096] = sum over x's axis 0."""
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl

  def kernel(x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
      o_ref[...] = jnp.zeros_like(o_ref)
    o_ref[...] += x_ref[0]

  def fn(x):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((2048, 4096), x.dtype),
        grid=(2048 // bm, 4),
        in_specs=[pl.BlockSpec((1, bm, 4096), lambda i, b: (b, i, 0))],
        out_specs=pl.BlockSpec((bm, 4096), lambda i, b: (i, 0)),
        name="my-custom-kernel",
    )(x)

  return fn, (jax.ShapeDtypeStruct((4, 2048, 4096), jnp.bfloat16),)


def example_prefetch():
  """Scalar prefetch, Buffered(1), SMEM scratch, a DMA semaphore and vmem_limit_bytes."""
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  def kernel(idx_ref, x_ref, w_ref, o_ref, acc_ref, flag_ref, sem):
    acc_ref[...] = x_ref[...].astype(jnp.float32) * w_ref[...].astype(jnp.float32)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  def fn(idx, x, w):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((1024, 512), jnp.bfloat16),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(8,),
            in_specs=[pl.BlockSpec((128, 512), lambda i, idx: (idx[i], 0)),
                      pl.BlockSpec((128, 512), lambda i, idx: (0, 0),
                                   pipeline_mode=pl.Buffered(1))],
            out_specs=pl.BlockSpec((128, 512), lambda i, idx: (i, 0)),
            scratch_shapes=[pltpu.VMEM((128, 512), jnp.float32), pltpu.SMEM((16,), jnp.int32),
                            pltpu.SemaphoreType.DMA(())]),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),
        name="gather_scale",
    )(idx, x, w)

  return fn, (jax.ShapeDtypeStruct((8,), jnp.int32), jax.ShapeDtypeStruct((1024, 512), jnp.bfloat16),
              jax.ShapeDtypeStruct((128, 512), jnp.bfloat16))
