# Inventory of the TTGIR constructs in fixture sets: op names, attribute encodings (#ttg.*,
# #ttng.*, ...) with the keys each one carries, types (!ttg.memdesc, !tt.tensordesc, ...),
# memdesc forms, and attribute names. Compares the CPU catalogue (per version and target)
# with the GPU fixtures of tests/data/triton (ttgir.tar.gz) and the catalogue's versions with
# each other, and says in which kinds each new construct appears.
#
#   python3 bench/triton/ttgir_inventory.py [--catalogue tests/data/triton/catalogue]
#       [--old tests/data/triton/ttgir.tar.gz] [--json OUT.json] [--markdown OUT.md]
import argparse
import collections
import glob
import json
import os
import re
import sys
import tarfile

OP_RE = re.compile(r'^\s*(?:%[\w#:, %]+=\s*)?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?[\s(<{:@]')
OP_RE2 = re.compile(r'^\s*(?:%[\w#:, %]+=\s*)?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?\s*$')
ATTR_ENC_RE = re.compile(r'#([a-z_]+)\.([a-z_0-9]+)')
TYPE_RE = re.compile(r'!([a-z_]+)\.([a-z_0-9.]+)')
ENC_BODY_RE = re.compile(r'#([a-z_]+\.[a-z_0-9]+)<\{([^<>]*(?:<[^<>]*>[^<>]*)*)\}>')
KEY_RE = re.compile(r'(?:^|[,{]\s*)([A-Za-z_][\w.]*)\s*=')
ATTR_NAME_RE = re.compile(r'"?\b((?:tt|ttg|ttng|amdgpu|nvws|ttig|gluon|proton|loop|allocation)'
                          r'\.[A-Za-z_][\w.-]*)"?\s*=')
MEMDESC_RE = re.compile(r'!ttg\.memdesc<([^<>]*(?:<[^<>]*>[^<>]*)*)>')
PLAIN_ENC_RE = re.compile(r'#([a-z_]+\.[a-z_0-9]+)<(\w+\s*=[^<>{}]*)>')
PADDED_RE = re.compile(r'#([a-z_]+\.[a-z_0-9]+)<\[[^\]]*\]\s*\{((?:[^{}])*)\}>')
SHORT_MEMDESC_RE = re.compile(r'->\s*<(\d+(?:x\d+)*x[A-Za-z]\w*,\s*#[^<>]*)>')
TENSORDESC_RE = re.compile(r'!tt\.tensordesc<([^<>]*(?:<[^<>]*>[^<>]*)*)>')
VALUE_RE = re.compile(r'%([A-Za-z_$.\-][\w$.\-]*)')
DICT_RE = re.compile(r'\{([^{}]*)\}')
NEST_RE = re.compile(r'<[^<>]*>|\[[^\[\]]*\]|"[^"]*"|\([^()]*\)')
DICT_KEY_RE = re.compile(r'(?:^|,)\s*"?([A-Za-z_][\w.\-]*)"?\s*(?==|,|$)')


def dict_keys(content):
    """Keys of an attribute dictionary's text ('a = 1, b, c = [..]' -> a, b, c)."""
    prev = None
    while prev != content:
        prev, content = content, NEST_RE.sub("_", content)
    return [m.group(1) for m in DICT_KEY_RE.finditer(content.strip())]


def tensordesc_form(body):
    body = re.sub(r"\b\d+(x\d+)*x[A-Za-z][A-Za-z0-9]*\b", "SHAPExT", body)
    return re.sub(r"#\w+", "#enc", body)


def memdesc_form(body):
    """'128x64xf16, #shared, #smem, mutable' -> 'SHAPExT, #enc, #space, mutable'."""
    parts = [p.strip() for p in body.split(",")]
    out = []
    for i, p in enumerate(parts):
        if i == 0:
            out.append("SHAPExT")
        elif re.fullmatch(r"[0-9x]+", p):
            out.append("ALLOCSHAPE")
        elif p.startswith("#"):
            out.append("#enc" if i == 1 else "#space")
        else:
            out.append(p)
    return ", ".join(out)


