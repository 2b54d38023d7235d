#!/usr/bin/env python3
"""Where libtpu's register pressure P comes from, pass by pass of its LLO pipeline, and whether a
list scheduler over the kernel's vreg ops reproduces it (docs/tpu.md, "Where P comes from: LLO's
schedulers").

For each kernel of probe_vreg_alloc.KERNELS (dev families only, never a held-out one) it compiles
with the LLO text dump on and reads, from the kernel's dump files (`<id>-<kernel>-NN-<pass>.txt`):
  original                          Mosaic's program, each vector op unrolled over its vregs;
  DGO-post-critical-path-scheduler  LLO's first scheduler: each basic block reordered (linear);
  DGO-vliw-packed-bundles           the VLIW bundle scheduler's bundles, over that order;
  DGO-post-rematerialization        the same order with some loads issued again near later uses;
  register-pressure                 "Register pressure for vregs is P";
  the pass listed just before it    the linear program P is measured on.
It writes one JSON object a line:
  live: the most vreg values live at once (a value from its definition to its last use, in the
    listing's order) over each of those listings: mosaic, pre_cp (the critical-path scheduler's
    input), cp, vliw, pre_pressure;
  live_remat: the same for cp and vliw with every loaded value re-loaded before a use that comes
    more than REMAT_GAP ops after its previous use (the rematerialization rule below), and for
    pre_vliw, the listing the bundle scheduler reads (the critical-path scheduler's order after
    the passes between them: load CSE, load/store optimization, reassociation, late decomposition);
  remat_loads: the vld the rematerialization pass adds (and that it changes nothing else);
  critical_path: the longest latency path of any block, as LLO's critical-path.txt gives it
    ("Length to end") and as the dependence graph below with the measured machine gives it;
  models: the most values live in the order each candidate scheduler gives the critical-path
    scheduler's input (its ops in their program order, each block's dependences: registers,
    memory, each XLU/MXU unit's FIFOs), loads rematerialized as above:
      list_cp    a cycle-driven top-down list scheduler with the generation's bundle slots and
                 latencies (measured from the probe's own VLIW bundles: `machine` rows) and the
                 longest latency path to the block's end as priority;
      serial_cp  the same issuing one op a cycle;
      serial_rp  the same, but once the live values fill the register file the op that leaves the
                 fewest live first;
      demand     each sink (an op nothing in the block reads) in program order, after its
                 not-yet-emitted operands, depth first;
      jit        just in time (just_in_time_order): unit ops, stores, barriers and scalar ops
                 taken by priority, each right after the loads and arithmetic it needs, the
                 ops that add no live value at once, a unit's pop followed by its chain; memory
                 ordered by address;
      jit_bundled  that order packed into VLIW bundles from a window of BUNDLE_WINDOW ops, in
                 order; jit_bundled_cp the same taking the longest path first in the window;
      llo_order_bundled, llo_order_bundled_cp  the critical-path scheduler's own order packed
                 the same two ways;
      jit_lat, jit_lat_bundled_cp  jit and jit_bundled_cp with a priority whose longest path
                 counts each step of a unit's FIFO as one cycle;
      llo_order_sunk, jit_sunk, jit_lat_sunk  the critical-path scheduler's own order, jit's and
                 jit_lat's packed in order from the window, then each load moved to the latest
                 cycle its readers allow (sink_loads: what LLO's bundles do with loads);
      llo_order_listed, jit_listed  the same packed from the whole block, not a window (LLO's
                 bundles reach thousands of ops ahead);
      jit_sources_sunk, jit_lat_sources_sunk, llo_order_sources_sunk  jit's, jit_lat's and the
                 critical-path scheduler's own order packed in order from a window of
                 SOURCE_WINDOW ops, then every op fed by loads alone (source_ops: loads and the
                 vector ops over them) moved to the latest bundle before its first reader with
                 room for it (what LLO's bundles do: source_lead);
      jit_lat_bound, jit_lat_bound_bundled_cp, jit_lat_bound_sources_sunk  jit_lat and its two
                 packings with each unit's pushes waiting under in_flight_bound (at most
                 ceil(latency / occupancy) results in flight on a unit);
  xlu_in_flight: the most lane reductions each XLU holds in flight in the critical-path scheduler's
    order (unit_in_flight);
  source_lead: where LLO's bundles put the vector ops fed by loads alone (bundles before their first
    reader) against the other pulled vector ops (bundles after their operands; source_lead);
  bundle_moves: what LLO's bundle scheduler does to the critical-path scheduler's order (medians:
    bundles from a load to its first use, from a store's or XLU push's operand to it, places each
    class moves, and how far past the oldest op not yet issued a bundle reaches: bundle_moves).
Lines with "machine" give, per generation, the most ops of each slot class one VLIW bundle holds
(bundles of more than 24 ops, a block's initialization stores, left out), the smallest
definition-to-use distance in bundles of each vector op family (unit number dropped) and the
smallest distance from one op to the next on the same XLU/MXU unit (occupancy).

  ALLOW_MULTIPLE_LIBTPU_LOAD=1 JAX_PLATFORMS=cpu nice -n 10 /tmp/venv-tpu/bin/python \\
      bench/tpu/probe_llo_schedule.py tests/data/tpu/llo_schedule_probe.txt [--keep DIR]
  ... probe_llo_schedule.py OUT --from DIR     (analyse dumps a --keep run left; no libtpu)

The dumps are tens of MB a compile; --keep keeps the passes read here.
"""
import collections
import datetime
import glob
import heapq
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_vreg_alloc import KERNELS, register_pressure  # noqa: E402  (no jax at import)

# A loaded value whose next use is more than this many ops of the listing after its previous use is
# loaded again there (LLO's rematerialization pass; the figure that reproduces it: docs/tpu.md).
REMAT_GAP = 500
# Vector registers per generation (the physical registers the allocated LLO names:
# tests/data/tpu/vreg_alloc_probe.txt).
REGISTER_FILE = {"v4": 32, "v5e": 64, "v5p": 64, "v6e": 64, "v7x": 64}
# Passes read from a kernel's dump (by name; their numbers differ between kernels).
PASSES = ("original", "DGO-post-critical-path-scheduler", "DGO-vliw-packed-bundles",
          "DGO-post-rematerialization", "register-pressure")
