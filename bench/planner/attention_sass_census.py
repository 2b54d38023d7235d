"""The instructions of the planner's attention kernel's KV loop (bench/python/triton_kernels.py
attn_fwd_kernel) as ptxas emits them for sm_90, on the CPU: per configuration, each opcode's count
in one warp's loop body and per score the warp's thread holds (BLOCK_M x BLOCK_N / threads), the
figures the attention graph's softmax cost assumes (models/graphs/triton_attention.pbtxt,
sync_cycles: one exp2 and 3.5 fp32-rate operations per score, one multiply per accumulator
element; docs/validation/planner-h200-workloads.md, "Attention: the softmax's instructions").

    python3 bench/planner/attention_sass_census.py [--head-dims 64,128]   # Triton 3.6 installed (its ptxas, nvdisasm)

The loop is the longest backward branch of the disassembly.
"""
import argparse
import collections
import itertools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triton"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import triton_compile as tc  # noqa: E402
from attention_ttgir_schedule import compile_attention  # noqa: E402

# The opcodes the softmax and the accumulator rescale issue per score or per element.
SOFTMAX_OPS = ("MUFU", "FFMA", "FMNMX", "FADD", "FMUL", "F2FP")


def disassemble(cubin):
    import triton
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True, check=True).stdout


def loop_opcodes(sass):
    """Opcode counts of the longest backward branch's body."""
    label_at, pending, ops = {}, None, []
    for line in sass.splitlines():
        label = re.match(r"\s*\.L_x_(\d+):", line)
        if label:
            pending = label.group(1)
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        if pending is not None:
            label_at[pending], pending = addr, None
        target = re.search(r"\.L_x_(\d+)", line) if m.group(2) == "BRA" else None
        ops.append((addr, m.group(2), target.group(1) if target else None))
    loops = [(addr - label_at[t], label_at[t], addr) for addr, op, t in ops if t in label_at and label_at[t] < addr]
    if not loops:
        return collections.Counter()
    _, lo, hi = max(loops)
    return collections.Counter(op for addr, op, _ in ops if lo <= addr <= hi)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--head-dims", default="64,128")
    args = p.parse_args()
    tc.install_stop_hook(False)
    print("HD BLOCK_M/N/stages/warps  loop instrs  " + "  ".join(f"{op:>6}" for op in SOFTMAX_OPS) +
          "   per score: MUFU  FFMA+FMNMX+FADD+F2FP/2   FMUL per acc element")
    for hd in (int(x) for x in args.head_dims.split(",")):
        for bm, bn, stages, warps in itertools.product((64, 128), (32, 64, 128), (3,), (4, 8)):
            try:
                k = compile_attention("sm_90", hd, bm, bn, stages, warps)
            except Exception as e:  # noqa: BLE001 (a configuration ptxas refuses is reported, not fatal)
                print(f"{hd:<3}{bm}/{bn}/{stages}/{warps:<16} compile error: {str(e).splitlines()[0][:100]}")
                continue
            ops = loop_opcodes(disassemble(k.asm["cubin"]))
            threads = warps * 32
            scores = bm * bn / threads
            acc = bm * hd / threads
            fp32 = (ops["FFMA"] + ops["FMNMX"] + ops["FADD"] + ops["F2FP"] / 2) / scores
            print(f"{hd:<3}{bm}/{bn}/{stages}/{warps:<16}{sum(ops.values()):>11}  " +
                  "  ".join(f"{ops[op]:>6}" for op in SOFTMAX_OPS) +
                  f"   {ops['MUFU'] / scores:15.2f}  {fp32:22.2f}   {ops['FMUL'] / acc:20.2f}")


if __name__ == "__main__":
    main()
