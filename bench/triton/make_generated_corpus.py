# Compiles the kernels generated from the op list (op_kernels.py: a template per way the front
# end emits each TTGIR op) for one Triton release on a CPU-only machine, with the held-out
# corpus's machinery (make_heldout_corpus.compile_corpus: make_catalogue's worker, records and
# writers), and writes tests/data/triton/generated/<release>/: index.json (every configuration,
# compiled or not, with the listed ops its TTGIR contains) and <target>.tar.gz of <id>.ttgir.
#
#   nice -n 10 /tmp/venv-bench/bin/python bench/triton/make_generated_corpus.py \
#       --out tests/data/triton/generated/3.6.0
#   /tmp/venv-bench/bin/python bench/triton/make_generated_corpus.py --coverage \
#       tests/data/triton/generated/3.6.0 tests/data/triton/generated/3.9.0
#
# The cross product (templates x shapes x dtypes x num_warps 1, 2, 4, 8 x targets) is far over a
# CPU budget; it is sampled deterministically, each template to its quota, every target and warp
# count dealt round-robin, the shape and dtype drawn by a generator seeded with the template's
# name: the same configurations in every release, so the next release is a re-run.
import argparse
import hashlib
import json
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_heldout_corpus as mh  # noqa: E402

WARPS = [1, 2, 4, 8]
# Configurations per template: about 420 per release in all, more where the op has more
# layouts, dtypes or pipelining choices.
QUOTA = {"dot": 60, "reduce": 44, "tma": 36, "dot_scaled": 30, "scan": 28, "cvt": 28,
         "shape": 28, "gather": 20, "sort": 20, "trans": 20, "atomic": 20, "elementwise": 20,
         "histogram": 12, "desc_gather": 12, "block_ptr": 12, "call": 12, "debug": 8, "while": 8,
         "inline_asm": 8}
# Register tiles beyond this many elements per thread make the CPU compile minutes long (and
# spill in any real kernel): such a shape is not drawn for so few warps.
MAX_PER_THREAD = 512


def _kinds():
    import op_kernels as ok
    return {g: dict(fn=s["fn"], types=s["types"], div16=set(s.get("div16", ())), unit=set(),
                    what=g, with_params=False)
            for g, s in ok.GENERATORS.items()}


def _elements(p):
    dims = [p[k] for k in ("BM", "BN", "BK", "BX", "BY") if p.get(k)]
    if "BK" in p and "BM" in p and "BN" in p and p.get("TRANS_B") is not None:
        return p["BM"] * p["BN"] + p["BK"] * (p["BM"] + p["BN"])
    n = 1
    for d in dims:
        n *= d
    return n