_KEEP_RE = re.compile(r"-\d+-(original|DGO-|register-pressure|post-constant-materializer|post-cssa|critical-path)")

# ---------------------------------------------------------------------------------------------
# reading LLO text


def _strip(s):
  return re.sub(r"/\*.*?\*/", "", s)


_OP_RE = re.compile(r"^(?:(%[\w]+)\s*=\s*)?([\w.]+)(.*)$")


def op_fields(text):
  """(result or None, op name, operands) of one LLO instruction."""
  m = _OP_RE.match(text.strip())
  if not m:
    return None
  return m.group(1), m.group(2), re.findall(r"%[a-z]*\d+\b", m.group(3))


def linear(text):
  """The instructions of a linear listing, in order: (result, op, operands, text)."""
  out = []
  for line in text.splitlines():
    s = _strip(line).strip()
    m = re.match(r"^(%\w+) = ([\w.]+)(.*)$", s)
    if m:
      out.append((m.group(1), m.group(2), re.findall(r"%[a-z]*\d+\b", m.group(3)), s))
  return out


def blocks(text):
  """The basic blocks of a DGO listing (one block a paragraph): lists of (result, op, operands,
  text)."""
  out, cur = [], []
  for line in text.splitlines() + [""]:
    s = _strip(line).strip()
    if not s:
      if cur:
        out.append(cur)
      cur = []
      continue
    f = op_fields(s)
    if f:
      cur.append(f + (s,))
  return out


_BUNDLE_RE = re.compile(r"^\s*(0x[0-9a-f]+|\d+)\s+(\w\w)?\s*:\s*(>*)\s*\{(.*)\}")


def bundles(text):
  """The bundles of a packed-bundles listing: lists of (result, op, operands)."""
  out = []
  for line in text.splitlines():
    m = _BUNDLE_RE.match(line)
    if m:
      out.append([f for f in (op_fields(o) for o in _strip(m.group(4)).split(";;") if o.strip()) if f])
  return out


# ---------------------------------------------------------------------------------------------
# live values


def max_live(seq, remat_gap=None):
  """The most vreg values (%vN: not masks) live at once over seq, a list of (result, op, operands):
  a value from its definition to its last use. With remat_gap, a loaded value (vld) whose next
  use comes more than remat_gap entries after its previous one is loaded again just before it."""
  defined, loaded, uses = {}, {}, collections.defaultdict(list)
  for pos, (res, op, operands) in enumerate(seq):
    for u in operands:
      uses[u].append(pos)
    if res and re.fullmatch(r"%v\d+", res):
      defined[res], loaded[res] = pos, op.startswith("vld")
  events = collections.Counter()
  for v, start in defined.items():
    later = [u for u in uses.get(v, []) if u > start]
    if not later:
      continue
    prev = start
    for u in later:
      if remat_gap is not None and loaded[v] and u - prev > remat_gap:
        events[start] += 1
        events[prev] -= 1
        start = u - 1
      prev = u
    events[start] += 1
    events[prev] -= 1
  live = peak = 0
  for pos in sorted(events):
    live += events[pos]
    peak = max(peak, live)
  return peak


# ---------------------------------------------------------------------------------------------
# the machine: slot classes, slots per bundle and latencies, read from VLIW bundles


def slot_class(op):
  """The VLIW slot an LLO op issues in (a grouping of op names; units numbered in the name)."""
  unit = re.search(r"\.(mxu\d|xlu\d)\b", op)
  if op.startswith("vld"):
    return "vld"
  if op.startswith("vst"):
    return "vst"
  if unit and unit.group(1).startswith("mxu"):
    kind = ("pop" if op.startswith("vpop") else "prep" if op.startswith("vmatprep")
            else "push" if "push" in op else "mul")
    return unit.group(1) + ":" + kind
  if op.startswith(("vpop.xlane", "vpop.permute", "vpop.trf")):
    return "xlupop"
  if unit:
    return unit.group(1)
  if op.startswith("vpop.eup"):
    return "euppop"
  if op.startswith("v") and op.endswith(".pop"):
    return "eup"
  if op.startswith(("vsync", "vwait", "vdelay")) or not op.startswith(("v", "s", "p")):
    return "misc:" + op
  return "valu" if op.startswith("v") else "scalar"


def op_family(op):
  """An op name with its unit number dropped (vmatmul.bf16.gmra.mxu2 -> vmatmul.bf16.gmra.U)."""
  return re.sub(r"\.(mxu|xlu)\d\b", ".U", op)


def _unit(op):
  m = re.search(r"\.(mxu\d|xlu\d)\b", op)
  return m.group(1) if m else None


def measure_machine(bundle_lists):
  """Over the given VLIW schedules: slots per class (the most one bundle of at most 24 ops holds),
  latency per op family (the smallest distance in bundles from a definition to a use) and
  occupancy per pair of op families on one XLU/MXU unit (the smallest distance from one to the
  next on the same unit)."""
  slots, latency, occupancy = collections.Counter(), {}, {}
  for bl in bundle_lists:
    defined, last_on_unit = {}, {}
    for at, ops in enumerate(bl):
      if len(ops) <= 24:
        for k, n in collections.Counter(slot_class(o[1]) for o in ops).items():
          slots[k] = max(slots[k], n)
      for res, op, operands in ops:
        for u in operands:
          if u in defined and at >= defined[u][0]:
            name = op_family(defined[u][1])
            latency[name] = min(latency.get(name, at - defined[u][0]), at - defined[u][0])
        unit = _unit(op)
        if unit in last_on_unit:
          pair = (op_family(last_on_unit[unit][1]), op_family(op))
          occupancy[pair] = min(occupancy.get(pair, at - last_on_unit[unit][0]), at - last_on_unit[unit][0])
        if unit:
          last_on_unit[unit] = (at, op)
      for res, op, operands in ops:
        if res:
          defined[res] = (at, op)
  return dict(slots), latency, occupancy


# ---------------------------------------------------------------------------------------------
# candidate schedulers over a block's dependence graph

_BARRIER_RE = re.compile(r"^(dma|vsync|sbr|shalt|vwait|sfence|sst|sld|vdelay|vtrace|inlined_call|int_to_ptr|sdelay)")


def _mem_base(text):
  m = re.search(r"\[(?:vmem|smem):\[(%s\d+|#allocation\d+)", text)
  return m.group(1) if m else None


