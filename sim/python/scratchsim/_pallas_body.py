"""What a Pallas TPU kernel body holds in vector registers, read from its traced jaxpr.

Mosaic compiles the body of a `pl.pallas_call` to straight-line vector code per grid step. A
value it can stream vreg by vreg (copies, elementwise chains, a reduction into an output) costs
no VMEM beyond the blocks; a value the body must keep whole while something else runs over it
(the f32 row block of a softmax across its max and sum, the score tile of flash attention, the
result of a dot before it is added to an accumulator) is held in the 32 vector registers, and
whatever does not fit there goes to `register allocator spill slots` in scoped VMEM. The TPU
lowering (backends/tpu) estimates those spills from the figures this module reads
(`PallasBody` in proto/graph.proto, docs/graph-format.md):

  reduction_live_bytes    the most bytes of vector values defined before a reduction (reduce_max,
                          sum, min, argmax, cumsum) and used after it: what the body keeps whole
                          across a reduction (a softmax's f32 row block)
  reduction_input_bytes   the bytes all reductions of one region read: the work a scheduler may
                          interleave (attention heads written as a Python loop)
  reduction_output_bytes  the bytes all reductions of one region leave, as vregs hold them with the
                          reduced axes kept: a reduction along the lanes leaves one value per row,
                          one vreg per 8 rows (a softmax's max and sum, a layer norm's mean and
                          variance: each rows x 512 B)
  dot_bytes               the largest dot_general: its operands plus its result
  packed_dot_bytes        the same over dots of 16-, 8- or 4-bit operands (packed in vregs)
  transpose_bytes         the largest operand of a transpose of the two minor dims
  packed_transpose_bytes  the same over 16-, 8- or 4-bit operands
  transposes              every transpose of the two minor dims of 16-, 8- or 4-bit values: its
                          operand's rows (second-minor dim) and columns (minor dim), dtype, and
                          how many a grid step runs (leading dims and unrolled loops): Mosaic's
                          spills of a transpose follow its operand's shape, not its bytes
  unaligned_narrow_loads  every load of 8- or 4-bit values from a ref whose minor dim is not a
                          multiple of 128 lanes: rows (second-minor), cols (minor), dtype, and how
                          many a grid step loads (leading dims and unrolled loops): v4's Mosaic
                          widens such a value to 32 bits and holds it whole
  row_broadcast_bytes     the row vectors (1 x n) a region broadcasts down the sublanes of a block
                          (a layer norm's weight and bias): Mosaic keeps each replicated in vregs,
                          8 sublanes x n, while the block streams past it; a row already in every
                          sublane (a block's column sum) needs no relayout and is left out
  rolled_loops            loops (while, partly unrolled scans) that hold a reduction or a dot
  temporary_scratch       VMEM scratch the body writes whole before any read within one step
                          (conds on grid axes of extent 1 folded, unrolled loops in line) and
                          whose minor dimension is whole 128-lane rows: Mosaic forwards the
                          value and allocates no scratch
  arithmetic_dtypes       dtypes of elementwise arithmetic results (legality: Mosaic has no 8-bit
                          vector arithmetic in jax 0.10.2)
  dot_dtypes              dtypes of dot operands (legality: v4's MXU has no int8)
  dots                    every dot's (m, n, k) and how many times a grid step runs it (the
                          planner's flops and MXU use), and `masked_merge` where the dot's region
                          also merges a block of the dot's result shape under a mask (select_n:
                          megablox gmm writing its accumulator into its group's rows)
  vector                  the vector unit's work per grid step, in vector registers (4 KiB each,
                          as held): loads and stores of refs, ALU results (arithmetic, compares,
                          selects, broadcasts), transcendental results (exp, log, div, rsqrt, ...),
                          reduction inputs, minor-dim transpose inputs, dtype conversion results;
                          every region
                          counts, both branches of a cond included (the static schedule issues
                          both), a scan's body times its length, a while's body once

Bytes are as vector registers hold them: the two minor dims padded to (8 x 32-bit sublanes,
128 lanes), 16-bit values packed 2 and 8-bit values 4 to a 32-bit sublane. Each loop body
(scan, fori_loop, while) and each branch of control flow inside a grid step (pl.when: cond) is a
region of its own, analysed alone; a loop the kernel unrolls (unroll=k, or True) counts k times,
since the scheduler interleaves the iterations of straight-line code (flash attention's inner
loop over block_k: its figures scale with block_k_major). Each figure is the largest over the
regions.

Plain Python over a jaxpr: no TPU and no libtpu needed (tracing runs on CPU).
"""

REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
              "argmax", "argmin", "cumsum", "cummax", "cummin", "cumprod", "cumlogsumexp"}
