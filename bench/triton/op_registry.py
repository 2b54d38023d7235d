# The ops the installed Triton registers in its TTGIR dialects (tt, ttg, ttng, amdg), and which of
# them the TTGIR parser classifies (kKnownOps in backends/triton/ttgir_parser.cc): issue 36's
# "every op Triton emits". Candidates are the dialect-prefixed names among libtriton's strings;
# each is confirmed by Triton's own MLIR parser (a registered op fails its verifier, an unknown
# one is "unregistered"). Prints, and with --out writes, one line per registered op:
# "<op>\t<classified|refused>", a refused op followed by why no fixture classifies it (REFUSED).
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

# Why a registered op stays refused: no kernel writes it into TTGIR (asm["ttgir"]), so no fixture
# can show its figure (bench/triton/make_op_fixtures.py has the kernels that reach the others).
# "After TTGIR" ones were seen first in the LLVM-IR stage's IR (MLIR_ENABLE_DUMP=1, Triton 3.9.0).
AFTER_TTGIR = "made after the TTGIR is written, by the LLVM-IR stage's "
NOT_REACHED = "no Python or Gluon API writes it, and no kernel compiled here left one in its TTGIR"
REFUSED = {
    "amdg.async_wait": AFTER_TTGIR + "update-async-wait-count pass (from ttg.async_wait)",
    "amdg.async_tdm_intrinsic_wait": AFTER_TTGIR + "update-async-wait-count pass (from amdg.async_tdm_wait)",
    "ttng.tmem_wait": AFTER_TTGIR + "tmem-wait-insertion pass, after the allocation",
    "ttg.warp_id": AFTER_TTGIR + "lowering to LLVM (warp-specialized and cluster kernels)",
    "tt.descriptor_reduce": "lowered before the TTGIR is written on every target: to ttng.async_tma_reduce from "
                            "a shared tile (sm_90, sm_100), to tt.atomic_rmw / amdg.buffer_atomic_rmw elsewhere",
    "amdg.concat": NOT_REACHED + " (not the LDS-splitting conversions of tests/data/triton/lds either)",
    "amdg.masked_load": NOT_REACHED + " (masked loads on gfx942/gfx950/gfx1250 become amdg.buffer_load)",
    "amdg.masked_store": NOT_REACHED + " (as amdg.masked_load)",
    "amdg.local_load_packed_tranposed": NOT_REACHED + " (Triton 3.6's name; 3.9 spells it "
                                        "local_load_packed_transposed and Gluon writes that)",
    "ttg.mask": NOT_REACHED + " (a pipeliner op; pipelined loops here show none)",
    "ttg.predicate_stage": NOT_REACHED + " (as ttg.mask)",
    "ttg.local_barrier": NOT_REACHED + " (Triton 3.6)",
    "ttng.cluster_arrive": NOT_REACHED + " (Triton 3.6: num_ctas=2 kernels show none)",
    "ttng.cluster_wait": NOT_REACHED + " (as ttng.cluster_arrive)",
    "ttng.clc_try_cancel_sync": NOT_REACHED + " (Gluon's clc.try_cancel writes ttng.clc_try_cancel)",
    "ttng.fence_mbarrier_init_release_cluster": AFTER_TTGIR + "membar pass (a 2-CTA sm_100 kernel "
                                                "initializing an mbarrier)",
}


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
    lines = [f"{op}\tclassified" if op in known else f"{op}\trefused\t{REFUSED.get(op, 'not yet tried')}"
             for op in candidates() if registered(ctx, op)]
    header = f"# ops registered by Triton {triton.__version__} in {', '.join(DIALECTS)}; bench/triton/op_registry.py"
    text = "\n".join([header] + lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
