"""Instruction mix of the CUDA GEMM's inner loop per K element, from `cuobjdump -sass` of
scratchsim_cuda (docs/validation/planner-h100.md, "Issue efficiency against warps per scheduler"): per tile, the backward-branch loop
with the most FFMAs, its opcodes per K element and its FFMA operand-reuse flags.

usage: cuobjdump -sass scratchsim_cuda > sass.txt; python3 cuda_gemm_sass_mix.py sass.txt
"""
import collections
import re
import sys

TILES = [("f32", 64, 64, 32, 4), ("f32", 128, 128, 32, 4), ("f32", 64, 128, 32, 4), ("f32", 128, 128, 32, 8),
         ("f16", 128, 128, 32, 4), ("f16", 128, 128, 32, 8), ("f16", 64, 128, 32, 4), ("f16", 32, 128, 32, 4),
         ("f16", 64, 64, 32, 4), ("f16", 64, 128, 32, 8)]


def functions(path):
    """{(dtype, BM, BN, BK, warps): [(address, instruction text), ...]} of the GEMM kernels."""
    out = {}
    for part in open(path).read().split("Function : ")[1:]:
        name = part.split("\n", 1)[0]
        m = re.search(r"TiledGemmKernelI(6__half|f)Li(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELb0E", name)
        if not m:
            continue
        key = ("f16" if m.group(1) == "6__half" else "f32",) + tuple(int(x) for x in m.groups()[1:])
        out[key] = [(int(a, 16), text.strip())
                    for a, text in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", part)]
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def hottest_loop(instructions):
    """The body of the backward branch that encloses the most FFMAs."""
    best = []
    for address, text in instructions:
        target = re.search(r"0x([0-9a-f]+)", text)
        if opcode(text).startswith("BRA") and target and int(target.group(1), 16) < address:
            lo = int(target.group(1), 16)
            body = [t for a, t in instructions if lo <= a <= address]
            if sum(opcode(t).startswith("FFMA") for t in body) > sum(opcode(t).startswith("FFMA") for t in best):
                best = body
    return best


def main():
    kernels = functions(sys.argv[1])
    for key in TILES:
        body = hottest_loop(kernels[key])
        ffma = [t for t in body if opcode(t).startswith("FFMA")]
        _, bm, bn, _, warps = key
        k_elements = len(ffma) / (4 * (bm * bn // (128 * warps)))  # 4 kTm FFMAs per K element
        mix = collections.Counter(opcode(t).split(".")[0] for t in body)
        per_k = ", ".join(f"{op} {n / k_elements:.1f}" for op, n in mix.most_common(8))
        reuse = sum(t.count(".reuse") for t in ffma)
        print(f"{key}: {len(body)} instructions for {k_elements:g} K elements, FFMA reuse flags "
              f"{reuse / len(ffma):.2f} per FFMA; per K element: {per_k}")


if __name__ == "__main__":
    main()
