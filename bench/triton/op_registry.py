# The ops the installed Triton registers in its TTGIR dialects (tt, ttg, ttng, amdg), and which of
# them the TTGIR parser classifies (kKnownOps in backends/triton/ttgir_parser.cc): issue 36's
# "every op Triton emits". Candidates are the dialect-prefixed names among libtriton's strings;
# each is confirmed by Triton's own MLIR parser (a registered op fails its verifier, an unknown
# one is "unregistered"). Prints, and with --out writes, one line per registered op:
# "<op>\t<classified|refused>".
#
#   python bench/triton/op_registry.py --out docs/validation/data/triton/op_registry_<version>.tsv
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_kernels import known_ops  # noqa: E402

import triton  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402

DIALECTS = ("tt", "ttg", "ttng", "amdg")


def candidates():
    lib = glob.glob(os.path.join(triton.__path__[0], "_C", "libtriton*.so"))[0]
    words = subprocess.run(["strings", "-n", "4", lib], capture_output=True, text=True, check=True).stdout.split()
    pattern = re.compile(r"(%s)\.[a-z_][a-z_0-9]*" % "|".join(DIALECTS))
    return sorted({w for w in words if pattern.fullmatch(w)})


def registered(ctx, name):
    """Whether Triton's parser knows `name`: its diagnostic (on stderr) says so."""
    fd, path = tempfile.mkstemp(suffix=".mlir")
    os.write(fd, ('module {\n  "%s"() : () -> ()\n}\n' % name).encode())
    os.close(fd)
    err = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.dup2(err.fileno(), 2)
    try:
        ir.parse_mlir_module(path, ctx)
    except Exception:  # noqa: BLE001 - a verifier error is expected; the diagnostic decides
        pass
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.unlink(path)
    err.seek(0)
    return b"unregistered operation" not in err.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    ctx = ir.context()
    ir.load_dialects(ctx)
    from triton._C.libtriton import amd, nvidia
    nvidia.load_dialects(ctx)
    amd.load_dialects(ctx)
    # tt.func is read as a function header, not an op of the parser's list.
    known = set(known_ops()) | {"tt.func"}
    lines = [f"{op}\t{'classified' if op in known else 'refused'}" for op in candidates() if registered(ctx, op)]
    header = f"# ops registered by Triton {triton.__version__} in {', '.join(DIALECTS)}; bench/triton/op_registry.py"
    text = "\n".join([header] + lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
