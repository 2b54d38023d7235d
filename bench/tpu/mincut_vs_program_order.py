#!/usr/bin/env python3
"""An experiment: the least a schedule must hold across each whole-operand op (a minimum cut of the
region's dependence graph) beside what the program's order holds, per compile, against libtpu's
spill slots plus the register file. The vreg replay (backends/tpu/vreg_replay.cc) takes the
program's order; LLO's scheduler may move an op that neither feeds nor reads a barrier to either
side of it, so the least it can hold is the minimum, over every side assignment the dependences
allow, of the computed bytes defined before the barrier and read after it (loads excluded: LLO
loads them again). Solved as an s-t minimum cut (Edmonds-Karp).

  python3 bench/tpu/mincut_vs_program_order.py tests/data/tpu/heldout_families.jsonl.gz [KIND,...] \
      > docs/validation/data/tpu/mincut-vs-program-order.txt

Each line: id, libtpu's spill slots, the slots plus the register file (32 vregs on v4, 64 on
v5e-v7x), the program-order figure and the minimum cut (largest over the body's barriers). An
experiment, not the model: bytes are counted as VregBytes does them in outline (tiles padded,
16-bit packed but widened on v4-v5p, replicated axes one tile), without the replay's other rules
(a dot's computed operands, reassembled or sliced values, part-tile concatenations). Plain Python 3.
"""

import gzip, json, re, sys
from collections import defaultdict, deque

RED = {"reduce_sum","reduce_max","reduce_min","argmax","argmin","cumsum","reduce_prod","cummax","cumlogsumexp"}
LOADS = {"get","load"}

def parse(graph):
    regions = []
    for m in re.finditer(r"program \{(.*?)\n    \}", graph, re.S):
        body = m.group(1)
        vals = re.findall(r'values: "([^"]*)"', body)
        ops = []
        for om in re.finditer(r"ops \{([^}]*)\}", body):
            t = om.group(1)
            name = re.search(r'op: "([^"]+)"', t).group(1)
            ops.append((name, [int(x) for x in re.findall(r"operands: (\d+)", t)],
                        [int(x) for x in re.findall(r"results: (\d+)", t)], [int(x) for x in re.findall(r"axes: (\d+)", t)]))
        regions.append((vals, ops))
    return regions

def vbytes(t, widen):
    if t == "ref": return 0
    m = re.match(r"(\w+)\[([\d,]*)\]", t)
    if not m or not m.group(2): return 0
    dt, dims = m.group(1), [int(d) for d in m.group(2).split(",")]
    bits = 32 if dt in ("f32","i32","u32","i1") else 16 if dt in ("bf16","f16","i16") else 8
    if widen: bits = 32
    pack = 32 // bits
    if len(dims) == 1: dims = [1] + dims
    rows = 1 if "sublanes" in t and "replicated" in t else -(-dims[-2] // (8*pack)) * 8 * pack
    cols = 1 if "lanes replicated" in t or "sublanes and lanes" in t else -(-dims[-1] // 128) * 128
    if "sublanes replicated" in t: rows = 8*pack
    if "lanes replicated" in t and "sublanes and" not in t: cols = 128
    lead = 1
    for d in dims[:-2]: lead *= d
    return lead * rows * cols * bits // 8

def maxflow(edges, s, t):
    """The maximum s-t flow (= the minimum cut) of `edges` (a, b, capacity)."""
    cap = defaultdict(int); adj = defaultdict(set)
    for a, b, c in edges:
        cap[(a,b)] += c; adj[a].add(b); adj[b].add(a)
    flow = 0
    while True:
        par = {s: None}; q = deque([s])
        while q and t not in par:
            x = q.popleft()
            for y in adj[x]:
                if y not in par and cap[(x,y)] > 0:
                    par[y] = x; q.append(y)
        if t not in par: return flow
        f = float("inf"); y = t
        while par[y] is not None: f = min(f, cap[(par[y], y)]); y = par[y]
        y = t
        while par[y] is not None: cap[(par[y], y)] -= f; cap[(y, par[y])] += f; y = par[y]
        flow += f

def is_barrier(op):
    name, ins, outs, axes = op
    if name in RED or name == "dot_general": return True
    if name == "transpose" and len(axes) >= 2 and axes[-2:] != sorted(axes[-2:]): return True
    return False

def held(vals, ops, widen):
    INF = 1 << 50
    defined = {}
    loaded = set()
    for i, (name, ins, outs, _) in enumerate(ops):
        for r in outs:
            defined[r] = i
            if name in LOADS: loaded.add(r)
    users = defaultdict(set)
    for i, (_, ins, _, _) in enumerate(ops):
        for v in ins: users[v].add(i)
    best_po, best_mc = 0, 0
    for b, op in enumerate(ops):
        if not is_barrier(op): continue
        # ancestors / descendants of b
        anc, st = set(), [b]
        while st:
            x = st.pop()
            for v in ops[x][1]:
                d = defined.get(v)
                if d is not None and d not in anc: anc.add(d); st.append(d)
        desc, st = set(), [b]
        while st:
            x = st.pop()
            for r in ops[x][2]:
                for u in users[r]:
                    if u not in desc: desc.add(u); st.append(u)
        w = lambda v: 0 if (v in loaded or v in ops[b][2]) else vbytes(vals[v], widen)
        # program order
        po = sum(w(v) for v in range(len(vals)) if defined.get(v, -1) < b and any(u > b for u in users[v]))
        # min cut: S = before (with b), T = after
        S, T = "S", "T"
        edges = []
        for a in anc | {b}: edges.append((S, ("o", a), INF))
        for d in desc: edges.append((("o", d), T, INF))
        for i, (_, ins, _, _) in enumerate(ops):
            for v in ins:
                d = defined.get(v)
                if d is not None: edges.append((("o", i), ("o", d), INF))  # i in S => d in S
        for v in range(len(vals)):
            if not users[v] or w(v) == 0: continue
            d = defined.get(v)
            src = ("o", d) if d is not None else S
            edges.append((src, ("v", v), w(v)))
            for u in users[v]:
                if u == b: continue
                edges.append((("v", v), ("o", u), INF))
        mc = maxflow(edges, S, T)
        best_po, best_mc = max(best_po, po), max(best_mc, mc)
    return best_po, best_mc

path, kinds = sys.argv[1], set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
for line in gzip.open(path, "rt"):
    r = json.loads(line)
    if r.get("header") or "graph" not in r: continue
    if kinds and r["kind"] not in kinds: continue
    res = r.get("result") or {}
    if res.get("spill_bytes") is None: continue
    widen = r["gen"] in ("v4","v5e","v5p")
    po = mc = 0
    for vals, ops in parse(r["graph"]):
        a, b = held(vals, ops, widen); po = max(po, a); mc = max(mc, b)
    file = 32*4096 if r["gen"] == "v4" else 64*4096
    print(r["id"], "slots", res["spill_bytes"], "slots+file", res["spill_bytes"] + file, "po", po, "mincut", mc)
