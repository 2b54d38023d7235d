#!/usr/bin/env python3
"""Triton's own allocation lit tests, read by scratchsim's TTGIR importer as a peer's suite.

Given a Triton lit file that states shared-memory figures (test/Analysis/test-allocation.mlir:
`// CHECK: offset = N, size = M` under FileCheck, or `// expected-remark @below {{offset = N,
size = M}}` under -verify-diagnostics), this runs `simulate --ttgir` on every function of every
module (one module per function, its callees kept as private functions, as Triton's
ModuleAllocation plans each function on its own) and reports, per function and overall, the
statements reproduced, those that differ (Triton's figure against ours) and the functions the
importer refuses (its exit-2 message). Nothing here is Triton's code: the lit files are read, not
copied, and are never committed (docs/validation/triton-lit.md says why and how to get them).

    triton_lit_check.py [--simulate build/simulate] [--release 3.9] [--json] FILE.mlir ...
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
from typing import Dict, Iterable, List, Optional, Tuple

# What Triton's TestAllocation pass prints: per op, its scratch buffer ("scratch offset", or
# "virtual offset" for a call, whose scratch is the callee's frame) and each result's explicit
# buffer ("offset"); per function, "size = <its shared memory>".
STATEMENT = re.compile(r"^(?:(scratch|virtual) )?offset = (\d+), size = (\d+)$")
TOTAL = re.compile(r"^size = (\d+)$")

CHECK_LINE = re.compile(r"^\s*//\s*([A-Z][A-Z0-9_-]*?)(-NEXT|-LABEL|-NOT|-SAME|-DAG)?:\s?(.*?)\s*$")
REMARK_LINE = re.compile(r"^\s*//\s*expected-remark\s*(@below|@above|@\+\d+|@-\d+)?\s*\{\{(.*)\}\}\s*$")
FUNC_HEADER = re.compile(r"^\s*tt\.func\s+(?:(public|private|nested)\s+)?@([\w$.]+)")
MODULE_HEADER = re.compile(r"^\s*module\b")
ALIAS = re.compile(r"^\s*#[\w$.-]+\s*=")
CALL = re.compile(r"\btt\.call\s+@([\w$.]+)")
# Names scratchsim gives an imported buffer: "b<plan index>_<value name or op name>".
BUFFER_NAME = re.compile(r"^b(\d+)_(.*)$")
SCRATCH_PREFIXES = ("tt_", "ttg_", "ttng_", "amdg_", "gpu_", "nvg_", "nvws_", "triton_")


@dataclasses.dataclass
class Expectation:
    """One figure the lit file states."""

    line: int          # in the lit file
    style: str         # "CHECK", "CHECK-NEXT" or "remark"
    text: str          # the pattern as written: "offset = 0, size = 512", "size = 1024"
    op_line: int = 0   # remark style: the lit line of the op it is attached to
    op_value: str = ""  # that op's first result ("%cst0"), or "" (no result, or the function)
    op_name: str = ""   # that op's name ("ttg.local_alloc"), "tt.func" for the function


@dataclasses.dataclass
class Function:
    name: str
    header_line: int        # lit line of "tt.func"
    lines: List[Tuple[int, str]]  # (lit line, text) of the function, header to closing brace
    callees: List[str]
    expectations: List[Expectation]


@dataclasses.dataclass
class Module:
    chunk: int
    line: int
    attributes: str         # the "module attributes {...} {" line
    functions: List[Function]


@dataclasses.dataclass
class Outcome:
    function: str
    module_line: int
    reproduced: List[Tuple[Expectation, str]]
    mismatched: List[Tuple[Expectation, str]]   # (expected, ours)
    refused: str = ""                            # simulate's message when it refused
    unexpected: List[str] = dataclasses.field(default_factory=list)  # ours, stated by nothing
    replaced: List[str] = dataclasses.field(default_factory=list)    # stand-ins written (--stand-ins)


def _code(text: str) -> str:
    """The text of a line without its comment."""
    cut = text.find("//")
    return text if cut < 0 else text[:cut]


def active_prefixes(text: str) -> Tuple[List[str], bool]:
    """The FileCheck prefixes the RUN lines check with the default scratch sizes, and whether
    a RUN line verifies remarks. A RUN line with another scratch-size function (Triton's
    `get-scratch-size-function=ValidConstant`: every scratch 128 bytes) checks a test-only rule."""
    prefixes: List[str] = []
    remarks = False
    for line in text.splitlines():
        m = re.match(r"^\s*//\s*RUN:(.*)$", line)
        if not m:
            continue
        run = m.group(1)
        if "get-scratch-size-function" in run:
            continue
        if "-verify-diagnostics" in run:
            remarks = True
        if "FileCheck" in run:
            p = re.search(r"--check-prefix(?:es)?=([\w,-]+)", run)
            prefixes.extend(p.group(1).split(",") if p else ["CHECK"])
    return prefixes, remarks


def split_chunks(text: str) -> List[Tuple[int, List[str]]]:
    """The file's parts at `// -----` (mlir's -split-input-file), each with its first line."""
    chunks: List[Tuple[int, List[str]]] = []
    start, current = 1, []
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*//\s*-----\s*$", line):
            chunks.append((start, current))
            start, current = number + 1, []
        else:
            current.append(line)
    chunks.append((start, current))
    return chunks


def _next_op(lines: List[Tuple[int, str]], index: int) -> int:
    """Index of the first line at or after `index` that holds code (not a comment, not blank)."""
    while index < len(lines) and not _code(lines[index][1]).strip():
        index += 1
    return index


def _op_of(text: str) -> Tuple[str, str]:
    """(first result, op name) of an op line: ("%cst0", "ttg.local_alloc")."""
    code = _code(text).strip()
    value = ""
    m = re.match(r"^(%[\w$.-]+)(?::\d+)?(?:\s*,\s*%[\w$.-]+)*\s*=\s*(.*)$", code)
    if m:
        value, code = m.group(1), m.group(2)
    name = re.match(r'^"?([\w$.]+)', code)
    return value, name.group(1) if name else ""


def parse_modules(text: str) -> Tuple[List[Module], List[str], List[str]]:
    """Modules and their functions with the figures stated for them, the alias lines every module
    needs, and the expectations no function holds (reported, never dropped)."""
    prefixes, remarks = active_prefixes(text)
    modules: List[Module] = []
    aliases: List[str] = []
    stray: List[str] = []
    for chunk, (first, raw) in enumerate(split_chunks(text)):
        lines = [(first + i, t) for i, t in enumerate(raw)]
        depth = 0
        module: Optional[Module] = None
        func: Optional[Function] = None
        pending: List[Tuple[int, str, str]] = []  # stated before the op they belong to
        for index, (number, line) in enumerate(lines):
            code = _code(line)
            check = CHECK_LINE.match(line)
            remark = REMARK_LINE.match(line) if remarks else None
            if check and check.group(1) in prefixes and (check.group(2) or "") in ("", "-NEXT"):
                style = check.group(1) + (check.group(2) or "")
                style = "CHECK-NEXT" if check.group(2) == "-NEXT" else "CHECK"
                pending.append((number, style, check.group(3)))
            elif remark and (remark.group(1) or "@below") == "@below":
                at = _next_op(lines, index + 1)
                op_line, op_text = lines[at] if at < len(lines) else (0, "")
                value, name = _op_of(op_text)
                if FUNC_HEADER.match(op_text):
                    value, name = "", "tt.func"
                pending.append((number, "remark", remark.group(2), op_line, value, name))  # type: ignore[arg-type]
            if depth == 0 and ALIAS.match(code):
                aliases.append(code.rstrip())
            if depth == 0 and MODULE_HEADER.match(code):
                module = Module(chunk, number, code.strip(), [])
                modules.append(module)
            header = FUNC_HEADER.match(code)
            if header and module is not None and func is None:
                func = Function(header.group(2), number, [], [], [])
                module.functions.append(func)
                # Statements made before the function's header belong to it (CHECK-LABEL's
                # neighbours, remarks `@below` the header).
                for p in pending:
                    func.expectations.append(_expectation(p))
                pending = []
            if func is not None:
                func.lines.append((number, line))
                func.callees.extend(c for c in CALL.findall(code) if c not in func.callees)
                for p in pending:
                    func.expectations.append(_expectation(p))
                pending = []
            depth += code.count("{") - code.count("}")
            if func is not None and depth <= 1 and code.strip().startswith("}"):
                func = None
            if depth == 0 and module is not None and code.strip() == "}":
                module = None
        for p in pending:
            stray.append(f"line {p[0]}: {p[2]}")
    return modules, aliases, stray


def _expectation(p: tuple) -> Expectation:
    if p[1] == "remark":
        return Expectation(p[0], "remark", p[2], p[3], p[4], p[5])
    return Expectation(p[0], p[1], p[2])


# Test-only constructs of the lit files and what --stand-ins writes for them: ops with the same
# effect on allocation that a TTGIR of Triton 3.6 or 3.9 can hold. A view (memdesc_reinterpret)
# aliases its operand's buffer and, its result unused, ends nowhere later than itself.
UNREGISTERED_USE = re.compile(r'^(\s*)"use"\((%[\w$.#-]+)\)\s*:\s*\((!ttg\.memdesc<[^()]*>)\)\s*->\s*\(\)\s*$')
SUBVIEW = re.compile(r"^(\s*%[\w$.-]+\s*=\s*)ttg\.memdesc_subview\s+(%[\w$.-]+)\[[^\]]*\]\s*:\s*(.*)$")
UNNAMED_ALLOC = re.compile(r"^(\s*)(ttg\.local_alloc\b.*)$")


def anonymous_value(lit_line: int) -> str:
    """The name --stand-ins gives a local_alloc whose result the lit text leaves unnamed."""
    return f"%anon_L{lit_line}"


def stand_in(lit_line: int, code: str) -> Tuple[str, str]:
    """(the line as the importer reads it, what was replaced or "") for one line of code."""
    m = UNREGISTERED_USE.match(code)
    if m:
        return (f"{m.group(1)}%use_L{lit_line} = ttg.memdesc_reinterpret {m.group(2)} : {m.group(3)} -> {m.group(3)}",
                'unregistered "use" op -> ttg.memdesc_reinterpret')
    m = SUBVIEW.match(code)
    if m:
        return (f"{m.group(1)}ttg.memdesc_reinterpret {m.group(2)} : {m.group(3)}",
                "ttg.memdesc_subview (pre-3.6) -> ttg.memdesc_reinterpret")
    m = UNNAMED_ALLOC.match(code)
    if m:
        return (f"{m.group(1)}{anonymous_value(lit_line)} = {m.group(2)}", "unnamed ttg.local_alloc result -> named")
    return code, ""


def module_text(module: Module, function: Function, aliases: List[str], stand_ins: bool = False,
                replaced: Optional[List[str]] = None) -> str:
    """One module holding `function` as its kernel and its callees (transitively) as private
    functions: the unit scratchsim's importer plans, and the one Triton plans per function.
    With `stand_ins`, the lit files' test-only constructs are rewritten (stand_in), each named
    in `replaced`."""
    by_name = {f.name: f for f in module.functions}
    order, todo = [function.name], list(function.callees)
    while todo:
        name = todo.pop(0)
        if name in order or name not in by_name:
            continue
        order.append(name)
        todo.extend(by_name[name].callees)
    out = list(aliases) + [module.attributes]
    for i, name in enumerate(order):
        f = by_name[name]
        for j, (number, line) in enumerate(f.lines):
            code = _code(line).rstrip()
            if stand_ins and j > 0:
                code, what = stand_in(number, code)
                if what and replaced is not None:
                    replaced.append(f"line {number}: {what}")
            if j == 0:
                code = FUNC_HEADER.sub(lambda m: m.group(0).replace(
                    m.group(0)[m.group(0).find("tt.func"):m.group(0).find("@")],
                    "tt.func public " if i == 0 else "tt.func private "), code, count=1)
            out.append(code)
    out.append("}")
    return "\n".join(out) + "\n"


@dataclasses.dataclass
class Ours:
    """scratchsim's plan of one function, in Triton's order (its buffers b0, b1, ...)."""

    buffers: List[Tuple[str, str, int, int]]  # (kind "", "scratch" or "virtual", key, offset, size)
    total: int

    def printed(self) -> List[str]:
        """What Triton's TestAllocation would print for this plan, in its order."""
        lines = [(f"{kind} " if kind else "") + f"offset = {off}, size = {size}"
                 for kind, _, off, size in self.buffers]
        return lines + [f"size = {self.total}"]


