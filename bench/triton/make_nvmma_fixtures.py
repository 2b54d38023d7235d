# Compiles issue 36's nvmma_shared alignment fixtures on the CPU: the catalogue's flash-attention
# forward (catalogue_kernels.attn_fwd2_kernel) with small heads (HEAD_DIM 16 and 32: operand tiles
# swizzled by 32 or 64 bytes, whose alignment is below 1024), BLOCK_M 64 and 128, BLOCK_N 16, 32
# and 64, num_stages 1 to 3, causal or not, num_warps 4, on sm_100 and sm_90. Writes
# <out>/<triton version>/<id>.ttgir and <out>/<triton version>.tsv; tests/data/triton/nvmma/README.md
# has the run and how the files are packed.
#
#   python bench/triton/make_nvmma_fixtures.py --out tests/data/triton/nvmma
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import catalogue_kernels as ck  # noqa: E402
import triton_compile as tc  # noqa: E402

TYPES = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "M_out": "*fp32", "Out": "*fp16", "sm_scale": "fp32",
         "stride_m": "i32", "N_CTX": "i32"}


def entries():
    fn = ck.attn_fwd2_kernel
    for target, hd, bm, bn, stages, causal in itertools.product(("sm_100", "sm_90"), (16, 32), (64, 128), (16, 32, 64),
                                                                  (1, 2, 3), (0, 1)):
        params = {"HEAD_DIM": hd, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal, "WARP_SPEC": False}
        sig, cons, attrs = tc.build_signature(fn, TYPES, params, "jit", target, div16=("stride_m", "N_CTX"))
        fid = f"attn_{target}_hd{hd}_m{bm}_n{bn}_s{stages}_c{causal}"
        yield (fid, [target, hd, bm, bn, stages, causal], fn, sig, cons, attrs, target,
               {"num_warps": 4, "num_stages": stages})


if __name__ == "__main__":
    tc.write_fixture_set("/tmp/scratchsim-nvmma-fixtures-cache",
                         ["target", "head_dim", "block_m", "block_n", "num_stages", "causal"], entries)
