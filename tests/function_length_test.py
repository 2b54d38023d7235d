#!/usr/bin/env python3
"""Functions a reader can hold: no function body in sim/ or backends/ runs past 150 lines.

Usage: function_length_test.py [SOURCE_DIR]. Scans every non-test C++ source (.cc, .h; not
*_test.cc, test_util or testdata headers), prints `file:line name N lines` for each function
longer than the limit, counted from its signature's first line to its closing brace, and exits 1
if there is any. Lambdas and local classes count as part of their enclosing function.

The scan is a brace matcher, not a parser: it drops comments, string, raw string and character
literals and preprocessor lines, then tells a function body from a namespace, class or
initializer brace by the declaration in front of it.
"""

import os
import re
import sys

LIMIT = 150
ROOTS = ("sim", "backends")
SUFFIXES = (".cc", ".h")

IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
NUMBER = re.compile(r"\.?\d(?:[\w.']|[eEpP][+-])*")
RAW_STRING = re.compile(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(')
TYPE_KEYWORDS = {
    "alignas", "auto", "bool", "char", "const", "decltype", "double", "float", "int", "long",
    "noexcept", "requires", "short", "signed", "sizeof", "unsigned", "void", "volatile",
}
ACCESS = {"public", "private", "protected"}


def is_test_source(name):
    return (name.endswith("_test.cc") or "test_util" in name or "testdata" in name)


def sources(root):
    for top in ROOTS:
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SUFFIXES) and not is_test_source(name):
                    yield os.path.join(directory, name)


def tokens(text):
    """Yields (token, line) with comments, literals and preprocessor lines left out."""
    i, line, n = 0, 1, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and at_line_start:  # a directive, with its continuation lines
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        raw = RAW_STRING.match(text, i)
        if raw:
            closing = ")" + raw.group(1) + '"'
            end = text.find(closing, raw.end())
            end = n if end < 0 else end + len(closing)
            line += text.count("\n", i, end)
            i = end
            yield '""', line
            continue
        identifier = IDENTIFIER.match(text, i)
        if identifier:
            word = identifier.group(0)
            i = identifier.end()
            if i < n and text[i] in "'\"" and word in ("u8", "u", "U", "L"):
                continue  # an encoding prefix: the literal follows
            yield word, line
            continue
        number = NUMBER.match(text, i)
        if number:  # digit separators (1'000) are part of the number, not a character literal
            i = number.end()
            yield "0", line
            continue
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":  # an unterminated literal ends at the line
                    break
                j += 1
            i = j + 1
            yield '""', line
            continue
        if text.startswith("::", i):
            yield "::", line
            i += 2
            continue
        yield c, line
        i += 1


def is_macro(name):
    return name.isupper() and "_" in name  # ABSL_LOCKS_EXCLUDED(mu): an annotation, not the name


def function_name(header):
    """The (qualified) name declared in front of the first top-level parameter list."""
    words = [token for token, _ in header]
    for k, token in enumerate(words):
        if token != "(" or k == 0:
            continue
        name = words[k - 1]
        if name == ")" and k >= 3 and words[k - 3:k - 1] == ["operator", "("]:
            start = k - 3  # operator()
        elif IDENTIFIER.fullmatch(name) and name not in TYPE_KEYWORDS and not is_macro(name):
            start = k - 1
        elif k >= 2 and "operator" in words[max(0, k - 3):k]:
            start = words.index("operator", max(0, k - 3))
        else:
            continue
        while start >= 2 and words[start - 1] == "::" and IDENTIFIER.fullmatch(words[start - 2]):
            start -= 2
        if start >= 1 and words[start - 1] == "~":
            start -= 1
        return "".join(words[start:k if words[k - 1] != ")" else k])
    return "?"


def classify(header):
    """What the brace after HEADER opens: 'scope' (namespace, class), 'function' or 'other'."""
    words = without_template_parameters([token for token, _ in header])
    for word in words:
        if word == "(":
            break
        if word in ("namespace", "class", "struct", "union", "enum", "extern"):
            return "scope"
    if ")" not in words or "=" in top_level_before_paren(words):
        return "other"
    depth = 0
    for word in words:
        depth += {"(": 1, ")": -1}.get(word, 0)
    if depth != 0:
        return "other"
    if in_initializer_list(words) and (IDENTIFIER.fullmatch(words[-1]) or words[-1] == ">"):
        return "other"  # a member's brace initializer: Foo() : member_{...} {
    return "function"


def without_template_parameters(words):
    """WORDS less any `template <...>` lists, whose `class` declares no class."""
    out, k = [], 0
    while k < len(words):
        if words[k] == "template" and k + 1 < len(words) and words[k + 1] == "<":
            depth, k = 0, k + 1
            while k < len(words):
                depth += {"<": 1, ">": -1}.get(words[k], 0)
                k += 1
                if depth == 0:
                    break
            continue
        out.append(words[k])
        k += 1
    return out


def top_level_before_paren(words):
    """WORDS up to the first parameter list or `operator` (whose `=` assigns nothing here)."""
    out = []
    for word in words:
        if word in ("(", "operator"):
            break
        out.append(word)
    return out


def in_initializer_list(words):
    depth, seen_parameters = 0, False
    for word in words:
        if word == "(":
            depth += 1
        elif word == ")":
            depth -= 1
            seen_parameters = seen_parameters or depth == 0
        elif word == ":" and depth == 0 and seen_parameters:
            return True
    return False


def long_functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    found = []
    stack = []  # (kind, header, opening line) per open brace
    header = []
    for token, line in tokens(text):
        inside_function = any(kind in ("function", "other") for kind, _, _ in stack)
        if token == "{":
            kind = "other" if inside_function else classify(strip_access(header))
            stack.append((kind, strip_access(header), line))
            header = []
        elif token == "}":
            if not stack:
                continue
            kind, opened_by, _ = stack.pop()
            if kind == "other" and not any(k in ("function", "other") for k, _, _ in stack):
                header = opened_by + [("{", line), ("}", line)]  # the declaration goes on
            else:
                header = []
            if kind == "function" and opened_by:
                length = line - opened_by[0][1] + 1
                if length > LIMIT:
                    found.append((opened_by[0][1], function_name(opened_by), length))
        elif not inside_function:
            if token == ";":
                header = []
            else:
                header.append((token, line))
    return found


def strip_access(header):
    while header and header[0][0] in ACCESS | {":"}:
        header = header[1:]
    return header


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    offenders = []
    for path in sources(root):
        for line, name, length in long_functions(path):
            offenders.append(f"{os.path.relpath(path, root)}:{line} {name} {length} lines")
    for offender in offenders:
        print(offender)
    if offenders:
        print(f"{len(offenders)} function(s) over {LIMIT} lines: split them along their phases")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