_OFFSET_RE = re.compile(r"\[(?:vmem|smem):\[(?:%s\d+|#allocation\d+)(?:\s*\+\s*\$(0x[0-9a-f]+))?\s*\]")
# A vreg access covers 8 sublane rows of its buffer: offsets closer than this overlap.
_ROWS = 8


class _MemoryOrder:
  """The loads and stores of each buffer so far. By buffer: each access conflicts with every
  earlier one of its buffer (a store with loads and stores, a load with stores). By address: only
  where their constant offsets are within 8 rows (a register offset overlaps everything)."""

  def __init__(self, by_address):
    self.by_address = by_address
    self.writes = collections.defaultdict(dict)   # buffer -> offset -> [store]
    self.reads = collections.defaultdict(dict)    # buffer -> offset -> [loads since its store]
    self.any_write = collections.defaultdict(list)  # accesses at an unknown offset
    self.any_read = collections.defaultdict(list)

  def order(self, i, text, store):
    """The earlier accesses access i must follow, as (j, cycles); records i."""
    base = _mem_base(text)
    m = _OFFSET_RE.search(text) if self.by_address else None
    off = int(m.group(1) or "0", 16) if m else None

    def near(by_offset):
      if off is None:
        return [j for js in by_offset.values() for j in js]
      return [j for o in range(off - _ROWS + 1, off + _ROWS) for j in by_offset.get(o, [])]
    after = [(j, 1) for j in near(self.writes[base]) + self.any_write[base]]
    if store:
      after += [(j, 0) for j in near(self.reads[base]) + self.any_read[base]]
      if off is None:
        self.writes[base], self.reads[base] = {}, {}
        self.any_write[base], self.any_read[base] = [i], []
      else:
        self.writes[base][off], self.reads[base][off] = [i], []
    elif off is None:
      self.any_read[base].append(i)
    else:
      self.reads[base].setdefault(off, []).append(i)
    return after


def is_memory(op, text):
  return op.startswith(("vld", "vst")) and _mem_base(text) is not None