def scan(text):
    """Sets of constructs in one TTGIR module."""
    ops, encs, types, attrs, forms = set(), set(), set(), set(), set()
    op_keys, tdesc, vchars = set(), set(), set()
    enc_keys = collections.defaultdict(set)
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#loc"))
    for line in body.splitlines():
        s = line.strip()
        if not s or s.startswith("#loc") or s.startswith("}") and len(s) < 3:
            continue
        if s.startswith("#") and " = #" in s:
            pass
        else:
            m = OP_RE.match(s) or OP_RE2.match(s)
            if m and not s.startswith("#") and not s.startswith("!"):
                ops.add(m.group(1))
                # Attribute dictionaries on the op's line (not its regions).
                rest = re.sub(r'loc\((?:[^()]|\([^()]*\))*\)', '', s)
                # Encodings inside types (#ttg.slice<{dim = ..}>) are not op attributes.
                prev = None
                while prev != rest:
                    prev, rest = rest, re.sub(r'<\{[^{}]*\}>', '<>', rest)
                for d in DICT_RE.finditer(rest):
                    keys = dict_keys(d.group(1))
                    if keys and m.group(1) not in ("tt.func", "scf.for", "scf.if"):
                        for k in keys:
                            op_keys.add("%s {%s}" % (m.group(1), k))
    for m in ATTR_ENC_RE.finditer(body):
        encs.add("#%s.%s" % (m.group(1), m.group(2)))
    for m in TYPE_RE.finditer(body):
        types.add("!%s.%s" % (m.group(1), m.group(2)))
    for m in ENC_BODY_RE.finditer(body):
        for k in KEY_RE.finditer("{" + m.group(2)):
            enc_keys["#" + m.group(1)].add(k.group(1))
    # key = value lists without braces: #ttng.tensor_memory_encoding<blockM = 128, ...>
    for m in PLAIN_ENC_RE.finditer(body):
        for k in dict_keys(m.group(2)):
            enc_keys["#" + m.group(1)].add(k)
    # padded_shared: #ttg.padded_shared<[512:+8] {offset = [[..]], block = []}>
    for m in PADDED_RE.finditer(body):
        enc_keys["#" + m.group(1)].add("[interval:+pad]")
        for k in dict_keys(m.group(2)):
            enc_keys["#" + m.group(1)].add(k)
    for m in ATTR_NAME_RE.finditer(body):
        attrs.add(m.group(1))
    for m in MEMDESC_RE.finditer(body):
        forms.add(memdesc_form(m.group(1)))
    for m in SHORT_MEMDESC_RE.finditer(body):
        forms.add("short form (no !ttg.memdesc): <" + memdesc_form(m.group(1)) + ">")
    for m in TENSORDESC_RE.finditer(body):
        tdesc.add("!tt.tensordesc<%s>" % tensordesc_form(m.group(1)))
    for m in VALUE_RE.finditer(body):
        for ch in set(m.group(1)) & set(".$-"):
            vchars.add("'%s' in %%names" % ch)
    return dict(ops=ops, encodings=encs, types=types, attrs=attrs, memdesc=forms,
                enc_keys=enc_keys, op_keys=op_keys, tensordesc=tdesc, value_chars=vchars)


def norm_op_line(line):
    """An op's line with values, numbers, aliases, strings and <...> bodies abstracted: its
    printed form."""
    s = re.sub(r'loc\((?:[^()]|\([^()]*\))*\)', '', line).strip()
    prev = None
    while prev != s:
        prev, s = s, re.sub(r'<[^<>]*>', 'T', s)
    s = re.sub(r'%[\w.$-]+(#\d+)?', '%', s)
    s = re.sub(r'#\w+', '#a', s)
    s = re.sub(r'-?\b\d+(\.\d+)?(e[+-]?\d+)?\b', 'N', s)
    s = re.sub(r'"[^"]*"', 'S', s)
    return re.sub(r'\s+', ' ', s)


def op_forms(text, into):
    for ln in text.splitlines():
        if ln.startswith("#") or not ln.strip():
            continue
        s = ln.strip()
        m = OP_RE.match(s) or OP_RE2.match(s)
        if m and m.group(1) not in ("tt.func", ):
            into[m.group(1)].add(norm_op_line(s))