# Reductions whose result drops the reduced dims (not the cumulative ones, which keep them).
DIM_DROPPING_REDUCTIONS = {r for r in REDUCTIONS if not r.startswith("cum")}
DOTS = {"dot_general"}
# Elementwise arithmetic (Mosaic's vector ALU ops): a result dtype here needs vector support.
ARITHMETIC = {"add", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "exp", "log", "tanh",
              "logistic", "sqrt", "rsqrt", "pow", "integer_pow", "sign", "floor", "ceil", "round",
              "and", "or", "xor", "not", "shift_left", "shift_right_logical",
              "shift_right_arithmetic", "exp2", "log1p", "expm1", "sin", "cos", "erf", "erf_inv",
              "square", "reciprocal"}
_REF_GET = {"get"}
_REF_SET = {"swap", "masked_swap"}
# The vector unit's ops by the slot they issue in (PallasVectorWork): transcendentals and
# divides go to the EUP; the rest of the elementwise work, compares, selects and broadcasts to the
# vector ALUs; dtype conversions are counted apart (packing and unpacking 16- and 8-bit values
# costs differently per generation).
TRANSCENDENTAL = {"exp", "log", "tanh", "logistic", "sqrt", "rsqrt", "pow", "exp2", "log1p", "expm1",
                  "sin", "cos", "erf", "erf_inv", "reciprocal", "div"}
COMPARES_AND_SELECTS = {"lt", "le", "gt", "ge", "eq", "ne", "select_n", "clamp"}
VECTOR_ALU = (ARITHMETIC - TRANSCENDENTAL) | COMPARES_AND_SELECTS | {"broadcast_in_dim", "iota"}
# Elementwise ops over whole blocks: a (1, n) operand of one is replicated down the sublanes.
ELEMENTWISE = ARITHMETIC | COMPARES_AND_SELECTS
VECTOR_FIGURES = ("loads", "stores", "alu", "transcendental", "reductions", "transposes", "converts")
VREG_BYTES = 4096  # 8 sublanes x 128 lanes x 32 bits
# Replicated layouts by the axes they replicate ("s": sublanes, "l": lanes), as value types name them.
_REPLICATED = {"sublanes": {"s"}, "lanes": {"l"}, "sublanes and lanes": {"s", "l"}}

_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
          "int16": "i16", "int8": "i8", "int4": "i4", "uint32": "u32", "uint16": "u16",
          "uint8": "u8", "bool": "i1", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}


def _dtype_name(dtype):
  return _NAMES.get(str(dtype), str(dtype))


def _bits(dtype):
  name = str(dtype)
  if name == "bool":
    return 32  # a vmask register per (8, 128) tile
  for b in (64, 32, 16, 8, 4):
    if name.endswith(str(b)) or (b == 8 and "float8" in name):
      return b
  try:
    import numpy as np
    return np.dtype(dtype).itemsize * 8
  except Exception:  # pylint: disable=broad-except
    return 32


