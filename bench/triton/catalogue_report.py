# Tables of the CPU catalogue for docs/triton-fixtures.md: fixtures per kind and target (per
# version), out-of-resources counts, compile errors grouped by message, compile times.
#
#   python3 bench/triton/catalogue_report.py [--catalogue tests/data/triton/catalogue]
import argparse
import collections
import glob
import json
import os
import re
import statistics


def load(root):
    out = {}
    for idx in sorted(glob.glob(os.path.join(root, "*", "index.json"))):
        d = json.load(open(idx))
        out[os.path.basename(os.path.dirname(idx))] = d
    return out


def short_error(r):
    errs = r.get("stderr_errors") or []
    specific = [e for e in errs if "Failures have been detected" not in e]
    if specific:
        msg = specific[0].split(" error: ", 1)[-1]
    else:
        text = r.get("error", "")
        m = re.search(r"(\w+Error\(.*?\)|\w+Error: [^\n]*)\s*$", text.strip())
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        msg = lines[-1] if lines else text
        if m:
            msg = m.group(1)
        if "PassManager::run failed" in text:
            note = re.search(r"Pipeline failed while executing \[(.*?)\]", text + " ".join(errs))
            msg = "PassManager::run failed" + (" in " + note.group(1) if note else "")
    msg = re.sub(r"^\S+\.py:\d+:\d+: (note|error): ", "", msg)
    msg = re.sub(r": reproducer generated at.*", "", msg)
    msg = re.sub(r"\d{3,}", "N", msg)
    return msg[:220]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalogue", default="tests/data/triton/catalogue")
    args = ap.parse_args()
    data = load(args.catalogue)
    for v, d in data.items():
        info, recs = d["info"], d["records"]
        targets = info["targets"]
        print("## Triton %s\n" % v)
        ok = [r for r in recs if r["verdict"] != "compile_error"]
        times = [r["compile_s"] for r in ok]
        print("%d configurations, %d compiled (%d out of resources), %d compile errors; "
              "wall %.0f s; compile_s median %.3f, p90 %.3f, max %.2f, sum %.0f s\n" %
              (len(recs), len(ok), sum(r["verdict"] == "out_of_resources" for r in ok),
               len(recs) - len(ok), info["wall_s"], statistics.median(times),
               sorted(times)[int(0.9 * len(times))], max(times), sum(times)))
        print("Compiled fixtures (of which out of resources) per kind and target:\n")
        print("| kind | " + " | ".join(targets) + " | all |")
        print("|---|" + "---:|" * (len(targets) + 1))
        kinds = sorted({r["kind"] for r in recs})
        c = collections.Counter((r["kind"], r["target"]) for r in ok)
        o = collections.Counter((r["kind"], r["target"]) for r in ok
                                if r["verdict"] == "out_of_resources")
        for k in kinds:
            cells = []
            for t in targets:
                cells.append("%d" % c[(k, t)] + (" (%d)" % o[(k, t)] if o[(k, t)] else ""))
            print("| %s | %s | %d |" % (k, " | ".join(cells), sum(c[(k, t)] for t in targets)))
        tot = collections.Counter(r["target"] for r in ok)
        toto = collections.Counter(r["target"] for r in ok if r["verdict"] == "out_of_resources")
        print("| **all** | %s | **%d** |" % (" | ".join("**%d** (%d)" % (tot[t], toto[t])
                                                     for t in targets), len(ok)))
        print()
        groups = collections.defaultdict(lambda: collections.defaultdict(set))
        for r in recs:
            if r["verdict"] == "compile_error":
                groups[(r["kind"], short_error(r))][r["target"]].add(r["id"])
        if groups:
            print("Compile errors (kind, targets with count, message):\n")
            for (k, msg), ts in sorted(groups.items()):
                tl = ", ".join("%s %d" % (t, len(ts[t])) for t in targets if t in ts)
                print("- %s [%s]: `%s`" % (k, tl, msg.replace("`", "'")))
            print()
        per_t = collections.defaultdict(list)
        for r in ok:
            per_t[r["target"]].append(r["compile_s"])
        print("Compile time per target (median / p90 / max s): " + "; ".join(
            "%s %.2f / %.2f / %.1f" % (t, statistics.median(per_t[t]),
                                       sorted(per_t[t])[int(0.9 * len(per_t[t]))],
                                       max(per_t[t])) for t in targets if per_t[t]))
        print()
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(args.catalogue, v, "*")))
        print("Size on disk: %.1f MB\n" % (size / 1e6))
        # The specialization regimes: same configuration and target, jit vs none.
        byid = {r["id"]: r for r in ok}
        pairs = diff = 0
        dk = collections.Counter()
        for r in ok:
            if r["regime"] != "jit":
                continue
            o = byid.get(r["id"].replace("_jit_", "_none_"))
            if o:
                pairs += 1
                if o["shared"] != r["shared"]:
                    diff += 1
                    dk[r["kind"]] += 1
        print("Regimes: %d (jit, none) pairs compiled, %d with a different `shared` (%s)\n" %
              (pairs, diff, ", ".join("%s %d" % x for x in dk.most_common())))
    vs = list(data)
    if len(vs) >= 2:
        a, b = vs[0], vs[-1]
        ra = {r["id"]: r for r in data[a]["records"]}
        rb = {r["id"]: r for r in data[b]["records"]}
        both = [i for i in rb if i in ra]
        same = diff = 0
        fail = collections.Counter()
        dk = collections.defaultdict(lambda: [0, 0])
        for i in both:
            x, y = ra[i], rb[i]
            if (x["verdict"] == "compile_error") != (y["verdict"] == "compile_error"):
                fail[(x["kind"], x["target"], "fails in " + (a if x["verdict"] ==
                                                             "compile_error" else b))] += 1
                continue
            if x["verdict"] == "compile_error":
                continue
            k = (x["kind"], x["target"])
            dk[k][1] += 1
            if x["shared"] == y["shared"]:
                same += 1
            else:
                diff += 1
                dk[k][0] += 1
        print("## %s vs %s\n" % (a, b))
        print("%d configurations in both; compiled by both: %d with the same `shared`, %d "
              "different\n" % (len(both), same, diff))
        print("Different `shared` by kind and target (different / compiled by both):\n")
        kinds = sorted({k for k, t in dk})
        targets = data[b]["info"]["targets"]
        print("| kind | " + " | ".join(targets) + " |")
        print("|---|" + "---:|" * len(targets))
        for k in kinds:
            print("| %s | %s |" % (k, " | ".join(
                "%d / %d" % tuple(dk[(k, t)]) if (k, t) in dk else "-" for t in targets)))
        print()
        if fail:
            print("Compiled by one version only:\n")
            for (k, t, w), n in sorted(fail.items()):
                print("- %s %s: %d %s" % (k, t, n, w))
            print()


if __name__ == "__main__":
    main()