def run_simulate(simulate: str, text: str, release: str, workdir: str, name: str) -> Tuple[Optional[Ours], str]:
    path = os.path.join(workdir, f"{name}.ttgir")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, SCRATCHSIM_TRITON_RELEASE=release)
    proc = subprocess.run([simulate, "--device", "h100", "--ttgir", path, "--format", "json"],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        message = (proc.stderr or proc.stdout).strip().splitlines()
        return None, message[-1] if message else f"exit {proc.returncode}"
    report = json.loads(proc.stdout)
    return ours_from_report(report), ""


def ours_from_report(report: dict) -> Ours:
    """The buffers of the report's shared-memory placements, by plan index."""
    found: Dict[int, Tuple[str, str, int, int]] = {}
    total = 0
    for space in report.get("spaces", []):
        if space.get("kind", "SMEM") not in ("SMEM", "MEMORY_KIND_SMEM") and space.get("space") != "smem":
            continue
        total = int(space.get("peak_bytes", 0))
        for p in space.get("placements", []):
            m = BUFFER_NAME.match(p["buffer"])
            if not m or int(p.get("copy", 0)) != 0:
                continue
            key = m.group(2)
            kind = "virtual" if key == "tt_call" else "scratch" if key.startswith(SCRATCH_PREFIXES) else ""
            found[int(m.group(1))] = (kind, key, int(p.get("offset", 0)), int(p.get("size_bytes", 0)))
    return Ours([found[k] for k in sorted(found)], total)


def in_op_order(function: Function, ours: Ours) -> Ours:
    """Our buffers in the order Triton's TestAllocation prints them, its walk over the function's
    ops (an explicit buffer at the local_alloc of its name, a scratch buffer at the next op of its
    kind), which is not always the plan's order; buffers no op claims keep their place at the end."""
    left = list(range(len(ours.buffers)))
    order: List[int] = []
    for number, line in function.lines[1:]:
        value, name = _op_of(line)
        if not name:
            continue
        if name == "ttg.local_alloc":
            pattern = value_pattern(value or anonymous_value(number))
            pick = next((i for i in left if not ours.buffers[i][0] and pattern.fullmatch(ours.buffers[i][1])), None)
        else:
            pick = next((i for i in left if ours.buffers[i][0] and ours.buffers[i][1] == _sanitized(name)), None)
        if pick is not None:
            left.remove(pick)
            order.append(pick)
    return Ours([ours.buffers[i] for i in order + left], ours.total)


def compare_checks(expectations: List[Expectation], printed: List[str]) -> Tuple[list, list]:
    """FileCheck's reading of CHECK / CHECK-NEXT (substring matches, in order) against what
    Triton would print for our plan. A CHECK-NEXT that does not match reports our next line."""
    reproduced, mismatched = [], []
    pos = 0
    for e in expectations:
        if e.style == "CHECK-NEXT":
            ours = printed[pos] if pos < len(printed) else "(nothing)"
            if e.text in ours:
                reproduced.append((e, ours))
            else:
                mismatched.append((e, ours))
            pos += 1
            continue
        hit = next((i for i in range(pos, len(printed)) if e.text in printed[i]), None)
        if hit is None:
            # FileCheck stops here; to go on, the statement is taken to be our next line of its
            # kind, and the lines after it are read from there.
            same = next((i for i in range(pos, len(printed)) if _kind_of(printed[i]) == _kind_of(e.text)), None)
            mismatched.append((e, printed[same] if same is not None else "(nothing)"))
            if same is not None:
                pos = same + 1
        else:
            reproduced.append((e, printed[hit]))
            pos = hit + 1
    return reproduced, mismatched


def _kind_of(text: str) -> str:
    """"total" for a function's size, else "buffer": FileCheck's substring match lets
    `offset = 0, size = 8` match a scratch or virtual buffer's line too."""
    return "total" if TOTAL.match(text.strip()) else "buffer"


def _sanitized(value: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", value.lstrip("%"))


def value_pattern(value: str) -> "re.Pattern[str]":
    """The buffer names scratchsim gives the local_alloc of `value`: a name used again in a
    sibling region is another value ("a_1"), and names inside a warp-specialize partition carry
    the partition's scope ("3.1/%x" -> "_1__x")."""
    return re.compile(r"(?:.*__)?" + re.escape(_sanitized(value)) + r"(_\d+)?")


def compare_remarks(function: str, expectations: List[Expectation], ours: Ours) -> Tuple[list, list, list]:
    """-verify-diagnostics' reading: each remark a substring of one our plan attaches to the same
    op. Ops are matched by their result's name (explicit buffers), by op name in order (scratch),
    the function's own remarks to the total and the buffers of no op (warp-group bytes)."""
    pool = [(kind, key, f"{kind + ' ' if kind else ''}offset = {off}, size = {size}")
            for kind, key, off, size in ours.buffers]
    used = [False] * len(pool)
    reproduced, mismatched = [], []
    for e in expectations:
        if e.text == function or not re.search(r"\bsize = \d+", e.text):
            continue  # the function's name, printed as a remark of its own
        if e.op_name == "tt.func":
            if TOTAL.match(e.text):
                ours_total = f"size = {ours.total}"
                (reproduced if ours_total == e.text else mismatched).append((e, ours_total))
                continue
            candidates = [i for i, (k, key, _) in enumerate(pool) if not used[i] and key.startswith(("tt_func", "function"))]
        elif e.op_name == "ttg.local_alloc":
            name = value_pattern(e.op_value or anonymous_value(e.op_line))
            candidates = [i for i, (k, key, _) in enumerate(pool) if not used[i] and k == "" and name.fullmatch(key)]
        else:
            key = _sanitized(e.op_name)
            candidates = [i for i, (k, kk, _) in enumerate(pool) if not used[i] and k and kk == key]
        hit = next((i for i in candidates if e.text in pool[i][2]), None)
        if hit is None:
            hit_text = pool[candidates[0]][2] if candidates else "(nothing)"
            if candidates:
                used[candidates[0]] = True
            mismatched.append((e, hit_text))
        else:
            used[hit] = True
            reproduced.append((e, pool[hit][2]))
    unexpected = [pool[i][2] for i in range(len(pool)) if not used[i]]
    return reproduced, mismatched, unexpected


def check_file(path: str, simulate: str, release: str, workdir: str,
               stand_ins: bool = False) -> Tuple[List[Outcome], List[str]]:
    with open(path) as f:
        text = f.read()
    modules, aliases, stray = parse_modules(text)
    outcomes: List[Outcome] = []
    for module in modules:
        for function in module.functions:
            stated = [e for e in function.expectations if STATEMENT.match(e.text.strip()) or TOTAL.match(e.text.strip())
                      or (e.style == "remark" and re.search(r"\bsize = \d+", e.text))]
            if not stated:
                continue
            replaced: List[str] = []
            text = module_text(module, function, aliases, stand_ins, replaced)
            ours, refused = run_simulate(simulate, text, release, workdir, f"{module.chunk}_{function.name}")
            if ours is None:
                outcomes.append(Outcome(function.name, module.line, [], [], refused, replaced=replaced))
                continue
            if stated[0].style == "remark":
                rep, mis, extra = compare_remarks(function.name, stated, ours)
                outcomes.append(Outcome(function.name, module.line, rep, mis, "", extra, replaced))
            else:
                rep, mis = compare_checks(stated, in_op_order(function, ours).printed())
                outcomes.append(Outcome(function.name, module.line, rep, mis, replaced=replaced))
    return outcomes, stray


def summarize(path: str, outcomes: List[Outcome], stray: List[str], counts: Dict[str, int]) -> dict:
    total = sum(counts.values())
    reproduced = sum(len(o.reproduced) for o in outcomes)
    refused = [o for o in outcomes if o.refused]
    return {
        "file": path,
        "statements": total,
        "reproduced": reproduced,
        "mismatched": sum(len(o.mismatched) for o in outcomes),
        "in_refused_functions": sum(counts.get(o.function, 0) for o in refused),
        "functions": len(outcomes),
        "functions_refused": len(refused),
        "unattached": stray,
        "per_function": [
            {"function": o.function, "stated": counts.get(o.function, 0), "reproduced": len(o.reproduced),
             "mismatched": [{"line": e.line, "expected": e.text, "ours": ours} for e, ours in o.mismatched],
             "refused": o.refused, "unexpected": o.unexpected, "stand_ins": o.replaced}
            for o in outcomes
        ],
    }


def count_statements(path: str) -> Dict[str, int]:
    with open(path) as f:
        return count_statements_text(f.read())


def count_statements_text(text: str) -> Dict[str, int]:
    """Figures the file states, per function (a remark naming the function states none)."""
    modules, _, _ = parse_modules(text)
    counts: Dict[str, int] = {}
    for m in modules:
        for fn in m.functions:
            n = sum(1 for e in fn.expectations
                    if (e.style != "remark" and (STATEMENT.match(e.text.strip()) or TOTAL.match(e.text.strip())))
                    or (e.style == "remark" and e.text != fn.name and re.search(r"\bsize = \d+", e.text)))
            if n:
                counts[fn.name] = counts.get(fn.name, 0) + n
    return counts


def print_text(summary: dict) -> None:
    print(f"{summary['file']}: {summary['reproduced']} of {summary['statements']} statements reproduced, "
          f"{summary['mismatched']} differ, {summary['functions_refused']} of {summary['functions']} functions refused "
          f"({summary['in_refused_functions']} statements in them)")
    for f in summary["per_function"]:
        if f["refused"]:
            print(f"  {f['function']}: refused: {f['refused']}")
            continue
        state = "ok" if not f["mismatched"] else "DIFFERS"
        print(f"  {f['function']}: {f['reproduced']}/{f['stated']} {state}"
              + (f" (stand-ins: {'; '.join(f['stand_ins'])})" if f["stand_ins"] else ""))
        for m in f["mismatched"]:
            print(f"    line {m['line']}: Triton '{m['expected']}', ours '{m['ours']}'")
        for u in f["unexpected"]:
            print(f"    ours, stated by no remark: '{u}'")
    for s in summary["unattached"]:
        print(f"  not attached to a function: {s}")


def main(argv: Optional[Iterable[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--simulate", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "simulate"))
    parser.add_argument("--release", default="3.9", choices=["3.6", "3.9"], help="whose allocation rules judge")
    parser.add_argument("--workdir", default=None, help="where the per-function modules are written")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stand-ins", action="store_true",
                        help="rewrite the test-only constructs (unregistered \"use\" ops, ttg.memdesc_subview, unnamed "
                             "local_alloc results) as ops of the same effect that 3.6/3.9 TTGIR holds, each named")
    args = parser.parse_args(list(argv) if argv is not None else None)
    import tempfile
    workdir = args.workdir or tempfile.mkdtemp(prefix="triton_lit_")
    os.makedirs(workdir, exist_ok=True)
    summaries = []
    for path in args.files:
        outcomes, stray = check_file(path, args.simulate, args.release, workdir, args.stand_ins)
        summaries.append(summarize(path, outcomes, stray, count_statements(path)))
    if args.json:
        print(json.dumps(summaries, indent=1))
    else:
        for s in summaries:
            print_text(s)
        print(f"overall: {sum(s['reproduced'] for s in summaries)} of {sum(s['statements'] for s in summaries)} "
              f"statements reproduced (release {args.release} rules{', with stand-ins' if args.stand_ins else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