def dependences(block, latency, occupancy, by_address=False):
  """preds[i]: (j, cycles) for the ops i must follow: the values it reads (the latency of their
  op); on each XLU/MXU unit the op before it of the same side (pushes and matmuls in one order,
  pops in another: each a FIFO, one after the other by the unit's occupancy), and an MXU pop after
  its share of the unit's matmuls; the stores/loads of the same buffer before it (with by_address,
  only those whose rows overlap it: _MemoryOrder); barriers (DMA waits, syncs, branches) against
  every memory op."""
  preds = [[] for _ in block]
  defs, last_on_side, memory = {}, {}, _MemoryOrder(by_address)
  matmuls, pops = collections.defaultdict(list), collections.defaultdict(list)
  barrier, since_barrier = None, []
  for i, (res, op, operands, text) in enumerate(block):
    preds[i] += [(defs[u], latency(block[defs[u]][1])) for u in operands if u in defs]
    unit = _unit(op)
    if unit:
      side = (unit, op.startswith("vpop"))
      if side in last_on_side:
        j = last_on_side[side]
        preds[i].append((j, occupancy.get((op_family(block[j][1]), op_family(op)), 1)))
      last_on_side[side] = i
      if unit.startswith("mxu") and side[1]:
        pops[unit].append(i)
      elif unit.startswith("mxu") and op.startswith("vmatmul"):
        matmuls[unit].append(i)
    if _BARRIER_RE.match(op):
      preds[i] += [(j, 0) for j in since_barrier] + ([(barrier, 0)] if barrier is not None else [])
      barrier, since_barrier = i, []
    elif op.startswith(("vld", "vst")) and (is_memory(op, text) or not by_address):
      preds[i] += [(barrier, 1)] if barrier is not None else []
      since_barrier.append(i)
      preds[i] += memory.order(i, text, op.startswith("vst"))
    if res:
      defs[res] = i
  for unit, ps in pops.items():   # the k-th pop takes the result of its share of the matmuls
    ms = matmuls.get(unit)
    for k, i in enumerate(ps if ms else []):
      j = ms[min(len(ms) - 1, k * len(ms) // len(ps))]
      if j < i:
        preds[i].append((j, occupancy.get((op_family(block[j][1]), op_family(block[i][1])), 1)))
  return preds


def _successors(preds):
  succs = [[] for _ in preds]
  for i, ps in enumerate(preds):
    for j, cycles in ps:
      succs[j].append((i, cycles))
  return succs


def critical_path(block, preds, latency):
  """The longest latency path from each op to the block's end."""
  succs, length = _successors(preds), [0] * len(block)
  for i in reversed(range(len(block))):
    length[i] = max([c + length[k] for k, c in succs[i]] + [latency(block[i][1])])
  return length


def _cycle_schedule(preds, pick):
  """Cycle-driven top-down scheduling: each cycle pick(ready ops whose operands' latencies have
  passed) gives the ops issued in it. Returns the issue order."""
  succs, waiting = _successors(preds), [len(p) for p in preds]
  earliest, ready, order, cycle = [0] * len(preds), [i for i, p in enumerate(preds) if not p], [], 0
  while len(order) < len(preds):
    for i in pick([i for i in ready if earliest[i] <= cycle]):
      ready.remove(i)
      order.append(i)
      for k, c in succs[i]:
        earliest[k] = max(earliest[k], cycle + c)
        waiting[k] -= 1
        if waiting[k] == 0:
          ready.append(k)
    cycle += 1
  return order


def list_schedule(block, preds, slots, priority, slot_of):
  """List scheduling: each cycle the ready ops in priority order, each while its slot class has
  room. Returns the issue order."""
  def pick(now):
    used, placed = collections.Counter(), []
    for i in sorted(now, key=priority):
      if used[slot_of(i)] < slots.get(slot_of(i), 1):
        used[slot_of(i)] += 1
        placed.append(i)
    return placed
  return _cycle_schedule(preds, pick)


def pressure_aware_order(block, preds, length, limit):
  """One op a cycle, the longest path first, but once `limit` vreg values are live the op that
  leaves the fewest live (its result less the operands it reads last), then the longest path."""
  defs = {x[0] for x in block}
  readers = collections.Counter(u for x in block for u in set(x[2]) if u in defs and u.startswith("%v"))
  live = [0]

  def growth(i):
    last_reads = sum(1 for u in set(block[i][2]) if readers.get(u) == 1)
    return (1 if readers.get(block[i][0]) else 0) - last_reads

  def pick(now):
    if not now:
      return []
    i = min(now, key=(lambda k: (growth(k), -length[k], k)) if live[0] >= limit else (lambda k: (-length[k], k)))
    live[0] += growth(i)
    for u in set(block[i][2]):
      if u in readers:
        readers[u] -= 1
    return [i]
  return _cycle_schedule(preds, pick)


def demand_order(preds):
  """Each sink in program order after its operands not yet emitted, depth first."""
  succs, done, order = _successors(preds), [False] * len(preds), []
  for sink in (i for i in range(len(preds)) if not succs[i]):
    stack = [(sink, False)]
    while stack:
      i, expanded = stack.pop()
      if done[i]:
        continue
      if expanded:
        done[i] = True
        order.append(i)
        continue
      stack.append((i, True))
      stack += [(j, False) for j, _ in sorted(preds[i], reverse=True) if not done[j]]
  return order


_VREG_RE = re.compile(r"%v\d+")
# From a unit's result (a lane reduction's or matmul's pop), the ops it makes ready follow at once
# while each adds at most this many live values (docs/tpu.md, "The just-in-time scheduler").
CHAIN_GROWTH = 1
# The bundle scheduler packs each cycle from the first this many ops of the first scheduler's
# order not yet issued (chosen on the fitting half: 8-32 tried).
BUNDLE_WINDOW = 16
# With the ops fed by loads alone sunk to their readers, the bundle scheduler packs each cycle from
# the first this many ops not yet issued (chosen on the fitting half: 32-1024 and the whole block
# tried; docs/tpu.md, "What bounds the bundle scheduler's issue-ahead").
SOURCE_WINDOW = 256


def places_itself(op, text, has_readers):
  """The ops the just-in-time scheduler places by priority: XLU/MXU ops, memory writes, barriers
  and scalar ops, and ops nothing in the block reads. Loads and vector arithmetic are issued when
  something needs them."""
  if not has_readers or _unit(op):
    return True
  if op.startswith("vst"):
    return is_memory(op, text)
  return not op.startswith("v") or op.startswith(("vsync", "vwait", "vdelay", "vtrace"))


def in_flight_bound(block, preds):
  """For each unit push whose result a pop reads (on the XLUs a lane reduction or a permute), the
  pop it waits for under the unit's in-flight bound: the pop of the push `depth` before it on its
  unit, depth = ceil(latency / occupancy) (the push-to-pop and push-to-push cycles of the
  dependence graph). A unit that takes a push every `occupancy` cycles and whose pops issue when
  due holds that many results in flight (docs/tpu.md, "The unit's in-flight bound").
  Returns {push: pop}."""
  pop_of = {}
  for i, (res, op, operands, text) in enumerate(block):
    if op.startswith("vpop") and _unit(op):
      for j, c in preds[i]:
        if block[j][0] in operands and _unit(block[j][1]) == _unit(op) and not block[j][1].startswith("vpop"):
          pop_of[j] = (i, c)
  pushes, bound = collections.defaultdict(list), {}
  for i, (res, op, operands, text) in enumerate(block):
    if i not in pop_of:
      continue
    unit = _unit(op)
    previous = pushes[unit][-1] if pushes[unit] else None
    occupancy = next((c for j, c in preds[i] if j == previous), 0)
    pushes[unit].append(i)
    if occupancy:
      k = len(pushes[unit]) - 1 + (-pop_of[i][1] // occupancy)   # minus ceil(latency / occupancy)
      if k >= 0:
        bound[i] = pop_of[pushes[unit][k]][0]
  return bound


class _JustInTime:
  """State of just_in_time_order (its docstring)."""

  def __init__(self, block, preds, length):
    self.block, self.preds, self.length = block, preds, length
    self.succs = _successors(preds)
    n = len(block)
    self.placed = [places_itself(block[i][1], block[i][3], bool(self.succs[i])) for i in range(n)]
    self.load = [x[1].startswith("vld") for x in block]
    self.scalar = [bool(x[0]) and x[0][1] in "sp" for x in block]
    self.store = [self.placed[i] and x[1].startswith("vst") for i, x in enumerate(block)]
    defs = {x[0]: i for i, x in enumerate(block) if x[0]}
    self.vreg = [bool(x[0]) and bool(_VREG_RE.fullmatch(x[0])) for x in block]
    self.readers = collections.Counter(u for x in block for u in set(x[2]) if u in defs and _VREG_RE.fullmatch(u))
    self.reaches = []   # for each op, the placed ops it waits on (through pulled ones), with the cycles
    for i in range(n):
      d = {}
      for j, c in preds[i]:
        for a, c2 in ({j: 0} if self.placed[j] else self.reaches[j]).items():
          d[a] = max(d.get(a, 0), c + c2)
      self.reaches.append(d)
    self.waiting = [len(self.reaches[i]) if self.placed[i] else 0 for i in range(n)]
    self.unblocks = collections.defaultdict(list)
    for i in range(n):
      for a in self.reaches[i] if self.placed[i] else ():
        self.unblocks[a].append(i)
    self.done, self.order, self.cycle = [False] * n, [], 0
    self.earliest = [0] * n
    self.pending = [(0, self.key(i), i) for i in range(n) if self.placed[i] and not self.waiting[i]]
    heapq.heapify(self.pending)

  def key(self, i):
    return (0 if self.scalar[i] else 1, -self.length[i], i)

  def growth(self, i):
    """Live values op i adds: its result, less the operands it reads last."""
    x = self.block[i]
    return (1 if self.vreg[i] and self.readers.get(x[0]) else 0) - sum(1 for u in set(x[2]) if self.readers.get(u) == 1)

  def emit(self, i):
    self.done[i] = True
    self.order.append(i)
    self.cycle += 1
    for u in set(self.block[i][2]):
      if u in self.readers:
        self.readers[u] -= 1
    for k in self.unblocks[i] if self.placed[i] else ():
      self.earliest[k] = max(self.earliest[k], self.cycle + self.reaches[k][i])
      self.waiting[k] -= 1
      if not self.waiting[k]:
        heapq.heappush(self.pending, (self.earliest[k], self.key(k), k))

  def pull(self, i):
    """Issues i after the ops it needs that are not placed by priority, operands first."""
    stack = [(i, False)]
    while stack:
      k, expanded = stack.pop()
      if self.done[k]:
        continue
      if expanded:
        self.emit(k)
        continue
      stack.append((k, True))
      stack += [(j, False) for j, _ in sorted(self.preds[k], reverse=True) if not self.done[j] and not self.placed[j]]

  def follow(self, i):
    """The ops i makes ready that add no live value; from a unit's pop, its chain (up to
    CHAIN_GROWTH each, what it needs pulled in)."""
    chain = self.block[i][1].startswith("vpop") and _unit(self.block[i][1]) is not None
    work = [(i, chain)]
    while work:
      k, chain = work.pop()
      for s, _ in sorted(self.succs[k], reverse=True):
        if self.done[s] or (self.placed[s] and not (self.store[s] and not self.waiting[s])):
          continue
        if all(self.done[j] for j, _ in self.preds[s]) and self.growth(s) <= 0:
          self.emit(s)
          work.append((s, chain))
        elif chain and all(self.done[a] for a in self.reaches[s]) and self.growth(s) <= CHAIN_GROWTH:
          self.pull(s)
          work.append((s, chain))

  def computed(self, k):
    """A store whose value is computed but for loads and one op over computed values."""
    for j, _ in self.preds[k]:
      if not (self.done[j] or self.placed[j] or self.load[j]):
        if any(not (self.done[j2] or self.placed[j2] or self.load[j2]) for j2, _ in self.preds[j]):
          return False
    return True


def just_in_time_order(block, preds, length, in_flight=False):
  """LLO's critical-path scheduler as a just-in-time list scheduler, one op a cycle. The ops that
  place themselves (places_itself: unit ops, stores, barriers, scalar ops) are taken once ready
  and their latencies have passed: a store whose value is computed first, then scalar ops, then
  the longest latency path to the block's end; each is issued right after what it needs that
  is not yet issued (its loads and arithmetic, in program order). After each, the ops it makes
  ready follow at once if they add no live value (a store, an accumulation, a pack), and a unit's
  pop is followed by its whole chain (JustInTime.follow). With in_flight, a unit's push also waits
  for the pop in_flight_bound names."""
  if in_flight:
    bound = in_flight_bound(block, preds)
    preds = [p + ([(bound[i], 0)] if i in bound else []) for i, p in enumerate(preds)]
  st = _JustInTime(block, preds, length)
  ready, stores = [], []
  while len(st.order) < len(block):
    while st.pending and st.pending[0][0] <= st.cycle:
      _, key, k = heapq.heappop(st.pending)
      stores += [k] if st.store[k] else []
      heapq.heappush(ready, (key, k))
    stores = [k for k in stores if not st.done[k]]
    k = next((k for k in sorted(stores) if st.computed(k)), None)
    if k is None:
      while ready and st.done[ready[0][1]]:
        heapq.heappop(ready)
      if not ready:
        if not st.pending:
          break
        st.cycle = max(st.cycle, st.pending[0][0])
        continue
      k = heapq.heappop(ready)[1]
    start = len(st.order)
    st.pull(k)
    for j in st.order[start:]:
      st.follow(j)
  return st.order + [i for i in range(len(block)) if not st.done[i]]


def window_order(block, preds, slots, window, priority=None, cycles=None):
  """The VLIW bundle scheduler over a given order: each cycle, from the first `window` ops of the
  order not yet issued, the ready ones (latencies passed) in order, or by `priority` (smallest
  first), while their slot class has room. Returns the issue order (and fills `cycles`, a list,
  with each op's cycle)."""
  succs, waiting = _successors(preds), [len(p) for p in preds]
  cycles = [0] * len(block) if cycles is None else cycles
  cycles[:] = [0] * len(block)
  earliest, done, order, front, cycle = [0] * len(block), [False] * len(block), [], 0, 0
  while len(order) < len(block):
    ready, seen, i = [], 0, front
    while i < len(block) and seen < window:
      if not done[i]:
        seen += 1
        if not waiting[i] and earliest[i] <= cycle:
          ready.append(i)
      i += 1
    used, placed = collections.Counter(), []
    for i in sorted(ready, key=priority) if priority else ready:
      cls = slot_class(block[i][1])
      if used[cls] < slots.get(cls, 1):
        used[cls] += 1
        placed.append(i)
    for i in placed:
      done[i] = True
      order.append(i)
      cycles[i] = cycle
      for k, c in succs[i]:
        earliest[k] = max(earliest[k], cycle + c)
        waiting[k] -= 1
    while front < len(block) and done[front]:
      front += 1
    cycle += 1
  return order


def sink_loads(block, preds, cycles, movable=None, slots=None):
  """The order of a bundle schedule (each op's cycle) with every load (or every op `movable` marks)
  moved to the latest cycle its readers and the later accesses of its rows allow: LLO's bundles
  issue a load 0-2 bundles before its first use (`bundle_moves` rows, docs/tpu.md "The
  just-in-time scheduler"). With `slots`, an op moves only into a cycle whose bundle has room for
  its slot class (the latest such cycle before its readers), else it stays."""
  succs, at = _successors(preds), list(cycles)
  movable = movable or [x[1].startswith("vld") for x in block]
  used = collections.Counter((at[i], slot_class(x[1])) for i, x in enumerate(block))
  for i in sorted(range(len(block)), key=lambda k: -at[k]):
    if not (movable[i] and succs[i]):
      continue
    to, cls = min(at[k] - c for k, c in succs[i]), slot_class(block[i][1])
    while slots is not None and to > at[i] and used[(to, cls)] >= slots.get(cls, 1):
      to -= 1
    if to > at[i]:
      used[(at[i], cls)] -= 1
      used[(to, cls)] += 1
      at[i] = to
  return sorted(range(len(block)), key=lambda k: (at[k], k))


def fed_by_loads_alone(op, text, has_readers, operands_fed):
  """Whether an op is fed by loads alone: a load, or a vector op the just-in-time scheduler pulls in
  (places_itself: not unit ops, stores or barriers) whose vreg operands all are (`operands_fed`,
  an iterable read only for such an op): a weight block's unpacks, converts and packs before its
  MXU pushes; the LHS an MXU matmul reads."""
  return op.startswith("vld") or not places_itself(op, text, has_readers) and all(operands_fed)


def source_ops(block, preds):
  """Per op of the block, whether it is fed by loads alone (fed_by_loads_alone)."""
  succs, source = _successors(preds), []
  for i, (res, op, operands, text) in enumerate(block):
    source.append(fed_by_loads_alone(op, text, bool(succs[i]), (
        source[j] for j, _ in preds[i] if _VREG_RE.fullmatch(block[j][0] or ""))))
  return source


def bundled_sunk(ops, latency, occupancy, slots, window=BUNDLE_WINDOW, sources=False):
  """ops packed by window_order in order (from the whole block with window=None), then their loads
  sunk to their uses (sink_loads); with sources, every op fed by loads alone (source_ops), each
  into a bundle with room for it."""
  preds = dependences(ops, latency, occupancy, by_address=True)
  cycles = []
  window_order(ops, preds, slots, window or len(ops), cycles=cycles)
  if sources:
    return sink_loads(ops, preds, cycles, source_ops(ops, preds), slots)
  return sink_loads(ops, preds, cycles)


def bundled(ops, latency, occupancy, slots, by_length=False):
  """ops (a scheduled order) packed by window_order, in order or by the longest latency path."""
  preds = dependences(ops, latency, occupancy, by_address=True)
  length = critical_path(ops, preds, latency) if by_length else None
  return window_order(ops, preds, slots, BUNDLE_WINDOW, (lambda i: (-length[i], i)) if by_length else None)


def jit_orders(block, latency, occupancy, slots, unit_occupancy=True, in_flight=False):
  """The just-in-time scheduler's order of a block (program order), and that order packed into
  bundles (in order, by the longest path, in order with its loads sunk, from the whole block
  with its loads sunk, and from SOURCE_WINDOW ops with the ops fed by loads alone sunk), over the
  dependence graph with memory ordered by address. Without unit_occupancy its priority's longest
  path counts each step of a unit's FIFO as one cycle (the graph itself keeps the occupancies);
  with in_flight, each unit's pushes wait under in_flight_bound."""
  preds = dependences(block, latency, occupancy, by_address=True)
  paths = preds if unit_occupancy else dependences(block, latency, {}, by_address=True)
  order = just_in_time_order(block, preds, critical_path(block, paths, latency), in_flight)
  scheduled = [block[i] for i in order]
  packed = [bundled(scheduled, latency, occupancy, slots, by_length) for by_length in (False, True)]
  packed += [bundled_sunk(scheduled, latency, occupancy, slots, window) for window in (BUNDLE_WINDOW, None)]
  packed += [bundled_sunk(scheduled, latency, occupancy, slots, SOURCE_WINDOW, sources=True)]
  return [order] + [[order[i] for i in p] for p in packed]


def model_orders(cp_blocks, program_pos, register_file, slots, latencies, occupancy):
  """Each candidate's order of the critical-path scheduler's input (its blocks, from its output,
  whose ops are the same, with their ops in program order), and the longest latency path of any
  block."""
  latency = lambda op: latencies.get(op_family(op), 1)  # noqa: E731
  out, longest = collections.defaultdict(list), 0
  for block in cp_blocks:
    b = sorted(block, key=lambda x: program_pos.get(x[0], 1 << 30))
    preds = dependences(b, latency, occupancy)
    length = critical_path(b, preds, latency)
    longest = max([longest] + length)
    by_length = lambda i: (-length[i], i)  # noqa: E731
    orders = {
        "list_cp": list_schedule(b, preds, slots, by_length, lambda i: slot_class(b[i][1])),
        "serial_cp": list_schedule(b, preds, {"all": 1}, by_length, lambda i: "all"),
        "serial_rp": pressure_aware_order(b, preds, length, register_file),
        "demand": demand_order(preds),
    }
    for name, order in orders.items():
      out[name] += [b[i][:3] for i in order]
    ops = [x for x in b if x[0] is not None or not re.fullmatch(r"[a-z_]+", x[1])]  # the notes left out
    names = ("jit", "jit_bundled", "jit_bundled_cp", "jit_sunk", "jit_listed", "jit_sources_sunk")
    for name, order in zip(names, jit_orders(ops, latency, occupancy, slots)):
      out[name] += [ops[i][:3] for i in order]
    lat_only = jit_orders(ops, latency, occupancy, slots, unit_occupancy=False)
    for name, order in zip(("jit_lat", "jit_lat_bundled_cp", "jit_lat_sunk", "jit_lat_sources_sunk"),
                           (lat_only[0], lat_only[2], lat_only[3], lat_only[5])):
      out[name] += [ops[i][:3] for i in order]
    bounded = jit_orders(ops, latency, occupancy, slots, unit_occupancy=False, in_flight=True)
    for name, order in zip(("jit_lat_bound", "jit_lat_bound_bundled_cp", "jit_lat_bound_sources_sunk"),
                           (bounded[0], bounded[2], bounded[5])):
      out[name] += [ops[i][:3] for i in order]
    llo = [x for x in block if x[0] is not None or not re.fullmatch(r"[a-z_]+", x[1])]
    for name, by_length in (("llo_order_bundled", False), ("llo_order_bundled_cp", True)):
      out[name] += [llo[i][:3] for i in bundled(llo, latency, occupancy, slots, by_length)]
    for name, window in (("llo_order_sunk", BUNDLE_WINDOW), ("llo_order_listed", None)):
      out[name] += [llo[i][:3] for i in bundled_sunk(llo, latency, occupancy, slots, window)]
    sunk = bundled_sunk(llo, latency, occupancy, slots, SOURCE_WINDOW, sources=True)
    out["llo_order_sources_sunk"] += [llo[i][:3] for i in sunk]
  return out, longest


# ---------------------------------------------------------------------------------------------
# what the bundle scheduler moves


def _median(xs):
  return sorted(xs)[len(xs) // 2] if xs else None


def bundle_positions(vliw):
  """({value: the bundle defining it}, {value: the bundle first reading it}) of a bundle listing."""
  where, first_use = {}, {}
  for at, ops in enumerate(vliw):
    for res, op, operands in ops:
      for u in operands:
        first_use.setdefault(u, at)
      where[res] = at
  return where, first_use


def bundle_moves(cp_seq, vliw):
  """How LLO's bundles place the critical-path scheduler's ops (each a median over the kernel):
  load_to_use: bundles from a load to its first reader; store_after_operand, push_after_operand:
  bundles from the last definition a store or an XLU push reads to it; shift_<class>: places an op
  moves in the bundles' order against the first order (negative: earlier), for loads, stores, XLU
  pushes and XLU pops; lookahead_median, lookahead_max: in each bundle, how far (in ops of the
  first order) its last op lies past the first op not yet issued."""
  rank = {x[0]: k for k, x in enumerate(x for x in cp_seq if x[0])}
  where, first_use = bundle_positions(vliw)
  where = {res: at for res, at in where.items() if res in rank}
  flat = [(res, op, operands, at) for at, ops in enumerate(vliw) for res, op, operands in ops if res in rank]
  moves = collections.defaultdict(list)
  order_rank = {res: k for k, res in enumerate(sorted((x[0] for x in flat), key=rank.get))}
  for k, (res, op, operands, at) in enumerate(flat):
    cls = ("load" if op.startswith("vld") else "store" if op.startswith("vst")
           else "xlu_pop" if op.startswith("vpop") and _unit(op) and _unit(op).startswith("xlu")
           else "xlu_push" if _unit(op) and _unit(op).startswith("xlu") else None)
    if cls:
      moves["shift_" + cls].append(k - order_rank[res])
    if cls == "load" and res in first_use:
      moves["load_to_use"].append(first_use[res] - at)
    defs = [where[u] for u in operands if u in where and _VREG_RE.fullmatch(u)]
    if cls in ("store", "xlu_push") and defs:
      moves[cls + "_after_operand"].append(at - max(defs))
  issued, front, ahead = set(), 0, []
  by_bundle = collections.defaultdict(list)
  for res, _, _, at in flat:
    by_bundle[at].append(order_rank[res])
  for at in sorted(by_bundle):
    while front in issued:
      front += 1
    ahead.append(max(by_bundle[at]) - front)
    issued.update(by_bundle[at])
  out = {k: _median(v) for k, v in moves.items()}
  out["lookahead_median"], out["lookahead_max"] = _median(ahead), max(ahead, default=None)
  return out


def unit_in_flight(seq):
  """The most lane reductions each XLU holds in flight in a listing: pushes (`vadd.xlane`,
  `vmax.xlane`, ...) whose pop (the pop that reads the push's result) has not come yet."""
  pushed, out, most = {}, collections.Counter(), {}
  for res, op, operands in seq:
    unit = _unit(op)
    if not unit or not unit.startswith("xlu"):
      continue
    if op.startswith("vpop"):
      out[unit] -= sum(1 for u in operands if pushed.pop(u, None) == unit)
    elif res and ".xlane" in op:
      pushed[res] = unit
      out[unit] += 1
      most[unit] = max(most.get(unit, 0), out[unit])
  return most


def _percentile(xs, q):
  return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def source_lead(cp_seq, vliw):
  """Where LLO's bundles place the vector ops fed by loads alone against the rest (over the
  critical-path scheduler's values, fed_by_loads_alone): source_to_reader
  (median, 90th percentile): bundles from such an op (not a load) to its first reader;
  pulled_after_operand: bundles from the latest operand of a pulled vector op over other values
  to it; other_lookahead_max: the most first-order places a bundle's ops other than these and
  memory ops lie past the first such op not yet issued."""
  source, rank = {}, {}
  for res, op, operands in cp_seq:
    if res and _VREG_RE.fullmatch(res):
      source[res] = fed_by_loads_alone(op, "", True, (source.get(u, False) for u in operands if _VREG_RE.fullmatch(u)))
    if res:
      rank[res] = len(rank)
  where, first_use = bundle_positions(vliw)
  lead, after, other = [], [], collections.defaultdict(list)
  for res, op, operands in cp_seq:
    if res not in where or not _VREG_RE.fullmatch(res) or op.startswith("vld"):
      if res in where and res in rank and not op.startswith(("vld", "vst")):
        other[where[res]].append(rank[res])
      continue
    if source[res] and res in first_use:
      lead.append(first_use[res] - where[res])
    elif not source[res] and not places_itself(op, "", True):
      defs = [where[u] for u in operands if u in where and _VREG_RE.fullmatch(u)]
      after += [where[res] - max(defs)] if defs else []
    if not source[res]:
      other[where[res]].append(rank[res])
  issued, pending, ahead = set(), sorted(r for rs in other.values() for r in rs), []
  front = 0
  for at in sorted(other):
    while front < len(pending) and pending[front] in issued:
      front += 1
    ahead.append(max(other[at]) - pending[front] if front < len(pending) else 0)
    issued.update(other[at])
  return {"source_to_reader": [_median(lead), _percentile(lead, 0.9)], "pulled_after_operand": _median(after),
          "other_lookahead_max": max(ahead, default=None)}


# ---------------------------------------------------------------------------------------------
# one kernel's dump


def kernel_passes(dump_dir, kernel):
  """The kernel's dump files in pass order, [(pass name, path)] (of the compile with most files)."""
  by_id = collections.defaultdict(list)
  for p in glob.glob(os.path.join(dump_dir, f"*-{kernel}-*.txt")):
    m = re.match(rf"^(\d+)-{re.escape(kernel)}-(\d+)-(.*)\.txt$", os.path.basename(p))
    if m:
      by_id[m.group(1)].append((int(m.group(2)), m.group(3), p))
  return [(name, p) for _, name, p in sorted(max(by_id.values(), key=len, default=[]))]


def _read(path):
  with open(path, errors="replace") as f:
    return f.read()


def analyse(dump_dir, kernel):
  """The live-value figures of one kernel's dump (module docstring), and what the machine
  measurement and the models need: its VLIW bundles and the critical-path scheduler's blocks."""
  ordered = kernel_passes(dump_dir, kernel)
  passes = collections.defaultdict(list)
  for n, p in ordered:
    passes[n].append(p)
  if not all(passes.get(p) for p in PASSES[:4]):
    return None
  names = [n for n, _ in ordered]
  cp_at = names.index("DGO-post-critical-path-scheduler")
  pre_cp = next(p for n, p in reversed(ordered[:cp_at]) if n != "critical-path")
  vliw = bundles(_read(passes["DGO-vliw-packed-bundles"][0]))
  cp_text = _read(passes["DGO-post-critical-path-scheduler"][0])
  cp_seq = [x[:3] for x in linear(cp_text)]
  vliw_seq = [op for b in vliw for op in b]
  pre_cp_seq = linear(_read(pre_cp))
  row = {"live": {"mosaic": max_live([x[:3] for x in linear(_read(passes["original"][0]))]),
                  "pre_cp": max_live([x[:3] for x in pre_cp_seq]),
                  "cp": max_live(cp_seq), "vliw": max_live(vliw_seq)},
         "live_remat": {"cp": max_live(cp_seq, REMAT_GAP), "vliw": max_live(vliw_seq, REMAT_GAP)},
         "bundle_moves": bundle_moves(cp_seq, vliw), "source_lead": source_lead(cp_seq, vliw),
         "xlu_in_flight": unit_in_flight(cp_seq)}
  before, after = (linear(_read(p)) for p in (ordered[names.index("DGO-post-rematerialization") - 1][1],
                                                passes["DGO-post-rematerialization"][0]))
  pre_vliw = ordered[names.index("DGO-vliw-packed-bundles") - 1][1]
  row["live_remat"]["pre_vliw"] = max_live([x[:3] for x in linear(_read(pre_vliw))], REMAT_GAP)
  old = {x[0] for x in before}
  added = collections.Counter(x[1] for x in after if x[0] not in old)
  row["remat_loads"] = sum(added.values())
  lengths = [int(n) for p in passes.get("critical-path", []) for n in re.findall(r"Length to end: (\d+)", _read(p))]
  row["critical_path"] = {"llo": max(lengths, default=None)}
  row["remat_adds_only_loads"] = all(op.startswith("vld") for op in added) and len(after) - len(before) == row["remat_loads"]
  if passes.get("register-pressure"):
    row["pressure"] = register_pressure(_read(passes["register-pressure"][0]))
    ipr = names.index("register-pressure")
    row["live"]["pre_pressure"] = max_live([x[:3] for x in linear(_read(ordered[ipr - 1][1]))])
  else:
    row["pressure"] = None
  inputs = {"vliw": vliw, "cp_blocks": blocks(cp_text),
            "program_pos": {x[0]: k for k, x in enumerate(pre_cp_seq)}}
  return row, inputs


# ---------------------------------------------------------------------------------------------


def _tag(kind, gen, params):
  return f"{kind}-{gen}-" + "-".join(f"{k}{v}" for k, v in sorted(params.items()))


def compile_and_keep(kernels, keep):
  """Compiles each kernel with the LLO dump on and copies the passes read here to keep/<tag>."""
  os.environ["TPU_AOT_BUNDLES"] = "1"  # before tpu_aot's import: it dumps every compile's LLO text
  from product import tpu_aot
  import heldout_kernels
  for kind, gen, params in kernels:
    fn, args = heldout_kernels.build(kind, params)
    r = tpu_aot.compile_kernel(fn, args, gen)
    names = (r.get("pallas") or {}).get("kernels") or []
    out = os.path.join(keep, _tag(kind, gen, params))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "kernel.json"), "w") as f:
      json.dump({"kind": kind, "gen": gen, "params": params, "verdict": r["verdict"], "kernels": names}, f)
    for name in names[:1] if len(names) == 1 else []:
      for p in glob.glob(os.path.join(tpu_aot.DUMP_DIR, f"*-{name}-*.txt")):
        if _KEEP_RE.search(os.path.basename(p)):
          shutil.copy(p, out)
    print(kind, gen, params, r["verdict"], flush=True)
  return tpu_aot.versions()


def main(argv):
  args = list(argv)
  keep = src = None
  if "--keep" in args:
    keep = args.pop(args.index("--keep") + 1)
    args.remove("--keep")
  if "--from" in args:
    src = args.pop(args.index("--from") + 1)
    args.remove("--from")
  if len(args) != 1:
    sys.exit(__doc__)
  import tempfile
  work = src or keep or tempfile.mkdtemp(prefix="llo_schedule_")
  versions = None if src else compile_and_keep(KERNELS, work)
  if versions is None:
    with open(os.path.join(work, "versions.json")) as f:
      versions = json.load(f)
  else:
    with open(os.path.join(work, "versions.json"), "w") as f:
      json.dump(versions, f)
  rows, inputs = [], {}
  for kind, gen, params in KERNELS:
    d = os.path.join(work, _tag(kind, gen, params))
    with open(os.path.join(d, "kernel.json")) as f:
      meta = json.load(f)
    got = analyse(d, meta["kernels"][0]) if meta["kernels"] else None
    if got is None:
      continue
    row, inputs[(kind, gen, json.dumps(params))] = got
    rows.append(dict(kind=kind, gen=gen, params=params, **row))
  machines = {}
  for gen in sorted({r["gen"] for r in rows}):
    machines[gen] = measure_machine([v["vliw"] for k, v in inputs.items() if k[1] == gen])
  for r in rows:
    inp = inputs[(r["kind"], r["gen"], json.dumps(r["params"]))]
    orders, r["critical_path"]["model"] = model_orders(inp["cp_blocks"], inp["program_pos"], REGISTER_FILE[r["gen"]],
                                                       *machines[r["gen"]])
    r["models"] = {name: max_live(seq, REMAT_GAP) for name, seq in orders.items()}
    print(json.dumps({k: r[k] for k in ("kind", "gen", "pressure", "live", "live_remat", "models", "critical_path")}), flush=True)
  lines = [f"# LLO's schedulers and the register pressure P they give, read from libtpu's LLO dump: {json.dumps(versions)}",
           f"# {datetime.date.today().isoformat()}, bench/tpu/probe_llo_schedule.py {args[0]} "
           "(docs/tpu.md, \"Where P comes from: LLO's schedulers\")"]
  for gen, (slots, latency, occupancy) in machines.items():
    lines.append(json.dumps({"machine": gen, "slots": {k: v for k, v in slots.items() if not k.startswith("misc")},
                             "latency": {k: v for k, v in latency.items() if k.startswith("v")},
                             "occupancy": {f"{a} -> {b}": v for (a, b), v in sorted(occupancy.items())}}, sort_keys=True))
  lines += [json.dumps(r, sort_keys=True) for r in rows]
  with open(args[0], "w") as f:
    f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
  main(sys.argv[1:])