def make_configs():
    import op_kernels as ok
    C = []
    for gen, spec in ok.GENERATORS.items():
        targets = spec.get("targets", ok.TARGETS)
        rng = random.Random("generated:" + gen)
        for i in range(QUOTA[gen]):
            target = targets[i % len(targets)]
            nw = WARPS[i % len(WARPS)]
            dt = spec["dtypes"][(i // len(targets)) % len(spec["dtypes"])]
            valid = spec.get("valid", lambda p, dt, nw, t: True)
            fits = [p for p in spec["params"] if _elements(p) <= MAX_PER_THREAD * 32 * nw and
                    valid(p, dt, nw, target)]
            if not fits:
                continue  # no shape of the template is valid for this dtype and target
            params = dict(rng.choice(fits))
            ns = rng.choice(spec.get("stages", [1]))
            ptr_dt, out_dt, extra = ok.dtypes_of(gen, dt)
            params.update(extra)
            c = dict(kind=gen, dtype=ptr_dt, out_dtype=out_dt, params=params, num_warps=nw,
                     num_stages=ns, options=dict(spec.get("options", {})), target=target,
                     regime="jit", part=1)
            C.append(c)
    # Part 2, added after part 1's coverage report: configurations directed at the ops part 1's
    # sample missed, at the warps and tiles their lowering needs (tensor-core MMAs and tensor
    # memory at 4+ warps and 128-row tiles, AMD's direct-to-LDS loads and ping-pong schedule at
    # 8 warps and 256-wide tiles, warp specialization).
    gemm = lambda bm, bn, bk, tb=False: dict(BM=bm, BN=bn, BK=bk, TRANS_B=tb)  # noqa: E731
    for gen, dt, params, nw, ns, targets in [
            ("dot", "fp16", gemm(128, 128, 64), 4, 3, ok.TARGETS),
            ("dot", "bf16", gemm(128, 256, 64, True), 8, 2, ok.TARGETS),
            ("dot", "fp16", gemm(256, 256, 64), 8, 2, ok.AMD),
            ("dot", "fp8e4nv", gemm(128, 128, 128), 4, 3, ["sm_90", "sm_100", "gfx950"]),
            ("dot", "tf32", gemm(128, 64, 32), 4, 3, ["sm_80", "sm_90", "sm_100", "gfx942"]),
            ("dot_scaled", "e4m3", dict(BM=128, BN=128, BK=128), 4, 1, ok.TARGETS),
            ("dot_scaled", "e2m1", dict(BM=128, BN=128, BK=128), 4, 1, ok.TARGETS),
            ("dot_scaled", "e5m2", dict(BM=64, BN=128, BK=128), 8, 1, ["sm_100", "gfx950"]),
            ("tma", "fp16", dict(BM=128, BN=128, BK=64, OP=1), 4, 3, ok.TARGETS),
            ("tma", "fp16", dict(BM=128, BN=128, BK=64, OP=2), 4, 3, ["sm_90", "sm_100"]),
            ("tma", "bf16", dict(BM=64, BN=64, BK=64, OP=0), 4, 1, ok.TARGETS),
            ("desc_gather", "fp16", dict(BX=32, BY=64), 4, 1, ok.TARGETS),
            ("block_ptr", "fp16", dict(BM=64, BN=64), 4, 3, ok.TARGETS),
            ("elementwise", "fp32", dict(BN=256, OP=0), 4, 1, ok.TARGETS),
            ("atomic", "i32", dict(BN=128, OP=2), 4, 1, ok.TARGETS),
    ]:
        for target in targets:
            ptr_dt, out_dt, extra = ok.dtypes_of(gen, dt)
            C.append(dict(kind=gen, dtype=ptr_dt, out_dtype=out_dt, params=dict(params, **extra),
                          num_warps=nw, num_stages=ns,
                          options=dict(ok.GENERATORS[gen].get("options", {})), target=target,
                          regime="jit", part=2))
    for c in C:
        key = json.dumps([c["kind"], c["dtype"], c["out_dtype"], c["params"], c["num_warps"],
                          c["num_stages"], c["options"], c["target"]], sort_keys=True)
        c["cfg_hash"] = hashlib.sha1(key.encode()).hexdigest()[:10]
        c["id"] = "%s_%s_jit_%s" % (c["kind"], c["target"], c["cfg_hash"])
    # Duplicates (a small grid drawn twice) compile once.
    seen, out = set(), []
    for c in C:
        if c["id"] not in seen:
            seen.add(c["id"])
            out.append(c)
    return out


def add_ops(rec):
    import op_kernels as ok
    if rec.get("ttgir"):
        found = ok.ops_in(rec["ttgir"])
        rec["ops"] = sorted(found & set(ok.listed_ops()))
        rec["unlisted_ops"] = sorted(o for o in found if o not in set(ok.known_ops()))


def coverage(dirs):
    """Markdown: every listed op, the templates meant to reach it, and in how many compiled
    kernels of each release it occurs; an op no kernel contains is named with its reason."""
    import op_kernels as ok
    runs = []
    for d in dirs:
        idx = json.load(open(os.path.join(d, "index.json")))
        runs.append((idx["info"]["triton"], idx["records"]))
    head = "| op | templates | " + " | ".join("kernels with it, %s" % v for v, _ in runs) + \
        " | note |"
    lines = [head, "|---|---|" + "---:|" * len(runs) + "---|"]
    uncovered = []
    for op in ok.listed_ops():
        how = ok.OPS.get(op, ok.PASS_ONLY + "not in op_kernels.OPS")
        counts = [sum(op in r.get("ops", ()) for r in recs) for _, recs in runs]
        if isinstance(how, str):
            gens, note = "-", how
        else:
            gens, note = ", ".join(how), ""
        if not any(counts) and not note:
            note = "uncovered: " + ok.NOT_REACHED.get(
                op, "the templates compiled, none of their kernels has it")
        if not any(counts) and how != ok.FIXTURE_ONLY:
            uncovered.append(op)
        lines.append("| `%s` | %s | %s | %s |" % (op, gens, " | ".join(map(str, counts)), note))
    unlisted = {}
    for v, recs in runs:
        for r in recs:
            for o in r.get("unlisted_ops", ()):
                unlisted.setdefault(o, set()).add(v)
    lines.append("")
    fixture_only = sum(ok.OPS.get(op) == ok.FIXTURE_ONLY for op in ok.listed_ops())
    lines.append("%d listed ops, %d in at least one compiled kernel, %d with no template (a "
                 "registered-op fixture each: tests/data/triton/ops_registered), %d in none." % (
                     len(ok.listed_ops()), len(ok.listed_ops()) - len(uncovered) - fixture_only,
                     fixture_only, len(uncovered)))
    if unlisted:
        lines.append("Ops in compiled kernels that the parser does not list: " + ", ".join(
            "`%s` (%s)" % (o, ", ".join(sorted(v))) for o, v in sorted(unlisted.items())) + ".")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--targets", default=",".join(mh.TARGETS))
    ap.add_argument("--kinds", default="", help="templates to compile (default: all)")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--extend", action="store_true")
    ap.add_argument("--coverage", nargs="+", metavar="RELEASE_DIR",
                    help="print the coverage table of compiled releases and stop")
    args = ap.parse_args()
    if args.coverage:
        print(coverage(args.coverage))
        return
    targets = set(args.targets.split(","))
    todo = [c for c in make_configs() if c["target"] in targets and
            (not args.kinds or c["kind"] in set(args.kinds.split(",")))]
    if args.list:
        for c in todo:
            print(c["id"], c["dtype"], json.dumps(c["params"]), c["num_warps"], c["num_stages"])
        print(len(todo), "configurations")
        return
    mh.compile_corpus(args, todo, _kinds, dict(kinds=sorted(_kinds()), max_per_thread=
                                               MAX_PER_THREAD), "make_generated_corpus.py",
                      on_record=add_ops, index_keys=["ops", "unlisted_ops"])


if __name__ == "__main__":
    main()