class Acc:
    """Union of constructs over a fixture set, with the kinds each one appears in."""

    def __init__(self):
        self.where = {k: collections.defaultdict(set) for k in
                      ["ops", "encodings", "types", "attrs", "memdesc", "enc_keys", "op_keys",
                       "tensordesc", "value_chars"]}
        self.n = 0
        self.forms = collections.defaultdict(set)

    def add(self, text, kind):
        self.n += 1
        s = scan(text)
        for k in ["ops", "encodings", "types", "attrs", "memdesc", "op_keys", "tensordesc",
                  "value_chars"]:
            for x in s[k]:
                self.where[k][x].add(kind)
        for enc, keys in s["enc_keys"].items():
            for key in keys:
                self.where["enc_keys"]["%s:%s" % (enc, key)].add(kind)

    def keys(self, k):
        return set(self.where[k])


def read_old(path, index_path):
    kinds = {}
    if os.path.exists(index_path):
        for r in json.load(open(index_path))["records"]:
            kinds[r["id"]] = (r["kernel"], "sm_%d" % r["target"])
    per_target = collections.defaultdict(Acc)
    allacc = Acc()
    with tarfile.open(path) as tar:
        for m in tar:
            if not m.isfile():
                continue
            fid = os.path.basename(m.name).rsplit(".ttgir", 1)[0]
            text = tar.extractfile(m).read().decode()
            kind, target = kinds.get(fid, (fid.split("_sm")[0], "sm_" + fid.split("_sm")[1].split("_")[0]))
            per_target[target].add(text, kind)
            allacc.add(text, kind)
    return allacc, per_target


def read_catalogue(root):
    """({version: {target: Acc}}, {version: Acc over the fixtures compiled in every version})"""
    dirs = [d for d in sorted(glob.glob(os.path.join(root, "*")))
            if os.path.isdir(d) and os.path.exists(os.path.join(d, "index.json"))]
    recs = {}
    for d in dirs:
        recs[os.path.basename(d)] = {r["id"]: r for r in json.load(
            open(os.path.join(d, "index.json")))["records"] if r["verdict"] != "compile_error"}
    common = set.intersection(*[set(r) for r in recs.values()]) if recs else set()
    out, out_common = {}, {}
    for d in dirs:
        version = os.path.basename(d)
        out[version] = {}
        out_common[version] = Acc()
        order = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950"]
        tps = sorted(glob.glob(os.path.join(d, "*.tar.gz")),
                     key=lambda p: (order.index(os.path.basename(p)[:-7])
                                    if os.path.basename(p)[:-7] in order else 99, p))
        for tp in tps:
            target = os.path.basename(tp)[:-len(".tar.gz")]
            acc = Acc()
            with tarfile.open(tp) as tar:
                for m in tar:
                    if not m.isfile():
                        continue
                    fid = os.path.basename(m.name)[:-len(".ttgir")]
                    text = tar.extractfile(m).read().decode()
                    acc.add(text, recs[version][fid]["kind"])
                    if fid in common:
                        out_common[version].add(text, recs[version][fid]["kind"])
                        op_forms(text, out_common[version].forms)
            out[version][target] = acc
    return out, out_common