def vreg_bytes(aval, replicated=None):
  """Bytes of a vector value as Mosaic holds it in vregs (0 for scalars and refs). A value whose
  layout replicates its sublanes (or lanes) holds one vreg per tile along the other axis."""
  shape = getattr(aval, "shape", None)
  dtype = getattr(aval, "dtype", None)
  if shape is None or dtype is None or len(shape) == 0 or _is_ref(aval):
    return 0
  bits = _bits(dtype)
  packing = max(1, 32 // bits)
  if len(shape) == 1:
    n = -(-shape[0] // (128 * packing)) * 128 * packing
    return n * bits // 8
  *lead, r, c = shape
  axes = _REPLICATED.get(replicated, set())
  r = 1 if "s" in axes else r
  c = 1 if "l" in axes else c
  rows = 8 * packing
  n = -(-r // rows) * rows * (-(-c // 128) * 128)
  for d in lead:
    n *= d
  return n * bits // 8


def _is_ref(aval):
  return type(aval).__name__ in ("AbstractRef", "TransformedRef") or hasattr(aval, "inner_aval")


def _sub_jaxprs(eqn):
  """(kind, [jaxpr], repeat, rolled) of an equation that contains code; rolled: a loop that
  runs more iterations than it unrolls."""
  name = eqn.primitive.name
  p = eqn.params
  if name == "cond":
    return "branches", [getattr(b, "jaxpr", b) for b in p["branches"]], 1, False
  if name == "scan":
    body = getattr(p["jaxpr"], "jaxpr", p["jaxpr"])
    unroll = p.get("unroll", 1)
    length = int(p.get("length", 1))
    if unroll is True:
      unroll = length
    return "loop", [body], max(1, min(int(unroll or 1), length)), int(unroll or 1) < length
  if name == "while":
    return "loop", [getattr(p["body_jaxpr"], "jaxpr", p["body_jaxpr"])], 1, True
  for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
    if key in p:
      sub = getattr(p[key], "jaxpr", p[key])
      if hasattr(sub, "eqns"):
        return "inline", [sub], 1, False
  return None, [], 1, False


class _Region:
  """A straight-line sequence of operations over value ids, for liveness."""

  def __init__(self):
    self.ops = []        # (primitive name, [in ids], [out ids], eqn)
    self.bytes = {}      # value id -> vreg bytes
    self.aval = {}
    self.replicated = {}  # value id -> a key of _REPLICATED: the axes Mosaic's layout replicates
    self.next_id = 0
    self.multiplier = 1  # how many copies of this code run interleaved (an unrolled loop)
    self.runs = 1        # how many times a grid step runs this code (a scan's length)
    self.rolled = False  # inside a loop that is not unrolled (a while, a partly unrolled scan)
    self.branch_of = None  # a branch of a cond: the cond's id
    self.parent = None     # the region whose loop or cond op runs this one, and that op's index
    self.at_op = None

  def new_value(self, aval, replicated=None):
    i = self.next_id
    self.next_id += 1
    self.bytes[i] = vreg_bytes(aval, replicated)
    self.aval[i] = aval
    if replicated:
      self.replicated[i] = replicated
    return i


def _replicated_word(axes):
  """The key of _REPLICATED that names `axes`, or None for no axis."""
  return next((word for word, named in _REPLICATED.items() if named == set(axes)), None)


def _replicated_result(region, eqn, ins):
  """Which axes Mosaic's layout of `eqn`'s result replicates ("sublanes", "lanes", "sublanes and
  lanes"), or None (Mosaic's infer_vector_layout): an iota along the minor dim is the same in every
  sublane, one along the second-minor in every lane; a broadcast replicates each of the two minor
  dims it expands (a scalar both); an elementwise op or convert keeps what its operands share, an
  operand replicated on both axes constraining nothing."""
  name = eqn.primitive.name
  out = eqn.outvars[0].aval if len(eqn.outvars) == 1 else None
  shape = tuple(getattr(out, "shape", ()))
  shape_of = lambda i: tuple(getattr(region.aval.get(i), "shape", ()))
  axes_of = lambda i: _REPLICATED.get(region.replicated.get(i), set())
  if len(shape) == 1:
    return _replicated_row(name, eqn, ins, shape_of, axes_of)
  if len(shape) < 2:
    return None
  rank = len(shape)
  if name == "iota":
    return {rank - 1: "sublanes", rank - 2: "lanes"}.get(eqn.params.get("dimension"))
  if name == "broadcast_in_dim":
    src = ins[0] if ins else None
    src_shape = shape_of(src) if src is not None else ()
    dims = tuple(eqn.params.get("broadcast_dimensions", ()))
    axes = set()
    for axis, res_dim, src_minor in (("s", rank - 2, len(src_shape) - 2), ("l", rank - 1, len(src_shape) - 1)):
      src_dim = dims.index(res_dim) if res_dim in dims else None
      if shape[res_dim] > 1 and (src_dim is None or src_shape[src_dim] == 1):
        axes.add(axis)
      elif src_dim is not None and src_dim == src_minor and axis in axes_of(src):
        axes.add(axis)
      elif src_dim is None and axis == "s" and len(src_shape) == 1 and "s" in axes_of(src):
        axes.add(axis)  # a row reduced over its block's sublanes, made (1, n): still in every sublane
    return _replicated_word(axes)
  if name in ("reshape", "squeeze") and len(shape) == 2 and shape[0] == 1 and ins:
    src = ins[0]
    return "sublanes" if shape_of(src) == shape[1:] and "s" in axes_of(src) else None
  if name not in ELEMENTWISE and name != "convert_element_type":
    return None
  vectors = [i for i in ins if shape_of(i) != ()]
  if not vectors or any(len(shape_of(i)) != rank for i in vectors):
    return None

  def operand_axes(i):
    # an operand of size 1 in a minor dim the result spans is broadcast there, as by broadcast_in_dim
    own = set(axes_of(i))
    own |= {"s"} if shape_of(i)[-2] == 1 and shape[-2] > 1 else set()
    own |= {"l"} if shape_of(i)[-1] == 1 and shape[-1] > 1 else set()
    return own
  constraining = [a for a in map(operand_axes, vectors) if a != {"s", "l"}]
  return _replicated_word(set.intersection(*constraining) if constraining else {"s", "l"})


def _replicated_row(name, eqn, ins, shape_of, axes_of):
  """"sublanes" where a one-dim value is a block reduced over its sublanes, or computed from such
  values alone; else None. Mosaic's infer_vector_layout lays out a vector.multi_reduction's result
  with each reduced dim's offset replicated, the result's implicit dim the second-minor one: the
  column sum of an (R, n) block is already in every sublane, and broadcasting it down a block needs
  no relayout (docs/tpu.md, "Held-out families"). The mark is the tracer's; a one-dim value's type
  does not carry it."""
  if name in DIM_DROPPING_REDUCTIONS:
    src = shape_of(ins[0]) if ins else ()
    return "sublanes" if len(src) == 2 and tuple(eqn.params.get("axes", ())) == (0,) else None
  if name in ("reshape", "squeeze") and ins:
    return "sublanes" if len(shape_of(ins[0])) == 2 and shape_of(ins[0])[0] == 1 and "s" in axes_of(ins[0]) else None
  if name not in ELEMENTWISE and name != "convert_element_type":
    return None
  vectors = [i for i in ins if shape_of(i) != ()]
  if vectors and all(len(shape_of(i)) == 1 and "s" in axes_of(i) for i in vectors):
    return "sublanes"
  return None


def _loop_consts(eqn):
  """How many of a loop body's leading inputs are loop-invariant operands (scan consts, a while
  body's consts)."""
  p = eqn.params
  return int(p.get("num_consts", p.get("body_nconsts", 0)) or 0)


def _loop_operands(eqn, ins):
  """The outer value ids a loop body's inputs take, in order (None where the operand is a
  literal); a while's cond consts come first in its operands and are skipped."""
  ids = iter(ins)
  outer = [None if hasattr(v, "val") else next(ids, None) for v in eqn.invars]
  if eqn.primitive.name == "while":
    outer = outer[int(eqn.params.get("cond_nconsts", 0) or 0):]
  return outer


def _flatten(jaxpr, region, env, regions, depth=0):
  """Appends `jaxpr`'s equations to `region` (env: jaxpr var -> value id); cond branches become
  regions of their own (appended to `regions`)."""
  def read(v):
    if hasattr(v, "val"):  # a literal
      return None
    if v not in env:
      env[v] = region.new_value(v.aval)
    return env[v]

  for eqn in jaxpr.eqns:
    kind, subs, repeat, rolled = _sub_jaxprs(eqn)
    ins = [i for i in (read(v) for v in eqn.invars) if i is not None]
    if kind == "inline" and depth < 50:
      inner = dict(zip(subs[0].invars, [None if hasattr(v, "val") else env.get(v) for v in eqn.invars]))
      inner = {k: v for k, v in inner.items() if v is not None}
      _flatten(subs[0], region, inner, regions, depth + 1)
      for ov, iv in zip(eqn.outvars, subs[0].outvars):
        env[ov] = inner.get(iv) if not hasattr(iv, "val") else region.new_value(ov.aval)
        if env[ov] is None:
          env[ov] = region.new_value(ov.aval)
      continue
    if kind == "loop" and depth < 50:
      # The body is a region of its own, counted `repeat` times: an unrolled loop's iterations
      # are straight-line code the scheduler interleaves, so their values are live together.
      body = subs[0]
      sub_region = _Region()
      sub_region.multiplier = region.multiplier * repeat
      sub_region.runs = region.runs * (int(eqn.params.get("length", 1)) if eqn.primitive.name == "scan" else 1)
      sub_region.rolled = region.rolled or rolled
      sub_region.parent, sub_region.at_op = region, len(region.ops)  # the loop op's index, appended below
      consts = _loop_consts(eqn)
      outer = _loop_operands(eqn, ins)
      # the consts lead both the body's inputs and the loop's operands
      sub_env = {var: sub_region.new_value(var.aval, region.replicated.get(outer[k]) if k < consts else None)
                 for k, var in enumerate(body.invars)}
      regions.append((sub_region, body, sub_env))
      _flatten(body, sub_region, sub_env, regions, depth + 1)
    elif kind == "branches" and depth < 50:
      for br in subs:
        sub_region = _Region()
        sub_region.multiplier = region.multiplier
        sub_region.runs = region.runs
        sub_region.rolled = region.rolled
        sub_region.branch_of = id(eqn)  # one branch of this cond runs per step
        sub_region.parent, sub_region.at_op = region, len(region.ops)
        sub_env = {}
        # outer values enter a branch as fresh values (their outer liveness stays outside)
        for var, v in zip(br.invars, eqn.invars[1:]):
          sub_env[var] = sub_region.new_value(var.aval)
        regions.append((sub_region, br, sub_env))
        _flatten(br, sub_region, sub_env, regions, depth + 1)
    replicated = _replicated_result(region, eqn, ins) if kind is None else None
    outs = [region.new_value(v.aval, replicated) for v in eqn.outvars]
    for ov, i in zip(eqn.outvars, outs):
      env[ov] = i
    region.ops.append((eqn.primitive.name, ins, outs, eqn))


def _live_across(region, positions):
  """For each position p in `positions`: bytes of values defined before p and used after it."""
  defined = {}
  last_use = {}
  for pos, (_, ins, outs, _) in enumerate(region.ops):
    for i in ins:
      last_use[i] = pos
      defined.setdefault(i, -1)  # an input of the region: defined before everything
    for o in outs:
      defined[o] = pos
  out = {}
  for p in positions:
    total = 0
    for v, d in defined.items():
      if d < p and last_use.get(v, -1) > p:
        total += region.bytes.get(v, 0)
    out[p] = total
  return out


def _ref_full(eqn):
  """Whether a get/swap reads or writes the whole ref: the value has the ref's elements (no
  indexers, full slices, or integer indices into unit dimensions only)."""
  ref = eqn.invars[0].aval
  inner = getattr(ref, "inner_aval", ref)
  val = eqn.outvars[0].aval
  size = lambda shape: int(__import__("math").prod(shape)) if shape else 1
  return size(tuple(getattr(inner, "shape", ()))) == size(tuple(getattr(val, "shape", ())))


_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
            "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _ref_accesses(jaxpr, alias, known, grid, out, depth=0):
  """Appends, per scratch index, its accesses in execution order ("write", "read", "other")
  to out, following the code one grid step runs: a cond whose index is known folds to its
  branch (program_id of a grid axis of extent 1 is 0, as Mosaic folds it), an unrolled scan and
  inlined calls run in line; an access inside a region that cannot be followed so is "other".
  alias: jaxpr var -> scratch index; known: jaxpr var -> constant value."""
  def value(v):
    return v.val if hasattr(v, "val") else known.get(v)

  def inner_maps(sub, operands):
    a, k = {}, {}
    for sv, ov in zip(sub.invars, operands):
      if hasattr(ov, "val"):
        k[sv] = ov.val
      elif ov in alias:
        a[sv] = alias[ov]
      elif ov in known:
        k[sv] = known[ov]
    return a, k

  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    touched = [alias[v] for v in eqn.invars if not hasattr(v, "val") and v in alias]
    if name == "program_id":
      axis = eqn.params.get("axis")
      if grid is not None and axis is not None and axis < len(grid) and grid[axis] == 1:
        known[eqn.outvars[0]] = 0
      continue
    if name in _COMPARE and len(eqn.invars) == 2 and all(value(v) is not None for v in eqn.invars):
      known[eqn.outvars[0]] = bool(_COMPARE[name](value(eqn.invars[0]), value(eqn.invars[1])))
      continue
    if name == "convert_element_type" and value(eqn.invars[0]) is not None:
      known[eqn.outvars[0]] = int(value(eqn.invars[0]))
      continue
    kind, subs, repeat, rolled = _sub_jaxprs(eqn)
    if kind == "branches" and depth < 50:
      index = value(eqn.invars[0])
      if index is None:
        for k in touched:
          out[k].append("other")
        continue
      branch = subs[max(0, min(int(index), len(subs) - 1))]
      a, k = inner_maps(branch, eqn.invars[1:])
      _ref_accesses(branch, a, k, grid, out, depth + 1)
      continue
    if kind == "loop" and depth < 50:
      if name != "scan" or rolled:
        for k in touched:
          out[k].append("other")
        continue
      consts = int(eqn.params.get("num_consts", 0))
      a, k = inner_maps(subs[0], eqn.invars)
      k = {sv: c for sv, c in k.items() if sv in subs[0].invars[:consts]}  # carries change
      _ref_accesses(subs[0], a, k, grid, out, depth + 1)
      continue
    if kind == "inline" and depth < 50:
      a, k = inner_maps(subs[0], eqn.invars)
      _ref_accesses(subs[0], a, k, grid, out, depth + 1)
      continue
    if touched and name in ("swap", "get") and eqn.invars[0] in alias:
      full = _ref_full(eqn)
      out[alias[eqn.invars[0]]].append(("write" if name == "swap" else "read") if full else "other")
      touched = touched[1:]
    for k in touched:
      out[k].append("other")


def _temporary_scratch(body, scratch_invars, grid=None):
  """Scratch refs whose first access in the code of one grid step is a whole write and whose
  every later access is a whole read or write, with no access in a region that code does not
  follow (a rolled loop, a cond on a value that changes across the grid), and whose minor
  dimension fills whole 128-lane rows: Mosaic forwards the stored values and allocates nothing.
  (A 64-wide f32 accumulator in the same position stays allocated: libtpu 0.0.42.1, flash
  attention with one kv step, docs/tpu.md.)"""
  alias = {ref: k for k, ref in enumerate(scratch_invars)}
  out = {k: [] for k in alias.values()}
  _ref_accesses(body, alias, {}, grid, out)
  temporary = []
  for k, ref in enumerate(scratch_invars):
    inner = getattr(ref.aval, "inner_aval", ref.aval)
    shape = tuple(getattr(inner, "shape", ()))
    accesses = out[k]
    if (accesses and accesses[0] == "write" and all(a in ("write", "read") for a in accesses)
        and shape and shape[-1] % 128 == 0):
      temporary.append(k)
  return temporary


class _Value:
  """A vector value's shape and dtype (what vreg_bytes reads of an aval)."""

  def __init__(self, shape, dtype):
    self.shape, self.dtype = shape, dtype


def _reduction_result_bytes(eqn):
  """What one reduction leaves in vregs: its result with the reduced axes kept as 1 (Mosaic's
  layout of a lane reduction is a column, one value per row, 8 rows to a vreg). Cumulative ops
  (cumsum, ...), which keep the shape, leave nothing beyond their input's size: 0."""
  axes = eqn.params.get("axes")
  operand = getattr(eqn.invars[0], "aval", None) if eqn.invars else None
  shape = getattr(operand, "shape", None)
  if axes is None or shape is None or not eqn.outvars:
    return 0
  kept = tuple(1 if i in tuple(axes) else d for i, d in enumerate(shape))
  result = eqn.outvars[0].aval
  return vreg_bytes(_Value(kept, result.dtype))


def _dot_shape(eqn):
  """(m, n, k, batch) of a dot_general: its free lhs dims, free rhs dims, contracted dims, batch."""
  try:
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
  except Exception:  # pylint: disable=broad-except
    return None
  prod = lambda dims: int(__import__("math").prod(dims)) if dims else 1
  m = prod([d for i, d in enumerate(lhs) if i not in lc and i not in lb])
  n = prod([d for i, d in enumerate(rhs) if i not in rc and i not in rb])
  k = prod([lhs[i] for i in lc])
  batch = prod([lhs[i] for i in lb])
  return m, n, k, batch


def summarize(pallas_eqn):
  """The PallasBody figures of one pallas_call equation (a dict; see the module doc)."""
  body = pallas_eqn.params["jaxpr"]
  body = getattr(body, "jaxpr", body)
  main = _Region()
  env = {}
  regions = [(main, body, env)]
  _flatten(body, main, env, regions)

  live_red = reduced = red_out = dot = packed_dot = transpose = packed_transpose = row_broadcast = 0
  arith, dots = set(), set()
  transposes = {}  # (rows, cols, dtype) of a packed minor-dim transpose's operand -> count per step
  narrow_loads = {}  # (rows, cols, dtype) of an 8/4-bit load of unaligned width -> count per step
  vector = dict.fromkeys(VECTOR_FIGURES, 0)
  rolled_work = 0
  branch_dots = {}  # (cond id or None, region id) -> {(m, n, k): count per grid step}
  for region, _, _ in regions:
    red_pos = [p for p, op in enumerate(region.ops) if op[0] in REDUCTIONS]
    dot_pos = [p for p, op in enumerate(region.ops) if op[0] in DOTS]
    across = _live_across(region, red_pos)
    k = region.multiplier
    if region.rolled and (red_pos or dot_pos):
      rolled_work += 1
    for p in red_pos:
      live_red = max(live_red, k * across[p])
    reduced = max(reduced, k * sum(region.bytes.get(i, 0) for p in red_pos for i in region.ops[p][1]))
    red_out = max(red_out, k * sum(_reduction_result_bytes(region.ops[p][3]) for p in red_pos))
    rows_seen = {}  # row vectors broadcast down the sublanes: jaxpr variable id -> vreg bytes
    # blocks the region merges under a mask (select_n: megablox gmm's store of the accumulator
    # into the rows of its group): a dot of that result shape is `masked_merge`
    merged_shapes = {tuple(eqn.outvars[0].aval.shape) for name, _, _, eqn in region.ops
                     if name == "select_n" and len(getattr(eqn.outvars[0].aval, "shape", ())) >= 2}
    for name, ins, outs, eqn in region.ops:
      figure = _vector_figure(name, eqn)
      if figure:
        values = ins if figure in ("reductions", "transposes") else outs
        vector[figure] += region.runs * sum(region.bytes.get(i, 0) for i in values)
      if name == "broadcast_in_dim" or name in ELEMENTWISE:
        # by broadcast_in_dim, or implicitly as an operand of an elementwise op against a block
        # (Pallas keeps rank-equal broadcasting implicit): arithmetic, and a compare or select as
        # well (a one-hot's segment ids against an iota: tests/data/tpu/heldout_families.jsonl.gz,
        # segment_sum on v4); one variable counted once; a row already in every sublane (a block's
        # column sum) needs no relayout and is not counted
        shape_out = tuple(getattr(eqn.outvars[0].aval, "shape", ()))
        for v, i in zip([v for v in eqn.invars if not hasattr(v, "val")], ins):
          shape_in = tuple(getattr(getattr(v, "aval", None), "shape", ()))
          if (len(shape_in) >= 2 and len(shape_in) == len(shape_out) and shape_in[-2] == 1 and shape_out[-2] > 1
              and shape_in[-1] == shape_out[-1] and shape_in[-1] > 1 and "s" not in _REPLICATED.get(region.replicated.get(i), set())):
            rows_seen[id(v)] = vreg_bytes(v.aval)
      if name in DOTS:
        mnk = _dot_shape(eqn)
        if mnk:
          # one branch of a cond runs per step: its dots are counted per branch, the largest kept
          key = (region.branch_of, id(region))
          per = branch_dots.setdefault(key, {})
          shape = mnk[:3] + (tuple(eqn.outvars[0].aval.shape) in merged_shapes,)
          per[shape] = per.get(shape, 0) + k * mnk[3]
        b = k * (sum(region.bytes.get(o, 0) for o in outs) + sum(region.bytes.get(i, 0) for i in ins))
        dot = max(dot, b)
        operand_bits = [_bits(v.aval.dtype) for v in eqn.invars if getattr(getattr(v, "aval", None), "shape", None)]
        if operand_bits and min(operand_bits) < 32:
          packed_dot = max(packed_dot, b)
        for v in eqn.invars:
          if hasattr(v, "aval") and getattr(v.aval, "shape", None):
            dots.add(_dtype_name(v.aval.dtype))
      elif name == "transpose":
        perm = tuple(eqn.params.get("permutation", ()))
        if len(perm) >= 2 and perm[-2:] != (len(perm) - 2, len(perm) - 1):
          b = k * sum(region.bytes.get(i, 0) for i in ins)
          transpose = max(transpose, b)
          if _bits(eqn.invars[0].aval.dtype) < 32:
            packed_transpose = max(packed_transpose, b)
            shape = tuple(eqn.invars[0].aval.shape)
            key = (shape[-2], shape[-1], _dtype_name(eqn.invars[0].aval.dtype))
            transposes[key] = transposes.get(key, 0) + k * int(__import__("math").prod(shape[:-2]))
      elif name in _REF_GET:
        aval = eqn.outvars[0].aval
        shape = tuple(getattr(aval, "shape", ()))
        if len(shape) >= 2 and _bits(aval.dtype) < 16 and shape[-1] % 128:
          key = (shape[-2], shape[-1], _dtype_name(aval.dtype))
          narrow_loads[key] = narrow_loads.get(key, 0) + k * int(__import__("math").prod(shape[:-2]))
      if name in ARITHMETIC:
        for v in eqn.outvars:
          if getattr(v.aval, "shape", None):
            arith.add(_dtype_name(v.aval.dtype))
    row_broadcast = max(row_broadcast, k * sum(rows_seen.values()))

  dot_shapes = {}  # (m, n, k, masked_merge) -> count per grid step
  best_branch = {}  # cond id -> the branch region with the most flops (of equal ones, a masked one)
  weight = lambda d: (sum(2 * m * n * kk * c for (m, n, kk, _), c in d.items()), sum(mk for *_, mk in d))
  for (cond, rid), d in branch_dots.items():
    if cond is None:
      for key, c in d.items():
        dot_shapes[key] = dot_shapes.get(key, 0) + c
    elif cond not in best_branch or weight(d) > weight(best_branch[cond]):
      best_branch[cond] = d
  for d in best_branch.values():
    for key, c in d.items():
      dot_shapes[key] = dot_shapes.get(key, 0) + c

  gm = pallas_eqn.params["grid_mapping"]
  n_scratch = len(getattr(gm, "scratch_avals", ()))
  scratch_invars = body.invars[len(body.invars) - n_scratch:] if n_scratch else []
  temporary = _temporary_scratch(body, scratch_invars, tuple(getattr(gm, "grid", ()) or ()))
  return {
      "reduction_live_bytes": live_red,
      "reduction_input_bytes": reduced,
      "reduction_output_bytes": red_out,
      "dot_bytes": dot,
      "packed_dot_bytes": packed_dot,
      "transpose_bytes": transpose,
      "packed_transpose_bytes": packed_transpose,
      "row_broadcast_bytes": row_broadcast,
      "rolled_loops": rolled_work,
      "temporary_scratch": [f"scratch{k}" for k in temporary],
      "arithmetic_dtypes": sorted(arith),
      "dot_dtypes": sorted(dots),
      "dots": [dict({"m": m, "n": n, "k": kk, "count": c}, **({"masked_merge": True} if masked else {}))
               for (m, n, kk, masked), c in sorted(dot_shapes.items())],
      "transposes": [{"rows": r, "cols": c, "dtype": dt, "count": n} for (r, c, dt), n in sorted(transposes.items())],
      "unaligned_narrow_loads": [{"rows": r, "cols": c, "dtype": dt, "count": n}
                                 for (r, c, dt), n in sorted(narrow_loads.items())],
      # in vregs, rounded up: a figure is whole vector instructions
      "vector": {k: -(-v // VREG_BYTES) for k, v in vector.items()},
      "program": [_region_program(region, {id(r): i for i, (r, _, _) in enumerate(regions)})
                  for region, _, _ in regions],
  }


def _value_type(aval, replicated=None):
  """A value's type as PallasRegion.values writes it: "f32[256,512]", "i32[]", or "ref"; a
  replicated layout follows ("i32[128,1024]{sublanes replicated}")."""
  if aval is None or _is_ref(aval) or getattr(aval, "dtype", None) is None:
    return "ref"
  word = f"{_dtype_name(aval.dtype)}[{','.join(str(int(d)) for d in getattr(aval, 'shape', ()))}]"
  return f"{word}{{{replicated} replicated}}" if replicated and len(getattr(aval, "shape", ())) >= 2 else word


def _op_axes(name, eqn):
  """PallasOp.axes: a reduction's axes, a transpose's permutation, a cumulative op's axis."""
  p = eqn.params
  if name == "transpose":
    return [int(a) for a in p.get("permutation", ())]
  if "axes" in p and p["axes"] is not None:
    return [int(a) for a in p["axes"]]
  if "axis" in p and isinstance(p["axis"], int):
    return [int(p["axis"])]
  return []


def _op_starts(name, eqn):
  """PallasOp.start_indices: a slice's start in each dim (its result's layout offset); empty for
  a strided slice, whose result gathers elements rather than keeping its operand's vregs."""
  strides = eqn.params.get("strides") if name == "slice" else None
  if name != "slice" or (strides is not None and any(int(s) != 1 for s in strides)):
    return []
  return [int(s) for s in eqn.params.get("start_indices", ())]


def _region_program(region, index):
  """One region of the body's vector program (PallasRegion, proto/graph.proto); index: id of a
  region -> its position in the program."""
  parent = index.get(id(region.parent)) if region.parent is not None else None
  return {"unrolled": region.multiplier, "rolled": region.rolled, "parent": parent, "at_op": region.at_op,
          "values": [_value_type(region.aval.get(i), region.replicated.get(i)) for i in range(region.next_id)],
          "ops": [(name, ins, outs, _op_axes(name, eqn), _op_starts(name, eqn))
                  for name, ins, outs, eqn in region.ops]}


def _vector_figure(name, eqn):
  """Which PallasVectorWork figure an operation adds to (None: not vector-unit work)."""
  if name in _REF_GET:
    return "loads"
  if name in _REF_SET:
    return "stores"
  if name in REDUCTIONS:
    return "reductions"
  if name in TRANSCENDENTAL:
    return "transcendental"
  if name == "convert_element_type":
    return "converts"
  if name in VECTOR_ALU:
    return "alu"
  if name == "transpose":
    perm = tuple(eqn.params.get("permutation", ()))
    return "transposes" if len(perm) >= 2 and perm[-2:] != (len(perm) - 2, len(perm) - 1) else None
  return None


def body_textproto(summary, indent="  "):
  """The `body { ... }` lines of a PallasCall textproto."""
  q = lambda s: '"' + str(s) + '"'
  lines = [f"{indent}body {{"]
  for key in ("reduction_live_bytes", "reduction_input_bytes", "reduction_output_bytes", "dot_bytes", "packed_dot_bytes",
              "transpose_bytes", "packed_transpose_bytes", "row_broadcast_bytes"):
    if summary.get(key):
      lines.append(f"{indent}  {key}: {q(summary[key])}")  # expressions
  if summary.get("rolled_loops"):
    lines.append(f"{indent}  rolled_loops: {int(summary['rolled_loops'])}")
  for key in ("temporary_scratch", "arithmetic_dtypes", "dot_dtypes"):
    for v in summary.get(key, ()):
      lines.append(f"{indent}  {key}: {q(v)}")
  for d in summary.get("dots", ()):
    masked = " masked_merge: true" if d.get("masked_merge") else ""
    lines.append(f"{indent}  dots {{ m: {q(d['m'])} n: {q(d['n'])} k: {q(d['k'])} count: {q(d['count'])}{masked} }}")
  for field in ("transposes", "unaligned_narrow_loads"):
    for t in summary.get(field, ()):
      lines.append(f"{indent}  {field} {{ rows: {q(t['rows'])} cols: {q(t['cols'])} dtype: {q(t['dtype'])} "
                   f"count: {q(t['count'])} }}")
  work = {k: v for k, v in summary.get("vector", {}).items() if v}
  if work:
    lines.append(f"{indent}  vector {{ " + " ".join(f"{k}: {q(v)}" for k, v in work.items()) + " }")
  for region in summary.get("program", ()):
    lines.append(f"{indent}  program {{")
    if region["unrolled"] > 1:
      lines.append(f"{indent}    unrolled: {int(region['unrolled'])}")
    if region["rolled"]:
      lines.append(f"{indent}    rolled: true")
    if region.get("parent") is not None:
      lines.append(f"{indent}    parent: {int(region['parent'])} at_op: {int(region['at_op'])}")
    lines += [f"{indent}    values: {q(v)}" for v in region["values"]]
    for name, ins, outs, axes, starts in region["ops"]:
      fields = [f"op: {q(name)}"] + [f"operands: {i}" for i in ins] + [f"results: {o}" for o in outs]
      fields += [f"axes: {a}" for a in axes] + [f"start_indices: {s}" for s in starts]
      lines.append(f"{indent}    ops {{ {' '.join(fields)} }}")
    lines.append(f"{indent}  }}")
  lines.append(f"{indent}}}")
  return lines
