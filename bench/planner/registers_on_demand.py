"""How many compiles `early_prune(top_k=K, registers=True)` needs when it compiles only what its
ranking puts first, against compiling every configuration (issue 34).

    python3 bench/planner/registers_on_demand.py build/simulate [--parts fit] [--top-k 1,3,5,10]

With registers=True early_prune ranks with the registers ptxas allocates. Compiling every
configuration of a 288-config space costs 90-190 s on a 2-core CPU; compiling on demand ranks with
the estimate, compiles the configurations placed in the first K (or 2K) of the autotuning
shortlist, ranks again with their figures, and repeats until those are all compiled figures. This replays both
ways over the workload suite's Triton matmul rows with the figures the H200 sweeps recorded
(tests/data/planner/compiled-registers/triton_matmul.registers.json standing in for the compiler),
and prints per part and K: the compiles each way, and on how many rows the first K (as a list, and
as a set) are the same. A configuration the estimate prunes for register spills is never placed, so
on demand compiles those first (K+, K++) or never (K); where the full compile ranks such a
configuration in its first K, the row is counted under "pruned by the estimate".
"""
import argparse
import collections
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_workload_plans import COMPUTE_DTYPE, ELT, plan  # noqa: E402
from workloads import suite  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRAPH = "models/graphs/triton_matmul.pbtxt"
TABLE = os.path.join(ROOT, "tests", "data", "planner", "compiled-registers", "triton_matmul.registers.json")


def key_of(params, elt):
    return tuple(sorted([f"{k}={v}" for k, v in params.items()] + [f"ELT={elt}"]))


def shortlist(binary, row, dtype, table, entries, workdir, allow_spills=False):
    """The planner's shortlist (config keys, in order) with the compiled figures of `entries`."""
    registers = []
    if entries:
        path = os.path.join(workdir, "registers.json")
        with open(path, "w") as f:
            json.dump(dict(table, configs=entries), f)
        registers = [path]
    pj = plan(binary, "h200", [GRAPH], {"M": row["M"], "N": row["N"], "K": row["K"], "ELT": ELT[dtype]},
              COMPUTE_DTYPE[dtype], registers=registers, allow_spills=allow_spills)
    return [key_of(c["params"], ELT[dtype]) for c in pj["shortlist"]]


def on_demand(binary, row, dtype, table, by_key, k, workdir, unplaced=(), head=1):
    """(the first K, compiles) compiling only what the ranking places in its first head x K, after
    `unplaced`: the configurations that fit shared memory but the estimate prunes (for register
    spills), which only a compile can bring back."""
    compiled = set(unplaced)
    while True:
        order = shortlist(binary, row, dtype, table, [by_key[c] for c in sorted(compiled) if c in by_key], workdir)
        missing = [c for c in order[:head * k] if c not in compiled]
        if not missing:
            return order[:k], len(compiled)
        compiled.update(missing)  # a key the record lacks compiled to nothing: the estimate stands


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--parts", default=None, help="comma-separated parts (default: every part with matmul rows)")
    p.add_argument("--top-k", default="1,3,5,10")
    args = p.parse_args()
    with open(TABLE) as f:
        table = json.load(f)
    by_key = {tuple(sorted(e["sets"])): e for e in table["configs"]}
    tops = [int(k) for k in args.top_k.split(",")]
    parts = set(args.parts.split(",")) if args.parts else None
    stats = collections.defaultdict(lambda: collections.Counter())
    with tempfile.TemporaryDirectory() as workdir:
        for row in suite()["matmul"]:
            if parts and row["part"] not in parts:
                continue
            for dtype in ("f16", "f32"):
                elt = ELT[dtype]
                space = sum(1 for c in by_key if f"ELT={elt}" in c)
                full = shortlist(binary := args.binary, row, dtype, table, list(table["configs"]), workdir)
                estimate = set(shortlist(binary, row, dtype, table, [], workdir))
                # What the estimate prunes for register spills alone (early_prune's rule).
                unplaced = set(shortlist(binary, row, dtype, table, [], workdir, allow_spills=True)) - estimate
                for k in tops:
                    for mode, given, head in (("", (), 1), ("+", unplaced, 1), ("++", unplaced, 2)):
                        first, compiles = on_demand(binary, row, dtype, table, by_key, k, workdir, given, head)
                        s = stats[(row["part"], dtype, k, mode)]
                        s["rows"] += 1
                        s["compiles"] += compiles
                        s["space"] += space
                        s["same_list"] += first == full[:k]
                        s["same_set"] += set(first) == set(full[:k])
                        s["pruned_by_estimate"] += any(c not in estimate for c in full[:k])
    print("part       dtype  K  rows | compiles on demand (mean) / every config | first K: same list, same set | "
          "full's first K holds a config the estimate prunes")
    print("(K+: on demand after compiling the configurations the estimate prunes; K++: the same, compiling the "
          "first 2K)")
    totals = collections.defaultdict(collections.Counter)
    for (part, dtype, k, mode), s in sorted(stats.items()):
        totals[(dtype, k, mode)].update(s)
        print(f"{part:10} {dtype:5} {k:2}{mode:2} {s['rows']:4} | {s['compiles'] / s['rows']:6.1f} / {s['space'] / s['rows']:5.0f} | "
              f"{s['same_list']:4} {s['same_set']:4} | {s['pruned_by_estimate']:4}")
    for (dtype, k, mode), s in sorted(totals.items()):
        print(f"{'all':10} {dtype:5} {k:2}{mode:2} {s['rows']:4} | {s['compiles'] / s['rows']:6.1f} / {s['space'] / s['rows']:5.0f} | "
              f"{s['same_list']:4} {s['same_set']:4} | {s['pruned_by_estimate']:4}")


if __name__ == "__main__":
    main()