CATS = [("ops", "ops"), ("encodings", "attribute encodings"), ("types", "types"),
        ("memdesc", "memdesc forms"), ("tensordesc", "tensordesc forms"),
        ("enc_keys", "encoding keys"), ("attrs", "attribute names"),
        ("op_keys", "op attribute keys"), ("value_chars", "value-name characters")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalogue", default="tests/data/triton/catalogue")
    ap.add_argument("--old", default="tests/data/triton/ttgir.tar.gz")
    ap.add_argument("--old-index", default="tests/data/triton/index.json")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    old, old_t = read_old(args.old, args.old_index)
    cat, common = read_catalogue(args.catalogue)
    result = {"old": {"fixtures": old.n, **{k: sorted(old.keys(k)) for k, _ in CATS}},
              "versions": {}}
    md = []
    versions = sorted(cat)
    for v in versions:
        vres = {}
        union = Acc()
        for t, acc in cat[v].items():
            new = {}
            for k, _ in CATS:
                new[k] = {x: sorted(acc.where[k][x]) for x in sorted(acc.keys(k) - old.keys(k))}
            vres[t] = {"fixtures": acc.n, "new": new,
                       "all": {k: sorted(acc.keys(k)) for k, _ in CATS}}
            for k, _ in CATS:
                for x, ks in acc.where[k].items():
                    union.where[k][x] |= ks
        result["versions"][v] = vres
        md.append("### Triton %s: constructs absent from the 784 GPU fixtures" % v)
        md.append("")
        targets = list(cat[v])
        for k, title in CATS:
            allnew = sorted(union.keys(k) - old.keys(k))
            if not allnew:
                continue
            md.append("**%s** (targets where it appears; kinds):" % title)
            md.append("")
            for x in allnew:
                ts = [t for t in targets if x in cat[v][t].keys(k)]
                kinds = sorted(union.where[k][x])
                tstr = "all targets" if len(ts) == len(targets) else ", ".join(ts)
                md.append("- `%s`: %s; %s" % (x, tstr, ", ".join(kinds[:8]) +
                                              (", ..." if len(kinds) > 8 else "")))
            md.append("")
    # Per version and target: the memory encodings and the TritonGPU-level ops (ttg, ttng,
    # amdg, nvws) and the tt ops with scratch, all of them, not only the new ones.
    scratch_tt = {"tt.reduce", "tt.scan", "tt.histogram", "tt.gather", "tt.atomic_rmw",
                  "tt.atomic_cas", "tt.atomic_load", "tt.atomic_poll"}
    for v in versions:
        md.append("### Triton %s: memory encodings and TritonGPU ops per target" % v)
        md.append("")
        md.append("New to the importer (absent from the 784 GPU fixtures) in **bold**.")
        md.append("")
        md.append("| target | fixtures | shared / tensor-memory encodings | ops |")
        md.append("|---|---:|---|---|")
        for t, acc in cat[v].items():
            encs = sorted(e for e in acc.keys("encodings")
                          if "shared" in e or "tensor_memory" in e or e == "#ttg.shared_memory")
            ops = sorted(o for o in acc.keys("ops")
                         if o.split(".")[0] in ("ttg", "ttng", "amdg", "nvws") or
                         o in scratch_tt)

            def fmt(xs, k):
                return ", ".join("**`%s`**" % x if x not in old.keys(k) else "`%s`" % x
                                 for x in xs)
            md.append("| %s | %d | %s | %s |" % (t, acc.n, fmt(encs, "encodings"),
                                                fmt(ops, "ops")))
        md.append("")
    if len(versions) >= 2:
        a, b = versions[0], versions[-1]
        md.append("### Triton %s vs %s" % (a, b))
        md.append("")
        md.append("Over the %d configurations compiled by both versions (same id):" %
                  common[a].n)
        md.append("")
        diff = {}
        for k, title in CATS:
            ua = common[a].keys(k)
            ub = common[b].keys(k)
            diff[k] = {"only_" + a: {x: sorted(common[a].where[k][x]) for x in sorted(ua - ub)},
                       "only_" + b: {x: sorted(common[b].where[k][x]) for x in sorted(ub - ua)}}
            if ua - ub or ub - ua:
                for (v, o, only) in [(a, common[a], ua - ub), (b, common[b], ub - ua)]:
                    md.append("**%s** only in %s: %s" % (title, v, "; ".join(
                        "`%s` (%s)" % (x, ", ".join(sorted(o.where[k][x])[:4]) +
                                       (", ..." if len(o.where[k][x]) > 4 else ""))
                        for x in sorted(only)) or "none"))
                    md.append("")
        # Printed forms of the ops both versions use: ops none of whose forms survived, and
        # new forms of the others.
        fa, fb = common[a].forms, common[b].forms
        changed, added = {}, {}
        for op in sorted(set(fa) & set(fb)):
            if not (fa[op] & fb[op]):
                changed[op] = {a: sorted(fa[op])[:3], b: sorted(fb[op])[:3]}
            elif fb[op] - fa[op] and not op.startswith("scf."):
                # (scf ops print their variable-length operand lists: not a syntax change)
                added[op] = sorted(fb[op] - fa[op])[:3]
        diff["op_forms_changed"] = changed
        diff["op_forms_new_in_" + b] = added
        if changed:
            md.append("**Ops printed differently** (every form changed; values `%%`, numbers "
                      "`N`, aliases `#a`, `<...>` bodies `T`):")
            md.append("")
            for op, d in changed.items():
                md.append("- `%s`: %s `%s` -> %s `%s`" % (op, a, d[a][0], b, d[b][0]))
            md.append("")
        if added:
            md.append("**New printed forms in %s** (the old forms remain in use):" % b)
            md.append("")
            for op, forms in added.items():
                md.append("- `%s`: `%s`" % (op, forms[0][:300]))
            md.append("")
        result["version_diff"] = diff
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
            f.write("\n")
    text = "\n".join(md) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
