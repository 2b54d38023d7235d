"""Pallas TPU kernels of families the spill/VMEM model was never fitted on (issue 35): two sets of
builders for bench/tpu/sweep_heldout.py, written for this project from the structure of public
Pallas TPU kernels (no code taken from them).

Every builder takes keyword parameters (limit= sets CompilerParams.vmem_limit_bytes; None leaves
the generation's default scoped limit) and returns (fn, args): fn(*args) calls one pl.pallas_call;
args are jax.ShapeDtypeStructs. build(kind, params) is the entry, as in tpu_kernels.py;
shapes(set_name) lists (kind, params) of a set.

Set "dev" (the families of the failure report; the coordinator may look at them):
  swiglu_mlp         fused SwiGLU MLP: gate and up dots of a token block against an f-block of the
                     weights, silu(gate) * up, the down dot accumulated over f blocks in f32 scratch
                     (the gated MLP of MaxText / Gemma / Llama feed-forward kernels).
  swiglu_mlp_buf1    the same with pipeline_mode=pl.Buffered(1) on the three weight operands (one
                     VMEM copy of the weights: the resident-weight pattern of serving kernels).
  rmsnorm_matmul     RMSNorm of a row block (f32 statistics, gamma) fused into the matmul that
                     follows it (fused norm + projection kernels).
  dwconv1d           depthwise causal conv1d over a whole sequence of odd length per channel block
                     (Mamba's causal_conv1d structure: K shifted row windows times a per-channel tap).
  running_argmax     argmax over a row's column blocks on a reduction grid axis, the running max and
                     its index in two VMEM scratch buffers (f32 and int32).
  transpose_add      o = x.T + y over 2-D tiles (the transposed-residual epilogue).
  dequant_i8_matmul  bf16 activations times an int8 weight block converted to bf16 in the body,
                     f32 accumulator, per-column f32 scale at the last k step (weight-only int8
                     quantized matmul, as in JAX's quantized matmul examples / AQT serving kernels).
  online_lse         log-sum-exp of each row over column blocks, running max and sum in scratch
                     (the row statistics of flash attention's forward and of vocab-parallel losses).
  layernorm_bwd      layer norm backward: dx per row block, dgamma and dbeta accumulated over the
                     row grid axis into resident (1, d) outputs.
  cumsum_carry       cumulative sum down the rows carried across row blocks in a (1, bd) scratch; the
                     in-block prefix sum as a lower-triangular ones matmul (Mamba-2 SSD's chunked
                     cumsum structure).
  block_sparse_matmul  block-sparse matmul: the k blocks of each row block listed in SMEM by scalar
                     prefetch (PrefetchScalarGridSpec), the index maps read them (splash attention /
                     megablox style block lists).
  manual_dma         input left in HBM (memory_space=pl.ANY), copied by pltpu.make_async_copy into two
                     VMEM slots with two DMA semaphores, the next block's copy started before this
                     one is waited on (the double buffering of ragged paged attention).
  gelu_squeezed      tanh GELU over (batch, rows, cols) blocks whose batch dim is squeezed (None in
                     block_shape), odd row and column counts.
  add_rmsnorm_alias  residual add + RMSNorm writing the sum back over the residual and the norm over
                     the input (input_output_aliases {0: 0, 1: 1}).
  decode_attention   single-token (decode) multi-query attention over kv blocks with three scratch
                     buffers m, l, acc (paged_attention's online softmax without the paging).

Set "heldout" (never fitted on or tuned against; per-row results are not looked at by hand):
  rope               rotary embedding of q and k head blocks: x * cos + roll(x, d/2) * signed sin
                     (pltpu.roll on the lanes, the form TPU RoPE kernels take).
  gqa_decode         grouped-query decode attention: a block of kv heads, each with its group of
                     query heads, online softmax scratch per kv head (ragged/paged attention's GQA).
  topk_mask          top-k of each row by k rounds of max, index by iota compare, mask to -inf
                     (fori_loop) (the iterative top-k of sampling kernels).
  dequant_group_matmul  int8 weights with one f32 scale per group of g input rows, dequantized per
                     group inside the body and accumulated (per-group int8/int4 weight-only
                     matmuls); a few int4 shapes.
  matmul_bias_gelu   matmul with f32 accumulator and a bias + tanh GELU epilogue at the last k step.
  moe_router         MoE router: logits = x @ w_router, softmax over experts, top-2 experts and
                     their renormalized weights (MaxText / Mixtral routing), plus the probabilities.
  cross_entropy      cross-entropy forward over vocab blocks: running max and sum in scratch, the
                     label's logit picked by an iota compare (vocab-parallel / fused CE kernels).
  local_attention    sliding-window causal attention: each query block against its own and the
                     previous key block, masked to the window (Mistral / Gemma local attention).
  rmsnorm_bwd        RMSNorm backward: dx per row block, dgamma accumulated over the row axis.
  adamw              fused AdamW update: params, grads, two moments in, hyper-parameters in SMEM,
                     params and moments written back aliased (optax fused-update kernels).
  absmax_quant       per-row absmax int8 quantization: row max, scale, round, convert; int8 values
                     and the f32 scale out (AQT / activation quantization).
  softcap_attention  flash-style attention with logits soft-capped by cap * tanh(s / cap) (Gemma 2).
  segment_sum        per-segment sums of rows as a one-hot (segments x rows) dot accumulated over
                     row blocks (MoE combine / segment reductions).
  conv2d_im2col      2-D convolution of a whole image per batch element: the kh x kw shifted
                     windows concatenated on the lanes (im2col) and one dot per cout block.

Set "heldout2" (written after the replicated-layout rule of the vreg replay was fixed, to judge it on
structures it was not found on; never fitted on or tuned against):
  greedy_argmax      argmax of each row of a whole vocabulary block by max and an iota compare, with
                     the chosen token's log-probability (greedy samplers).
  alibi_attention    flash-style causal attention with an ALiBi bias slope * (key - query position),
                     the position iotas made before the QK dot (BLOOM / MPT attention).
  causal_softmax     row softmax of a score block under a causal mask from row and column iotas,
                     the mask applied before the max and again to the exponentials.
  smoothed_cross_entropy  label-smoothed cross-entropy over a whole vocabulary row block: log-sum-exp,
                     the label's logit by an iota compare, the mean logit.
  gated_rmsnorm      RMSNorm of x * silu(z) times a weight (Mamba-2's gated norm).

Set "heldout3" (written after the second held-out set was judged, with the model as it stood; never
fitted on or tuned against):
  layernorm_fwd      layer norm forward: mean, centred variance, weight and bias (BERT / GPT-2 / ViT
                     norms), odd widths among them.
  linear_attn_chunk  chunked causal linear attention: the chunk's masked q k^T times v plus q times
                     the (d, d) state carried in f32 scratch over the chunk axis, the state updated
                     by k^T v (Mamba-2 SSD / gated linear attention's chunked form).
  qk_norm_rope       per-head RMSNorm of q or k with a weight, then RoPE by a lane roll (Qwen3 /
                     OLMo-2 QK-norm fused with the rotary embedding).
  cross_entropy_bwd  cross-entropy backward over vocabulary blocks: softmax from the saved
                     log-sum-exp less the one-hot label (an iota compare), times the upstream grad.
  int8_matmul        int8 x int8 dot into an int32 accumulator in scratch, per-row and per-column f32
                     scales at the last k step (AQT int8 training / serving matmuls).
  ssm_scan           Mamba's selective scan over a chunk of 128 steps in a rolled loop: the state
                     h (d_state x channels) carried, each step's B and C columns picked by a lane iota
                     compare, one output row stored per step; h carried across chunks in scratch.
  qkv_proj_rope      a QKV projection with an f32 accumulator whose last k step applies RoPE to its
                     head by a lane roll (fused projection + rotary kernels).
  lora_matmul        x W plus the low-rank update (x A) B, x A accumulated over k in a (bm, r)
                     scratch of rank 8-64 (LoRA / punica fused kernels).

Set "heldout4" (written after the third held-out set was judged, with the model as it stood; never
fitted on or tuned against):
  flash_attn_bwd_dkv flash attention backward for the dK and dV of one kv block, accumulated over the
                     q blocks of the innermost grid axis in two f32 scratch buffers: p recomputed as
                     exp(q k^T * scale - lse) from the saved per-row lse, dv += p^T do, ds = p * (do v^T
                     - di) with the saved per-row di, dk += ds^T q, both written at the last q step
                     (jax.experimental.pallas.ops.tpu.flash_attention's backward).
  paged_attention    single-token decode attention whose kv pages are picked by a page table in SMEM
                     (PrefetchScalarGridSpec, num_scalar_prefetch=1; the k and v index maps read it),
                     a block of kv heads with their query groups, positions past the sequence's length
                     (an SMEM input) masked, online softmax in m, l, acc scratch (paged attention).
  group_norm         GroupNorm of NHWC activations flattened to (H*W, channels) per batch element:
                     per-channel sums over the rows, folded to groups and back by (channels, groups)
                     and (groups, channels) one-hot dots, then scale and shift (diffusion UNet norms).
  embedding_gather   embedding lookup: token ids scalar-prefetched into SMEM, the table's index map
                     picks row ids[i] (a squeezed 1 x d block of a (vocab, 1, d) table), each row
                     stored at its row of an f32 staging scratch, the (rb, d) output block written at
                     the block's last row, optionally scaled by sqrt(d) (the scalar-prefetch gather).
  maxpool2d          2x2 and 3x3 stride-2 max pooling of NHWC blocks: the input viewed as
                     (h, w/2, 2c), the even and odd columns read as two channel blocks of the lanes,
                     rows paired by a leading-dim reshape, max of the taps (CNN pooling kernels).
  rmsnorm_quant      RMSNorm of a row block with a weight, then per-row absmax int8 quantization: the
                     int8 block and the f32 per-row scale out (fused norm + quantize of int8 serving).
  kv_cache_update    new (tokens, heads*d) blocks of k and v written into the k and v caches at a block
                     position from scalar prefetch, the caches left in HBM (pl.ANY) and aliased to
                     the outputs (input_output_aliases), RoPE applied to each head of k by a lane roll
                     (fused rotary + cache update of serving engines).

Set "heldout5" (written after the fourth held-out set was judged and the v5p megacore, one-row relayout
and roll-unpack rules were added, with the model as it stood; never fitted on or tuned against):
  grouped_matmul     megablox-style grouped matmul (gmm): the rows of x sorted by group, the group
                     offsets and the row-tile-to-group map scalar-prefetched into SMEM
                     (PrefetchScalarGridSpec, num_scalar_prefetch=2), the rhs index map picks the
                     tile's group's (k, n) weight, f32 accumulator over k in scratch, rows outside the
                     group zeroed at the last k step (jax.experimental.pallas.ops.tpu.megablox gmm).
  flash_fwd_gqa      causal flash attention forward with grouped-query heads: the q block of a kv head
                     is (group, bq, d), merged to (group * bq, d) for one QK dot against the shared
                     k block, causal masking by iota compare, blocks above the diagonal skipped,
                     online softmax m, l, acc in scratch over the kv axis (flash attention with GQA).
  depthwise_conv2d   3x3 stride-1 depthwise convolution of a pre-padded NHWC block: nine shifted
                     (h, w, bc) windows times their per-channel tap, accumulated in f32 (MobileNet's
                     depthwise convolutions).
  int8_kv_decode     single-token decode attention over int8 K and V blocks converted in the body,
                     per-token f32 scales as (1, bk) rows applied to the scores and to p before the PV
                     dot, online softmax over kv blocks (quantized KV caches of serving engines).
  vq_codebook        vector-quantization lookup: ||x||^2 - 2 x c^T + ||c||^2 of a row block against a
                     codebook block (the code norms by a ones-row dot), the block's min and argmin by
                     an iota compare, running min and argmin in (br, 1) scratch (VQ-VAE / audio
                     tokenizer codebooks).
  welford_stats      column mean and variance by Welford / Chan's parallel combination of each row
                     block's mean and M2 into running (1, bd) f32 scratch, written at the last row step
                     (streaming batch-norm statistics).

Set "heldout6" (written after the fifth held-out set was judged, with the model as it stood; compiled
before any judgement; never fitted on or tuned against):
  quant_linear_nt    weight-only int8 / int4 linear layer with the weight in nn.Linear's (out, in)
                     layout: the (bn, bk) weight block converted in the body, less its per-output-
                     channel zero point (a (bn, 1) f32 column), cast to the activation dtype and fed
                     to a transposed-rhs dot (x w^T) into an f32 accumulator; the per-channel f32
                     scale as a (1, bn) row at the last k step (torch_xla's / tpu-inference's
                     quantized_matmul Pallas kernels, w_q of shape (out, in) with per-channel scales;
                     the zero points of asymmetric AWQ-style weights).
  fp8_scaled_matmul  fp8 (float8_e4m3fn, one float8_e5m2) activations and weights, both blocks
                     converted to bf16 (f32 once) in the body and fed to jnp.dot, f32 accumulator
                     over k, the per-token (bm, 1) and per-channel (1, bn) f32 scales at the last k
                     step (dynamic per-token / per-channel fp8 serving matmuls of vLLM / tpu-inference
                     and MaxText's fp8 quantization, where the MXU takes no fp8).
  linear_ce_zloss    fused linear + cross-entropy: the hidden row block times a (d, bv) block of the
                     vocabulary projection, the label's logit by an iota compare, running max and sum
                     over the vocabulary axis in (br, 1) scratch, loss = lse - label logit + z * lse^2
                     and lse out (the vocabulary-tiled fused linear cross-entropy of MaxText / Liger /
                     cut cross-entropy, PaLM's z-loss).
  topp_minp_mask     top-p and min-p sampling mask over a whole vocabulary row block: temperature, row
                     softmax, the top-p threshold found by `iters` rounds of bisection in a fori_loop
                     (the mass of the probabilities at or above the midpoint, a row reduction per
                     round) instead of a sort, max'd with min_p * the row's max probability, logits
                     below it set to -1e30; per-request temperature, top_p and min_p as (br, 1)
                     columns (the sort-free top-p / min-p samplers of TPU serving engines, vLLM TPU /
                     SGLang-jax).
  bias_attention     flash attention forward with an additive bias: a (bq, bk) block of a (heads, s, s)
                     bias streamed beside the k and v blocks and added to the scaled scores before the
                     online softmax (the `ab` operand of jax.experimental.pallas.ops.tpu
                     .flash_attention; T5 / Swin learned relative position biases materialized).
  splash_sparse_attention  block-sparse attention in splash attention's schedule: the kv block of each
                     (q block, step) and whether it is a full or a partial (causal-diagonal) block read
                     from two scalar-prefetched SMEM tables (PrefetchScalarGridSpec,
                     num_scalar_prefetch=2; the k and v index maps read the first), partial blocks
                     masked by position iotas, online softmax over the nnz steps
                     (jax.experimental.pallas.ops.tpu.splash_attention's data_next / mask_next lists).

Set "heldout7" (written after the sixth held-out set was compiled, with the model as it stood; compiled
before any judgement; never fitted on or tuned against):
  int8_kv_prefill    chunked-prefill causal attention over an int8 KV cache: a chunk of sq new query
                     tokens at the end of skv cached ones, the (group, bq, d) query block of a kv head
                     merged to one QK dot, the int8 K and V blocks both converted to the query dtype in
                     the body and fed to the two dots, the kv head's f32 k scale (an SMEM array, one per
                     kv head) applied to the scores rather than to K and its v scale to the output at the
                     last kv step, kv blocks past the chunk's diagonal skipped (tpu-inference / vLLM TPU
                     ragged_paged_attention with an int8 KV cache and k_scale / v_scale, without paging).
  moe_wq_gate_up     the gate and up projections of an MoE expert with int4 / int8 weights (w4a16 /
                     w8a16): the rows sorted by expert, each row tile's expert scalar-prefetched into SMEM
                     (PrefetchScalarGridSpec, num_scalar_prefetch=1; the weight and scale index maps read
                     it), per group of `group` input rows two dots of the bf16 activations against the
                     converted gate and up weight slices, each scaled by its group's (1, bf) f32 scale
                     after the dot, two f32 accumulators over k, silu(gate) * up times the token's routing
                     weight at the last k step (tpu-inference's fused_moe / SGLang-jax's MoE kernels with
                     subchannel-quantized experts, megablox's tile-to-expert map).
  rmsnorm_qkv_int8   RMSNorm of a whole (br, d) row block (f32 statistics, gamma) into a bf16 VMEM
                     scratch at the first step of the head axis, then three int8 weight blocks (q columns
                     of kvb kv heads' query groups, k and v columns of kvb kv heads) converted in the
                     body, three dots and per-output-channel f32 scales, q, k and v written as three
                     outputs (fused input norm + w8a16 QKV projection of serving engines; MaxText's AQT
                     int8 weights, vLLM TPU's quantized qkv_proj).
  rope2d_attention   attention over a 2-D patch grid with axial 2-D RoPE fused in: each half of the head
                     dim rotated by one axis' position (cos / sin tables of (s, d)), rotate-half within
                     each half made by two lane rolls (pltpu.roll) and a lane-iota select, q roped and
                     scaled once into a VMEM scratch at the first kv step, the k block roped every step,
                     then the QK dot and the online softmax (vision transformers' 2-D RoPE: EVA-02 /
                     FLUX / Qwen2-VL's vision tower, fused rotary + flash attention kernels).
  router_capacity    MoE router with expert capacity: logits of a token block, softmax over experts,
                     top-k by k rounds of max and an iota compare, each choice's position in its expert
                     as a token-major exclusive cumsum (a strictly-lower-triangular (bt, bt) dot of the
                     chosen mask) plus the per-expert counts carried over token blocks in (1, experts)
                     f32 scratch, choices past capacity dropped; renormalized combine weights and int32
                     positions out (MaxText's / GShard's dropping top-k routing with capacity factor).
  glu_mlp_bwd        the dx half of a SwiGLU MLP's backward: gate and up recomputed from x, dh = dy
                     W_down^T by a transposed-rhs dot, dgate = dh * up * silu'(gate) and dup = dh *
                     silu(gate) written out (for the weight gradients), dx += dgate W_gate^T + dup
                     W_up^T accumulated over f blocks in f32 scratch (the backward of fused gated MLP
                     kernels: Liger's SwiGLU backward recomputation, MaxText / torchtitan's gated MLP).

Set "heldout8" (written after the seventh held-out set was compiled, with the model as it stood; compiled
before any judgement; never fitted on or tuned against):
  mla_decode         multi-head latent attention decode: each query head already absorbed into the
                     512-wide latent (plus a 64-wide rope part), a block of hb heads scored against a
                     bk block of the compressed KV cache by two transposed-rhs dots (latent and rope
                     parts) summed, online softmax over the kv blocks of the grid, the same latent block
                     used as the values, a (hb, 512) f32 accumulator (DeepSeek-V2 / V3 MLA with the
                     weight-absorbed decode of FlashMLA / vLLM / SGLang's MLA backends).
  w8a8_matmul        int8 x int8 matmul, preferred_element_type int32 into an int32 (bm, bn) scratch
                     over k, then the per-row (token) and per-column (channel) f32 scales and an f32
                     bias at the last k step, bf16 or f32 out (SmoothQuant's W8A8 linear, the int8
                     GEMMs of torch_xla / vLLM's scaled_mm with per-token / per-channel scales).
  ssd_chunk_scan     one head's Mamba-2 SSD chunk at a time: the chunk's A * dt summed cumulatively as
                     a column (lane reduce under a lower mask) and as a row (an upper-triangular dot),
                     their difference exponentiated under the causal mask (segsum), C B^T scores times
                     that decay and dt, times X; plus C times the (dstate, hd) f32 state carried over
                     chunks in scratch, decayed to each position, and the state updated by a
                     contracting-dim-0 dot of the decay-weighted B with X (Mamba-2's ssd_minimal /
                     chunked scan kernels).
  layernorm_bwd_scratch  layer norm backward that recomputes mean and rstd of each row block from x,
                     writes dx, and accumulates dgamma and dbeta over the row grid axis in two (1, d)
                     f32 scratch buffers written to the (1, d) outputs at the last step (Apex / Triton
                     fused layer norm backward with partial weight-gradient sums).
  lora_shrink_expand a base matmul plus a LoRA update fused in one kernel: the shrink x A accumulated
                     over k into a (bm, r) f32 scratch only on the first n block of a row block and
                     held for every n block after it (the n axis "arbitrary"), the expand (x A) B
                     times alpha / r added to the base accumulator at the last k step (Punica / S-LoRA
                     shrink-expand, fused LoRA linear layers).
  cumsum_topk_mask   an inclusive cumsum along the lanes of an (experts, tokens) assignment mask, by
                     an upper-triangular (bc, bc) dot or by log2(bc) lane rolls (pltpu.roll) under a
                     lane-iota select, carried across token blocks in a (br, 1) f32 scratch, then the
                     capacity threshold: int32 positions (-1 where dropped) and the kept mask out
                     (the token-position computation of MoE dispatch: GShard / MaxText / megablox).

Shapes (shapes(set); the full lists are dev_shapes(), heldout_shapes(), heldout2_shapes(),
heldout3_shapes(), heldout4_shapes(), heldout5_shapes(), heldout6_shapes(), heldout7_shapes() and
heldout8_shapes(); sweep_heldout.py --per-family N takes N of each spread over its list):
  dev (122): swiglu_mlp 8 (2048 tokens, d 512-4096, f 2048-8192, bt 128-512, bf 256-1024, bf16
    and one f32); swiglu_mlp_buf1 7 (d 512-4096, bf 512 up to f: resident weights); rmsnorm_matmul
    8 (4096 rows, d 768-8192, n 1024-4096, br 128-1024, bn 256-2048); dwconv1d 8 (length 513-8191,
    odd, ch 256-2048, width 3-5, f32/bf16); running_argmax 7 (d 4096-32768, br 64-512, bk
    512-8192); transpose_add 8 (128-2048 by 256-2048, f32/bf16); dequant_i8_matmul 9 (blocks
    128-2048); online_lse 7 (d 4096-65536, br 64-1024, bk 512-8192); layernorm_bwd 8 (8192 rows,
    d 512-8192 incl. 1000, br 256-1024); cumsum_carry 8 (br 128-1024, bd 128-4096);
    block_sparse_matmul 9 (blocks 128-2048, 2-5 nonzero k blocks); manual_dma 9 (br 128-2048,
    d 512-8192 incl. 1000); gelu_squeezed 9 (rows 777-8000, d 130-4096, odd); add_rmsnorm_alias 8
    (d 512-8192, br 256-2048); decode_attention 9 (8-128 heads, kv 4096-32768, d 64-256, bk
    256-16384).
  heldout (116): rope 8 (seq 2048-8192, 8-64 q heads, 1-16 kv heads, d 64-256, bt 128-512);
    gqa_decode 9 (2-16 kv heads, groups 2-16 incl. 6, kv 4096-32768, bk 512-4096, 1-8 kv heads a
    block); topk_mask 8 (d 1024-32768 incl. 2000, k 4-32); dequant_group_matmul 9 (blocks
    128-2048, groups 128-512, int8 and two int4); matmul_bias_gelu 9 (blocks 128-2048 incl. 384,
    768, 1152; bf16/f32); moe_router 8 (d 1024-7168, 8-256 experts incl. 60, bt 256-1024);
    cross_entropy 7 (vocab 32000-256000, br 64-512, bv 512-16768); local_attention 8 (s
    4096-8192, d 64-256, bq 128-2048, window 128-2048); rmsnorm_bwd 8 (d 512-8192 incl. 1000,
    br 256-2048); adamw 8 (d 512-8192 incl. 1000, br 128-4096); absmax_quant 8 (d 512-14336 incl.
    1000); softcap_attention 8 (s 4096-8192, d 64-256, bq and bk 256-2048); segment_sum 8 (d
    1000-8192, 8-256 segments, br 256-2048); conv2d_im2col 10 (16x16 to 64x64 images, cin
    128-512, cout 128-1024, 3x3 and 5x5).
  heldout4 (42): flash_attn_bwd_dkv 6 (s 2048-8192, d 64-256 incl. 96, bq 128-1024, bk 128-1024,
    bf16 and one f32); paged_attention 6 (2-16 kv heads, groups 1-8 incl. 6, d 128/256, pages of
    64-1024 tokens, 8-32 pages a sequence, 1-16 kv heads a block, one f32); group_norm 6 (H*W
    64-16384, channels 256-1280 incl. 320 and 960, 32 groups, whole or half channel blocks, one
    f32); embedding_gather 6 (vocab 32000-256000, d 768-8192, 8-512 rows a block, f32 and bf16);
    maxpool2d 6 (56x56 to 224x224, c 128-256, 2x2 and 3x3 stride 2, one f32); rmsnorm_quant 6
    (8192 rows, d 768-8192 incl. 3000, br 256-1024); kv_cache_update 6 (cache 4096-32768,
    256-4096 new tokens, 8-40 heads, d 128/256, bt 16-1024, 4-8 heads a block, one f32).
  heldout5 (36): grouped_matmul 6 (m 2048-8192, k 1024-7168, n 1024-14336 incl. 1408, 2-16 groups,
    bm 128-1024, bk 256-2048 incl. 1792, bn 256-2048, one f32); flash_fwd_gqa 6 (2-8 kv heads, groups
    4-16 incl. 6, s 2048-8192, d 64-256, bq 128-512, bk 128-1024, one f32); depthwise_conv2d 6 (7x7 to
    150x150 outputs, c 96-1024, bc 96-512, one f32); int8_kv_decode 6 (1-8 kv heads, groups 1-16 incl.
    6, kv 4096-65536, d 128/256, bk 512-16384, one f32 query); vq_codebook 6 (d 32-512, 512-16384
    codes incl. 1000, br 256-2048, bc 512-2048, two f32); welford_stats 6 (rows 4000-65536, d
    512-8192 incl. 1000, br 400-8192, one f32).
  heldout6 (36): quant_linear_nt 6 (m 16-8192, n 4096-14336, k 4096-14336, bm 16-1024, bn 512-2048,
    bk 1024-4096, int8 and one int4, one f32); fp8_scaled_matmul 6 (m 128-8192, n 2048-14336 incl.
    7168, k 2048-8192, blocks 128-2048, e4m3 and one e5m2, one f32); linear_ce_zloss 6 (d 2048-8192
    incl. 3072 and 5120, vocab 32000-256000 incl. 128256 and 131072, br 128-1024, bv 768-2048, one f32);
    topp_minp_mask 6 (vocab 32000-256000 incl. 50304, 128256 and 151936, br 8-128, 16-24 bisection
    rounds, one f32); bias_attention 6 (4-16 heads, s 1024-8192, d 64-256, bq 128-2048, bk 128-2048,
    one f32); splash_sparse_attention 6 (4-16 heads, s 4096-32768, d 64-256, blocks 128-2048, 4-8 kv
    blocks a q block, one f32).
  heldout7 (36): int8_kv_prefill 6 (1-8 kv heads, groups 4-8 incl. 7, chunks of 256-4096 new tokens
    on 4096-32768 cached, d 64-256, bq 128-512, bk 256-1024, one f32 query); moe_wq_gate_up 6 (m
    512-8192, d 2048-7168, f 768-16384 incl. 1408, 8-256 experts, bm 128-1024, bf 128-1024, bk
    512-2048 incl. 1792, groups 128/256, int4 and two int8, one f32); rmsnorm_qkv_int8 6 (8-4096 rows,
    d 2048-8192 incl. 3584, 1-16 kv heads, groups 1-8 incl. 7, hd 64-256, br 8-512, one f32);
    rope2d_attention 6 (8-24 heads, 16x16 to 128x128 grids (s 256-16384), d 64-256, bq 128-2048, bk
    128-2048, one f32); router_capacity 6 (tokens 1024-8192, d 2048-7168, 8-256 experts incl. 60, top
    2-8, bt 128-2048, one f32); glu_mlp_bwd 6 (tokens 1024-8192, d 2048-8192, f 5632-28672 incl. 13824,
    bt 128-512, bf 128-512, one f32).
  heldout8 (36): mla_decode 6 (batch 1-8, 16-128 heads incl. 56, kv 1024-32768, bk 256-8192, hb
    8-128, one f32); w8a8_matmul 6 (m 32-8192, n 3584-18944, k 3584-14336, bm 32-2048, bn 512-2048,
    bk 512-4096 incl. 3584, one f32 out); ssd_chunk_scan 6 (7-32 heads, seq 1024-8192, chunks
    128-2048, dstate 64-256, hd 64/128, one bf16); layernorm_bwd_scratch 6 (8-16384 rows, d
    1000-16384 incl. 3584, br 8-1024, f32 and bf16); lora_shrink_expand 6 (m 16-8192, n/k
    3584-14336, rank 16-64, bm 16-2048, bn 512-2048, bk 512-2048, one f32); cumsum_topk_mask 6 (8-256
    experts incl. 60 and 56, tokens 2048-32768, bc 256-4096, dot and roll, f32 and bf16).

Public kernels whose structure these follow: jax.experimental.pallas.ops.tpu (flash_attention,
paged_attention, ragged_paged_attention, splash_attention, megablox, matmul examples of the Pallas
TPU docs), MaxText's kernels (gated MLP, RMSNorm, MoE routing), Mamba's causal_conv1d and Mamba-2
SSD chunked scans, optax's fused optimizers, AQT quantization, Gemma 2's logit soft-capping; for
heldout4 also flash attention's backward, paged attention's page tables, diffusion UNets' group
norms, CNN pooling and serving engines' fused rotary + KV cache updates; for heldout5 also megablox's
grouped matmul, GQA flash attention, MobileNet's depthwise convolutions, int8 KV caches, VQ codebook
lookups and Welford statistics; for heldout6 also torch_xla's / tpu-inference's quantized_matmul,
fp8 per-token / per-channel scaled matmuls, fused linear cross-entropy with PaLM's z-loss, sort-free
top-p / min-p samplers, flash attention's `ab` bias operand and splash attention's block-sparse
schedule; for heldout7 also ragged paged attention's int8 KV cache scales, tpu-inference's fused MoE
with subchannel-quantized experts, fused norm + int8 QKV projections, vision transformers' 2-D RoPE,
MaxText's capacity-dropping MoE routing and the backward of fused SwiGLU MLPs; for heldout8 also
DeepSeek's multi-head latent attention decode, SmoothQuant W8A8 linears, Mamba-2's SSD chunked scan,
fused layer norm backward, Punica / S-LoRA shrink-expand LoRA and MoE dispatch's position cumsum.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

S = jax.ShapeDtypeStruct
MiB = 1 << 20
F32 = jnp.float32
I32 = jnp.int32
DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "i8": jnp.int8, "i4": jnp.int4}
NEG = -1e30


def _cp(limit, sem):
  kw = {"dimension_semantics": tuple(sem)}
  if limit:
    kw["vmem_limit_bytes"] = int(limit)
  return pltpu.CompilerParams(**kw)



def _init_online_softmax(m_ref, l_ref, acc_ref):
  """The running max, sum and accumulator of an online softmax, before its first block."""
  m_ref[...] = jnp.full(m_ref.shape, NEG, F32)
  l_ref[...] = jnp.zeros(l_ref.shape, F32)
  acc_ref[...] = jnp.zeros(acc_ref.shape, F32)


def _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, at):
  """One block of scores `sc` folded into the running max, sum and p @ v accumulator at `at`
  (Ellipsis, or a head's index), in the order the attention kernels below trace it."""
  m_prev = m_ref[at]
  m_new = jnp.maximum(m_prev, jnp.max(sc, axis=-1, keepdims=True))
  p = jnp.exp(sc - m_new[:, :1])
  alpha = jnp.exp(m_prev - m_new)
  l_ref[at] = l_ref[at] * alpha + jnp.sum(p, axis=-1, keepdims=True)
  acc_ref[at] = acc_ref[at] * alpha[:, :1] + jnp.dot(p.astype(dt), v_ref[at], preferred_element_type=F32)
  m_ref[at] = m_new

def _gelu(x):
  return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _silu(x):
  return x / (1.0 + jnp.exp(-x))


def _k_accumulated(nk, acc_type, epilogue):
  """The body of a matmul whose grid's third axis runs over k: the accumulator zeroed at the first
  k step, x @ w (in `acc_type`) added at every one, `epilogue(acc, *side_refs)` written out at the
  last."""
  def kernel(x_ref, w_ref, *refs):
    *side_refs, o_ref, acc_ref = refs
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=acc_type)

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = epilogue(acc_ref[...], *side_refs).astype(o_ref.dtype)
  return kernel


# =============================================================================================
# Set A ("dev")


def swiglu_mlp(tokens, d, f, bt, bf, dtype="bf16", buffered=None, limit=None):
  dt = DTYPES[dtype]
  nf = f // bf

  def kernel(x_ref, wg_ref, wu_ref, wd_ref, o_ref, acc_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    x = x_ref[...]
    g = jnp.dot(x, wg_ref[...], preferred_element_type=F32)
    u = jnp.dot(x, wu_ref[...], preferred_element_type=F32)
    h = (_silu(g) * u).astype(dt)
    acc_ref[...] += jnp.dot(h, wd_ref[...], preferred_element_type=F32)

    @pl.when(j == nf - 1)
    def _():
      o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  kw = {} if buffered is None else {"pipeline_mode": pl.Buffered(buffered)}

  def fn(x, wg, wu, wd):
    return pl.pallas_call(
        kernel, out_shape=S((tokens, d), dt), grid=(tokens // bt, nf),
        in_specs=[pl.BlockSpec((bt, d), lambda i, j: (i, 0)),
                  pl.BlockSpec((d, bf), lambda i, j: (0, j), **kw),
                  pl.BlockSpec((d, bf), lambda i, j: (0, j), **kw),
                  pl.BlockSpec((bf, d), lambda i, j: (j, 0), **kw)],
        out_specs=pl.BlockSpec((bt, d), lambda i, j: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bt, d), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="swiglu_mlp")(x, wg, wu, wd)
  return fn, (S((tokens, d), dt), S((d, f), dt), S((d, f), dt), S((f, d), dt))


def swiglu_mlp_buf1(tokens, d, f, bt, bf, dtype="bf16", limit=None):
  return swiglu_mlp(tokens, d, f, bt, bf, dtype=dtype, buffered=1, limit=limit)


def rmsnorm_matmul(rows, d, n, br, bn, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, g_ref, w_ref, o_ref):
    x = x_ref[...].astype(F32)
    ms = jnp.mean(x * x, axis=-1, keepdims=True)
    xn = (x * jax.lax.rsqrt(ms + 1e-6) * g_ref[...].astype(F32)).astype(dt)
    o_ref[...] = jnp.dot(xn, w_ref[...], preferred_element_type=F32).astype(o_ref.dtype)

  def fn(x, g, w):
    return pl.pallas_call(
        kernel, out_shape=S((rows, n), dt), grid=(rows // br, n // bn),
        in_specs=[pl.BlockSpec((br, d), lambda i, j: (i, 0)), pl.BlockSpec((1, d), lambda i, j: (0, 0)),
                  pl.BlockSpec((d, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((br, bn), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="rmsnorm_matmul")(x, g, w)
  return fn, (S((rows, d), dt), S((1, d), dt), S((d, n), dt))


def dwconv1d(batch, length, ch, width, bc, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  lo = length - width + 1

  def kernel(x_ref, w_ref, o_ref):
    w = w_ref[...].astype(F32)
    acc = jnp.zeros((lo, bc), F32)
    for k in range(width):
      acc = acc + x_ref[pl.ds(k, lo), :].astype(F32) * w[k:k + 1, :]
    o_ref[...] = acc.astype(o_ref.dtype)

  def fn(x, w):
    return pl.pallas_call(
        kernel, out_shape=S((batch, lo, ch), dt), grid=(batch, ch // bc),
        in_specs=[pl.BlockSpec((None, length, bc), lambda b, c: (b, 0, c)),
                  pl.BlockSpec((width, bc), lambda b, c: (0, c))],
        out_specs=pl.BlockSpec((None, lo, bc), lambda b, c: (b, 0, c)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="dwconv1d")(x, w)
  return fn, (S((batch, length, ch), dt), S((width, ch), dt))


def running_argmax(rows, d, br, bk, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  nk = d // bk

  def kernel(x_ref, val_ref, idx_ref, m_ref, i_ref):
    k = pl.program_id(1)

    @pl.when(k == 0)
    def _():
      m_ref[...] = jnp.full(m_ref.shape, NEG, F32)
      i_ref[...] = jnp.zeros(i_ref.shape, I32)
    x = x_ref[...].astype(F32)
    lm = jnp.max(x, axis=-1, keepdims=True)
    col = jax.lax.broadcasted_iota(I32, x.shape, 1).astype(F32)
    li = jnp.min(jnp.where(x == lm, col, float(bk)), axis=-1, keepdims=True)
    li = li.astype(I32) + k * bk
    better = lm > m_ref[...]
    i_ref[...] = jnp.where(better, li, i_ref[...])
    m_ref[...] = jnp.where(better, lm, m_ref[...])

    @pl.when(k == nk - 1)
    def _():
      val_ref[...] = m_ref[...]
      idx_ref[...] = i_ref[...]

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=(S((rows, 1), F32), S((rows, 1), I32)), grid=(rows // br, nk),
        in_specs=[pl.BlockSpec((br, bk), lambda i, k: (i, k))],
        out_specs=(pl.BlockSpec((br, 1), lambda i, k: (i, 0)), pl.BlockSpec((br, 1), lambda i, k: (i, 0))),
        scratch_shapes=[pltpu.VMEM((br, 1), F32), pltpu.VMEM((br, 1), I32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="running_argmax")(x)
  return fn, (S((rows, d), dt),)


def transpose_add(bm, bn, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  m, n = 2 * bm, 2 * bn

  def kernel(x_ref, y_ref, o_ref):
    o_ref[...] = (x_ref[...].T.astype(F32) + y_ref[...].astype(F32)).astype(o_ref.dtype)

  def fn(x, y):
    return pl.pallas_call(
        kernel, out_shape=S((n, m), dt), grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j: (i, j)), pl.BlockSpec((bn, bm), lambda i, j: (j, i))],
        out_specs=pl.BlockSpec((bn, bm), lambda i, j: (j, i)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="transpose_add")(x, y)
  return fn, (S((m, n), dt), S((n, m), dt))


def dequant_i8_matmul(bm, bn, bk, limit=None):
  m, n, k = 2 * bm, 2 * bn, 2 * bk
  nk = k // bk

  def kernel(x_ref, w_ref, s_ref, o_ref, acc_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    w = w_ref[...].astype(F32).astype(jnp.bfloat16)
    acc_ref[...] += jnp.dot(x_ref[...], w, preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] * s_ref[...]).astype(o_ref.dtype)

  def fn(x, w, s):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), jnp.bfloat16), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="dequant_i8_matmul")(x, w, s)
  return fn, (S((m, k), jnp.bfloat16), S((k, n), jnp.int8), S((1, n), F32))


def online_lse(rows, d, br, bk, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  nk = d // bk

  def kernel(x_ref, o_ref, m_ref, l_ref):
    k = pl.program_id(1)

    @pl.when(k == 0)
    def _():
      m_ref[...] = jnp.full(m_ref.shape, NEG, F32)
      l_ref[...] = jnp.zeros(l_ref.shape, F32)
    x = x_ref[...].astype(F32)
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(x, axis=-1, keepdims=True))
    p = jnp.exp(x - m_new[:, :1])
    l_ref[...] = l_ref[...] * jnp.exp(m_prev - m_new) + jnp.sum(p, axis=-1, keepdims=True)
    m_ref[...] = m_new

    @pl.when(k == nk - 1)
    def _():
      o_ref[...] = m_ref[:, :1] + jnp.log(l_ref[:, :1])

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((rows, 1), F32), grid=(rows // br, nk),
        in_specs=[pl.BlockSpec((br, bk), lambda i, k: (i, k))],
        out_specs=pl.BlockSpec((br, 1), lambda i, k: (i, 0)),
        scratch_shapes=[pltpu.VMEM((br, 128), F32), pltpu.VMEM((br, 128), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="online_lse")(x)
  return fn, (S((rows, d), dt),)


def layernorm_bwd(rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, dy_ref, mu_ref, rs_ref, g_ref, dx_ref, dg_ref, db_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
      dg_ref[...] = jnp.zeros_like(dg_ref)
      db_ref[...] = jnp.zeros_like(db_ref)
    x = x_ref[...].astype(F32)
    dy = dy_ref[...].astype(F32)
    rs = rs_ref[...]
    xhat = (x - mu_ref[...]) * rs
    g = dy * g_ref[...].astype(F32)
    c1 = jnp.mean(g, axis=-1, keepdims=True)
    c2 = jnp.mean(g * xhat, axis=-1, keepdims=True)
    dx_ref[...] = (rs * (g - c1 - xhat * c2)).astype(dx_ref.dtype)
    dg_ref[...] += jnp.sum(dy * xhat, axis=0, keepdims=True)
    db_ref[...] += jnp.sum(dy, axis=0, keepdims=True)

  def fn(x, dy, mu, rs, g):
    row = pl.BlockSpec((br, d), lambda i: (i, 0))
    stat = pl.BlockSpec((br, 1), lambda i: (i, 0))
    vec = pl.BlockSpec((1, d), lambda i: (0, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), dt), S((1, d), F32), S((1, d), F32)), grid=(rows // br,),
        in_specs=[row, row, stat, stat, vec], out_specs=(row, vec, vec),
        compiler_params=_cp(limit, ("arbitrary",)), name="layernorm_bwd")(x, dy, mu, rs, g)
  return fn, (S((rows, d), dt), S((rows, d), dt), S((rows, 1), F32), S((rows, 1), F32), S((1, d), dt))


def cumsum_carry(rows, d, br, bd, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref, c_ref):
    r = pl.program_id(1)

    @pl.when(r == 0)
    def _():
      c_ref[...] = jnp.zeros_like(c_ref)
    ri = jax.lax.broadcasted_iota(I32, (br, br), 0)
    ci = jax.lax.broadcasted_iota(I32, (br, br), 1)
    tri = (ri >= ci).astype(dt)
    cs = jnp.dot(tri, x_ref[...], preferred_element_type=F32) + c_ref[...]
    o_ref[...] = cs.astype(o_ref.dtype)
    c_ref[...] = cs[br - 1:br, :]

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((rows, d), dt), grid=(d // bd, rows // br),
        in_specs=[pl.BlockSpec((br, bd), lambda c, r: (r, c))],
        out_specs=pl.BlockSpec((br, bd), lambda c, r: (r, c)),
        scratch_shapes=[pltpu.VMEM((1, bd), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="cumsum_carry")(x)
  return fn, (S((rows, d), dt),)


def block_sparse_matmul(bm, bn, bk, nnz, nkb=8, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  m, n, k = 4 * bm, 2 * bn, nkb * bk
  nm = m // bm

  def kernel(idx_ref, x_ref, y_ref, o_ref, acc_ref):
    t = pl.program_id(2)

    @pl.when(t == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=F32)

    @pl.when(t == nnz - 1)
    def _():
      o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  def fn(idx, x, y):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(nm, n // bn, nnz),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, t, idx: (i, idx[i * nnz + t])),
                      pl.BlockSpec((bk, bn), lambda i, j, t, idx: (idx[i * nnz + t], j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, t, idx: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), F32)]),
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="block_sparse_matmul")(idx, x, y)
  return fn, (S((nm * nnz,), I32), S((m, k), dt), S((k, n), dt))


def manual_dma(rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  nb = rows // br

  def kernel(x_hbm, o_ref, buf, sem):
    i = pl.program_id(0)

    def copy(step, slot):
      return pltpu.make_async_copy(x_hbm.at[pl.ds(step * br, br)], buf.at[slot], sem.at[slot])

    @pl.when(i == 0)
    def _():
      copy(0, 0).start()

    @pl.when(i + 1 < nb)
    def _():
      copy(i + 1, (i + 1) % 2).start()
    slot = i % 2
    copy(i, slot).wait()
    x = buf[slot].astype(F32)
    o_ref[...] = (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)).astype(o_ref.dtype)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((rows, d), dt), grid=(nb,),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((br, d), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((2, br, d), dt), pltpu.SemaphoreType.DMA((2,))],
        compiler_params=_cp(limit, ("arbitrary",)), name="manual_dma")(x)
  return fn, (S((rows, d), dt),)


def gelu_squeezed(batch, rows, d, br, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref):
    o_ref[...] = _gelu(x_ref[...].astype(F32)).astype(o_ref.dtype)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((batch, rows, d), dt), grid=(batch, rows // br),
        in_specs=[pl.BlockSpec((None, br, d), lambda b, i: (b, i, 0))],
        out_specs=pl.BlockSpec((None, br, d), lambda b, i: (b, i, 0)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="gelu_squeezed")(x)
  return fn, (S((batch, rows, d), dt),)


def add_rmsnorm_alias(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, r_ref, g_ref, y_ref, ro_ref):
    s = x_ref[...].astype(F32) + r_ref[...].astype(F32)
    ro_ref[...] = s.astype(ro_ref.dtype)
    ms = jnp.mean(s * s, axis=-1, keepdims=True)
    y_ref[...] = (s * jax.lax.rsqrt(ms + 1e-6) * g_ref[...].astype(F32)).astype(y_ref.dtype)

  def fn(x, r, g):
    row = pl.BlockSpec((br, d), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), dt), S((rows, d), dt)), grid=(rows // br,),
        in_specs=[row, row, pl.BlockSpec((1, d), lambda i: (0, 0))], out_specs=(row, row),
        input_output_aliases={0: 0, 1: 1},
        compiler_params=_cp(limit, ("parallel",)), name="add_rmsnorm_alias")(x, r, g)
  return fn, (S((rows, d), dt), S((rows, d), dt), S((1, d), dt))


def decode_attention(batch, heads, s, d, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk

  def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    t = pl.program_id(1)

    @pl.when(t == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    q = q_ref[...]
    sc = jax.lax.dot_general(q, k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32) * 0.125
    _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, ...)

    @pl.when(t == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v):
    kv = pl.BlockSpec((None, bk, d), lambda b, t: (b, t, 0))
    return pl.pallas_call(
        kernel, out_shape=S((batch, heads, d), dt), grid=(batch, nk),
        in_specs=[pl.BlockSpec((None, heads, d), lambda b, t: (b, 0, 0)), kv, kv],
        out_specs=pl.BlockSpec((None, heads, d), lambda b, t: (b, 0, 0)),
        scratch_shapes=[pltpu.VMEM((heads, 128), F32), pltpu.VMEM((heads, 128), F32),
                        pltpu.VMEM((heads, d), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="decode_attention")(q, k, v)
  return fn, (S((batch, heads, d), dt), S((batch, s, d), dt), S((batch, s, d), dt))


# =============================================================================================
# Set B ("heldout")


def rope(seq, q_heads, kv_heads, d, bt, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(q_ref, k_ref, c_ref, s_ref, qo_ref, ko_ref):
    c = c_ref[...][None]
    sn = s_ref[...][None]

    def rot(x):
      x = x.astype(F32)
      return x * c + pltpu.roll(x, d // 2, 2) * sn
    qo_ref[...] = rot(q_ref[...]).astype(qo_ref.dtype)
    ko_ref[...] = rot(k_ref[...]).astype(ko_ref.dtype)

  def fn(q, k, c, s):
    tab = pl.BlockSpec((bt, d), lambda i: (i, 0))
    qs = pl.BlockSpec((q_heads, bt, d), lambda i: (0, i, 0))
    ks = pl.BlockSpec((kv_heads, bt, d), lambda i: (0, i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((q_heads, seq, d), dt), S((kv_heads, seq, d), dt)), grid=(seq // bt,),
        in_specs=[qs, ks, tab, tab], out_specs=(qs, ks),
        compiler_params=_cp(limit, ("parallel",)), name="rope")(q, k, c, s)
  return fn, (S((q_heads, seq, d), dt), S((kv_heads, seq, d), dt), S((seq, d), F32), S((seq, d), F32))


def gqa_decode(batch, kv_heads, group, s, d, bk, kvb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk

  def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    t = pl.program_id(2)

    @pl.when(t == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    for h in range(kvb):
      sc = jax.lax.dot_general(q_ref[h], k_ref[h], (((1,), (1,)), ((), ())), preferred_element_type=F32)
      _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, h)

    @pl.when(t == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :, :1]).astype(o_ref.dtype)

  def fn(q, k, v):
    qs = pl.BlockSpec((None, kvb, group, d), lambda b, h, t: (b, h, 0, 0))
    kv = pl.BlockSpec((None, kvb, bk, d), lambda b, h, t: (b, h, t, 0))
    return pl.pallas_call(
        kernel, out_shape=S((batch, kv_heads, group, d), dt), grid=(batch, kv_heads // kvb, nk),
        in_specs=[qs, kv, kv], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((kvb, group, 128), F32), pltpu.VMEM((kvb, group, 128), F32),
                        pltpu.VMEM((kvb, group, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="gqa_decode")(q, k, v)
  kvshape = S((batch, kv_heads, s, d), dt)
  return fn, (S((batch, kv_heads, group, d), dt), kvshape, kvshape)


def topk_mask(rows, d, br, k, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, v_ref, i_ref):
    x = x_ref[...].astype(F32)
    col = jax.lax.broadcasted_iota(I32, (br, d), 1).astype(F32)
    kcol = jax.lax.broadcasted_iota(I32, (br, k), 1)

    def body(t, carry):
      x, vals, idxs = carry
      m = jnp.max(x, axis=-1, keepdims=True)
      i = jnp.min(jnp.where(x == m, col, float(d)), axis=-1, keepdims=True)
      vals = jnp.where(kcol == t, m, vals)
      idxs = jnp.where(kcol == t, i, idxs)
      x = jnp.where(col == i, NEG, x)
      return x, vals, idxs
    _, vals, idxs = jax.lax.fori_loop(0, k, body, (x, jnp.zeros((br, k), F32), jnp.zeros((br, k), F32)))
    v_ref[...] = vals
    i_ref[...] = idxs.astype(I32)

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=(S((rows, k), F32), S((rows, k), I32)), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0))],
        out_specs=(pl.BlockSpec((br, k), lambda i: (i, 0)), pl.BlockSpec((br, k), lambda i: (i, 0))),
        compiler_params=_cp(limit, ("parallel",)), name="topk_mask")(x)
  return fn, (S((rows, d), dt),)


def dequant_group_matmul(bm, bn, bk, group, wdtype="i8", limit=None):
  wt = DTYPES[wdtype]
  m, n, k = 2 * bm, 2 * bn, 2 * bk
  nk, ng = k // bk, bk // group

  def kernel(x_ref, w_ref, s_ref, o_ref, acc_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    sc = s_ref[...]
    part = jnp.zeros(acc_ref.shape, F32)
    for gi in range(ng):
      w = w_ref[pl.ds(gi * group, group), :].astype(F32).astype(jnp.bfloat16)
      part = part + jnp.dot(x_ref[:, pl.ds(gi * group, group)], w, preferred_element_type=F32) * sc[gi:gi + 1, :]
    acc_ref[...] += part

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  def fn(x, w, s):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), jnp.bfloat16), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((None, ng, bn), lambda i, j, kk: (kk, 0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="dequant_group_matmul")(x, w, s)
  return fn, (S((m, k), jnp.bfloat16), S((k, n), wt), S((nk, ng, n), F32))


def _bias_gelu(acc, b_ref):
  return _gelu(acc + b_ref[...].astype(F32))


def matmul_bias_gelu(bm, bn, bk, dtype="bf16", limit=None, epilogue=_bias_gelu):
  """`epilogue(acc, b_ref)` at the last k step: the bias and tanh GELU, or another
  (probe_epilogue_spills.py)."""
  dt = DTYPES[dtype]
  m, n, k = 2 * bm, 2 * bn, 2 * bk
  nk = k // bk

  kernel = _k_accumulated(nk, F32, epilogue)

  def fn(x, w, b):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="matmul_bias_gelu")(x, w, b)
  return fn, (S((m, k), dt), S((k, n), dt), S((1, n), dt))


def moe_router(tokens, d, experts, bt, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, p_ref, tw_ref, ti_ref):
    logits = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=F32)
    e = jnp.exp(logits - jnp.max(logits, axis=-1, keepdims=True))
    probs = e / jnp.sum(e, axis=-1, keepdims=True)
    p_ref[...] = probs
    col = jax.lax.broadcasted_iota(I32, probs.shape, 1).astype(F32)
    m1 = jnp.max(probs, axis=-1, keepdims=True)
    i1 = jnp.min(jnp.where(probs == m1, col, float(experts)), axis=-1, keepdims=True)
    rest = jnp.where(col == i1, -1.0, probs)
    m2 = jnp.max(rest, axis=-1, keepdims=True)
    i2 = jnp.min(jnp.where(rest == m2, col, float(experts)), axis=-1, keepdims=True)
    two = jax.lax.broadcasted_iota(I32, (bt, 2), 1)
    tot = m1 + m2
    tw_ref[...] = jnp.where(two == 0, m1 / tot, m2 / tot)
    ti_ref[...] = jnp.where(two == 0, i1, i2).astype(I32)

  def fn(x, w):
    return pl.pallas_call(
        kernel, out_shape=(S((tokens, experts), F32), S((tokens, 2), F32), S((tokens, 2), I32)),
        grid=(tokens // bt,),
        in_specs=[pl.BlockSpec((bt, d), lambda i: (i, 0)), pl.BlockSpec((d, experts), lambda i: (0, 0))],
        out_specs=(pl.BlockSpec((bt, experts), lambda i: (i, 0)), pl.BlockSpec((bt, 2), lambda i: (i, 0)),
                   pl.BlockSpec((bt, 2), lambda i: (i, 0))),
        compiler_params=_cp(limit, ("parallel",)), name="moe_router")(x, w)
  return fn, (S((tokens, d), dt), S((d, experts), dt))


def cross_entropy(rows, vocab, br, bv, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nv = vocab // bv

  def kernel(x_ref, lab_ref, o_ref, m_ref, l_ref, t_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      m_ref[...] = jnp.full(m_ref.shape, NEG, F32)
      l_ref[...] = jnp.zeros(l_ref.shape, F32)
      t_ref[...] = jnp.zeros(t_ref.shape, F32)
    x = x_ref[...].astype(F32)
    col = jax.lax.broadcasted_iota(I32, x.shape, 1) + j * bv
    t_ref[...] += jnp.sum(jnp.where(col == lab_ref[...], x, 0.0), axis=-1, keepdims=True)
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(x, axis=-1, keepdims=True))
    l_ref[...] = l_ref[...] * jnp.exp(m_prev - m_new) + jnp.sum(jnp.exp(x - m_new), axis=-1, keepdims=True)
    m_ref[...] = m_new

    @pl.when(j == nv - 1)
    def _():
      o_ref[...] = m_ref[...] + jnp.log(l_ref[...]) - t_ref[...]

  def fn(x, lab):
    col = pl.BlockSpec((br, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((rows, 1), F32), grid=(rows // br, nv),
        in_specs=[pl.BlockSpec((br, bv), lambda i, j: (i, j)), col], out_specs=col,
        scratch_shapes=[pltpu.VMEM((br, 1), F32)] * 3,
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="cross_entropy")(x, lab)
  return fn, (S((rows, vocab), dt), S((rows, 1), I32))


def local_attention(heads, s, d, bq, window, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    i, t = pl.program_id(1), pl.program_id(2)
    kb = i - 1 + t

    @pl.when(t == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)

    @pl.when(kb >= 0)
    def _():
      sc = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32)
      qp = i * bq + jax.lax.broadcasted_iota(I32, sc.shape, 0)
      kp = kb * bq + jax.lax.broadcasted_iota(I32, sc.shape, 1)
      sc = jnp.where((kp <= qp) & (kp > qp - window), sc * 0.125, NEG)
      _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, ...)

    @pl.when(t == 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, t: (h, i, 0))
    kv = pl.BlockSpec((None, bq, d), lambda h, i, t: (h, jnp.maximum(i - 1 + t, 0), 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bq, 2),
        in_specs=[qs, kv, kv], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="local_attention")(q, k, v)
  a = S((heads, s, d), dt)
  return fn, (a, a, a)


def rmsnorm_bwd(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, dy_ref, rs_ref, g_ref, dx_ref, dg_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
      dg_ref[...] = jnp.zeros_like(dg_ref)
    x = x_ref[...].astype(F32)
    dy = dy_ref[...].astype(F32)
    rs = rs_ref[...]
    xhat = x * rs
    g = dy * g_ref[...].astype(F32)
    c = jnp.mean(g * xhat, axis=-1, keepdims=True)
    dx_ref[...] = (rs * (g - xhat * c)).astype(dx_ref.dtype)
    dg_ref[...] += jnp.sum(dy * xhat, axis=0, keepdims=True)

  def fn(x, dy, rs, g):
    row = pl.BlockSpec((br, d), lambda i: (i, 0))
    vec = pl.BlockSpec((1, d), lambda i: (0, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), dt), S((1, d), F32)), grid=(rows // br,),
        in_specs=[row, row, pl.BlockSpec((br, 1), lambda i: (i, 0)), vec], out_specs=(row, vec),
        compiler_params=_cp(limit, ("arbitrary",)), name="rmsnorm_bwd")(x, dy, rs, g)
  return fn, (S((rows, d), dt), S((rows, d), dt), S((rows, 1), F32), S((1, d), dt))


def adamw(rows, d, br, gdtype="bf16", limit=None):
  gt = DTYPES[gdtype]

  def kernel(h_ref, p_ref, g_ref, m_ref, v_ref, po_ref, mo_ref, vo_ref):
    lr, b1, b2, wd = h_ref[0], h_ref[1], h_ref[2], h_ref[3]
    c1, c2 = h_ref[4], h_ref[5]
    g = g_ref[...].astype(F32)
    m = b1 * m_ref[...] + (1.0 - b1) * g
    v = b2 * v_ref[...] + (1.0 - b2) * g * g
    p = p_ref[...]
    upd = (m * c1) * jax.lax.rsqrt(v * c2 + 1e-16) + wd * p
    po_ref[...] = p - lr * upd
    mo_ref[...] = m
    vo_ref[...] = v

  def fn(h, p, g, m, v):
    row = pl.BlockSpec((br, d), lambda i: (i, 0))
    f = S((rows, d), F32)
    return pl.pallas_call(
        kernel, out_shape=(f, f, f), grid=(rows // br,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), row, row, row, row], out_specs=(row, row, row),
        input_output_aliases={1: 0, 3: 1, 4: 2},
        compiler_params=_cp(limit, ("parallel",)), name="adamw")(h, p, g, m, v)
  f = S((rows, d), F32)
  return fn, (S((8,), F32), f, S((rows, d), gt), f, f)


def absmax_quant(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, q_ref, s_ref):
    x = x_ref[...].astype(F32)
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    scale = jnp.maximum(amax, 1e-8) / 127.0
    q = jnp.clip(jnp.round(x / scale), -127.0, 127.0)
    q_ref[...] = q.astype(I32).astype(jnp.int8)
    s_ref[...] = scale

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), jnp.int8), S((rows, 1), F32)), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0))],
        out_specs=(pl.BlockSpec((br, d), lambda i: (i, 0)), pl.BlockSpec((br, 1), lambda i: (i, 0))),
        compiler_params=_cp(limit, ("parallel",)), name="absmax_quant")(x)
  return fn, (S((rows, d), dt),)


def softcap_attention(heads, s, d, bq, bk, cap=50.0, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk

  def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    t = pl.program_id(2)

    @pl.when(t == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    sc = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32)
    sc = cap * jnp.tanh(sc * (0.125 / cap))
    _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, ...)

    @pl.when(t == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, t: (h, i, 0))
    kv = pl.BlockSpec((None, bk, d), lambda h, i, t: (h, t, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bq, nk),
        in_specs=[qs, kv, kv], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="softcap_attention")(q, k, v)
  a = S((heads, s, d), dt)
  return fn, (a, a, a)


def segment_sum(rows, d, segments, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(seg_ref, x_ref, o_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
      o_ref[...] = jnp.zeros_like(o_ref)
    onehot = (jax.lax.broadcasted_iota(I32, (segments, br), 0) == seg_ref[...]).astype(dt)
    o_ref[...] += jnp.dot(onehot, x_ref[...], preferred_element_type=F32)

  def fn(seg, x):
    return pl.pallas_call(
        kernel, out_shape=S((segments, d), F32), grid=(rows // br,),
        in_specs=[pl.BlockSpec((1, br), lambda i: (0, i)), pl.BlockSpec((br, d), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((segments, d), lambda i: (0, 0)),
        compiler_params=_cp(limit, ("arbitrary",)), name="segment_sum")(seg, x)
  return fn, (S((1, rows), I32), S((rows, d), dt))


def conv2d_im2col(batch, h, w, cin, cout, bco, kh=3, kw=3, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  hp, wp = h + kh - 1, w + kw - 1

  def kernel(x_ref, w_ref, o_ref):
    cols = [x_ref[pl.ds(dy, h), pl.ds(dx, w), :].reshape(h * w, cin) for dy in range(kh) for dx in range(kw)]
    patches = jnp.concatenate(cols, axis=-1)
    o_ref[...] = jnp.dot(patches, w_ref[...], preferred_element_type=F32).astype(o_ref.dtype)

  def fn(x, wt):
    return pl.pallas_call(
        kernel, out_shape=S((batch, h * w, cout), dt), grid=(batch, cout // bco),
        in_specs=[pl.BlockSpec((None, hp, wp, cin), lambda b, c: (b, 0, 0, 0)),
                  pl.BlockSpec((kh * kw * cin, bco), lambda b, c: (0, c))],
        out_specs=pl.BlockSpec((None, h * w, bco), lambda b, c: (b, 0, c)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="conv2d_im2col")(x, wt)
  return fn, (S((batch, hp, wp, cin), dt), S((kh * kw * cin, cout), dt))


# =============================================================================================
# Set C ("heldout2"): written after the replicated-layout rule was fixed, to judge it on structures
# it was not found on: index and position iotas held across reductions and dots, and a norm.


def greedy_argmax(rows, vocab, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, i_ref, lp_ref):
    x = x_ref[...].astype(F32)
    col = jax.lax.broadcasted_iota(I32, x.shape, 1)
    m = jnp.max(x, axis=-1, keepdims=True)
    i_ref[...] = jnp.min(jnp.where(x == m, col, vocab), axis=-1, keepdims=True)
    lp_ref[...] = -jnp.log(jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True))

  def fn(x):
    o = pl.BlockSpec((br, 1), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, 1), I32), S((rows, 1), F32)), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, vocab), lambda i: (i, 0))], out_specs=(o, o),
        compiler_params=_cp(limit, ("parallel",)), name="greedy_argmax")(x)
  return fn, (S((rows, vocab), dt),)


def alibi_attention(heads, s, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk

  def kernel(slope_ref, q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    h, i, j = pl.program_id(0), pl.program_id(1), pl.program_id(2)

    @pl.when(j == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    qp = i * bq + jax.lax.broadcasted_iota(I32, (bq, bk), 0)
    kp = j * bk + jax.lax.broadcasted_iota(I32, (bq, bk), 1)
    sc = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32)
    sc = sc * 0.125 + slope_ref[h] * (kp - qp).astype(F32)
    _online_softmax_step(jnp.where(kp <= qp, sc, NEG), v_ref, dt, m_ref, l_ref, acc_ref, ...)

    @pl.when(j == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(slopes, q, k, v):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, j: (h, i, 0))
    kv = pl.BlockSpec((None, bk, d), lambda h, i, j: (h, j, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bq, nk),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), qs, kv, kv], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="alibi_attention")(slopes, q, k, v)
  a = S((heads, s, d), dt)
  return fn, (S((heads,), F32), a, a, a)


def causal_softmax(s, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, o_ref):
    row = pl.program_id(0) * br + jax.lax.broadcasted_iota(I32, (br, s), 0)
    col = jax.lax.broadcasted_iota(I32, (br, s), 1)
    x = jnp.where(col <= row, x_ref[...].astype(F32), NEG)
    m = jnp.max(x, axis=-1, keepdims=True)
    p = jnp.where(col <= row, jnp.exp(x - m), 0.0)
    o_ref[...] = (p / jnp.sum(p, axis=-1, keepdims=True)).astype(o_ref.dtype)

  def fn(x):
    b = pl.BlockSpec((br, s), lambda i: (i, 0))
    return pl.pallas_call(kernel, out_shape=S((s, s), dt), grid=(s // br,), in_specs=[b], out_specs=b,
                          compiler_params=_cp(limit, ("parallel",)), name="causal_softmax")(x)
  return fn, (S((s, s), dt),)


def smoothed_cross_entropy(rows, vocab, br, eps=0.1, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, lab_ref, o_ref):
    x = x_ref[...].astype(F32)
    col = jax.lax.broadcasted_iota(I32, x.shape, 1)
    m = jnp.max(x, axis=-1, keepdims=True)
    lse = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True))
    target = jnp.sum(jnp.where(col == lab_ref[...], x, 0.0), axis=-1, keepdims=True)
    mean = jnp.sum(x, axis=-1, keepdims=True) / vocab
    o_ref[...] = lse - (1.0 - eps) * target - eps * mean

  def fn(x, lab):
    c = pl.BlockSpec((br, 1), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((rows, 1), F32), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, vocab), lambda i: (i, 0)), c], out_specs=c,
        compiler_params=_cp(limit, ("parallel",)), name="smoothed_cross_entropy")(x, lab)
  return fn, (S((rows, vocab), dt), S((rows, 1), I32))


def gated_rmsnorm(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, z_ref, w_ref, o_ref):
    g = x_ref[...].astype(F32) * _silu(z_ref[...].astype(F32))
    r = jax.lax.rsqrt(jnp.mean(g * g, axis=-1, keepdims=True) + 1e-6)
    o_ref[...] = (g * r * w_ref[...].astype(F32)).astype(o_ref.dtype)

  def fn(x, z, w):
    b = pl.BlockSpec((br, d), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((rows, d), dt), grid=(rows // br,),
        in_specs=[b, b, pl.BlockSpec((1, d), lambda i: (0, 0))], out_specs=b,
        compiler_params=_cp(limit, ("parallel",)), name="gated_rmsnorm")(x, z, w)
  return fn, (S((rows, d), dt), S((rows, d), dt), S((1, d), dt))


# Set D ("heldout3"): written after the second held-out set was judged, with the model as it stood:
# scans carried in scratch, small-rank and integer dots, epilogues that roll lanes, a backward
# over vocabulary blocks.


def layernorm_fwd(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...].astype(F32)
    mu = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    var = jnp.mean(xc * xc, axis=-1, keepdims=True)
    y = xc * jax.lax.rsqrt(var + 1e-5) * w_ref[...].astype(F32) + b_ref[...].astype(F32)
    o_ref[...] = y.astype(o_ref.dtype)

  def fn(x, w, b):
    blk = pl.BlockSpec((br, d), lambda i: (i, 0))
    row = pl.BlockSpec((1, d), lambda i: (0, 0))
    return pl.pallas_call(kernel, out_shape=S((rows, d), dt), grid=(rows // br,), in_specs=[blk, row, row],
                          out_specs=blk, compiler_params=_cp(limit, ("parallel",)), name="layernorm_fwd")(x, w, b)
  return fn, (S((rows, d), dt), S((1, d), dt), S((1, d), dt))


def linear_attn_chunk(heads, s, d, bt, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(q_ref, k_ref, v_ref, o_ref, state_ref):
    c = pl.program_id(1)

    @pl.when(c == 0)
    def _():
      state_ref[...] = jnp.zeros_like(state_ref)
    q, k, v = q_ref[...], k_ref[...], v_ref[...]
    row = jax.lax.broadcasted_iota(I32, (bt, bt), 0)
    col = jax.lax.broadcasted_iota(I32, (bt, bt), 1)
    sc = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    sc = jnp.where(col <= row, sc, 0.0)
    o = jnp.dot(sc.astype(dt), v, preferred_element_type=F32)
    o = o + jnp.dot(q, state_ref[...].astype(dt), preferred_element_type=F32)
    o_ref[...] = o.astype(o_ref.dtype)
    state_ref[...] += jnp.dot(k.T, v, preferred_element_type=F32)

  def fn(q, k, v):
    b = pl.BlockSpec((None, bt, d), lambda h, c: (h, c, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bt), in_specs=[b, b, b], out_specs=b,
        scratch_shapes=[pltpu.VMEM((d, d), F32)], compiler_params=_cp(limit, ("parallel", "arbitrary")),
        name="linear_attn_chunk")(q, k, v)
  a = S((heads, s, d), dt)
  return fn, (a, a, a)


def qk_norm_rope(heads, seq, d, bt, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, cos_ref, sin_ref, o_ref):
    x = x_ref[...].astype(F32)
    y = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w_ref[...].astype(F32)
    rot = pltpu.roll(y, d // 2, 1)
    o_ref[...] = (y * cos_ref[...].astype(F32) + rot * sin_ref[...].astype(F32)).astype(o_ref.dtype)

  def fn(x, w, cos, sin):
    b = pl.BlockSpec((None, bt, d), lambda h, i: (h, i, 0))
    t = pl.BlockSpec((bt, d), lambda h, i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, seq, d), dt), grid=(heads, seq // bt),
        in_specs=[b, pl.BlockSpec((1, d), lambda h, i: (0, 0)), t, t], out_specs=b,
        compiler_params=_cp(limit, ("parallel", "parallel")), name="qk_norm_rope")(x, w, cos, sin)
  return fn, (S((heads, seq, d), dt), S((1, d), dt), S((seq, d), dt), S((seq, d), dt))


def cross_entropy_bwd(rows, vocab, br, bv, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, lse_ref, lab_ref, g_ref, o_ref):
    j = pl.program_id(1)
    x = x_ref[...].astype(F32)
    col = j * bv + jax.lax.broadcasted_iota(I32, (br, bv), 1)
    p = jnp.exp(x - lse_ref[...])
    o_ref[...] = ((p - jnp.where(col == lab_ref[...], 1.0, 0.0)) * g_ref[...]).astype(o_ref.dtype)

  def fn(x, lse, lab, g):
    blk = pl.BlockSpec((br, bv), lambda i, j: (i, j))
    c = pl.BlockSpec((br, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((rows, vocab), dt), grid=(rows // br, vocab // bv), in_specs=[blk, c, c, c],
        out_specs=blk, compiler_params=_cp(limit, ("parallel", "parallel")), name="cross_entropy_bwd")(x, lse, lab, g)
  return fn, (S((rows, vocab), dt), S((rows, 1), F32), S((rows, 1), I32), S((rows, 1), F32))


def int8_matmul(bm, bn, bk, limit=None):
  m, n, k = 2 * bm, 2 * bn, 2 * bk
  nk = k // bk
  kernel = _k_accumulated(nk, I32, lambda acc, xs_ref, ws_ref: acc.astype(F32) * xs_ref[...] * ws_ref[...])

  def fn(x, w, xs, ws):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), jnp.bfloat16), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)), pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), I32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="int8_matmul")(x, w, xs, ws)
  return fn, (S((m, k), jnp.int8), S((k, n), jnp.int8), S((m, 1), F32), S((1, n), F32))


def ssm_scan(length, ch, dstate, bc, chunk=128, dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, dt_ref, a_ref, bt_ref, ct_ref, o_ref, h_ref):
    c = pl.program_id(1)

    @pl.when(c == 0)
    def _():
      h_ref[...] = jnp.zeros_like(h_ref)
    a = a_ref[...]
    bt, ct = bt_ref[...], ct_ref[...]
    lane = jax.lax.broadcasted_iota(I32, (dstate, chunk), 1)

    def step(t, h):
      x_t = x_ref[pl.ds(t, 1), :].astype(F32)
      d_t = dt_ref[pl.ds(t, 1), :].astype(F32)
      b_t = jnp.sum(jnp.where(lane == t, bt, 0.0), axis=1, keepdims=True)
      c_t = jnp.sum(jnp.where(lane == t, ct, 0.0), axis=1, keepdims=True)
      h = jnp.exp(d_t * a) * h + b_t * (d_t * x_t)
      o_ref[pl.ds(t, 1), :] = jnp.sum(c_t * h, axis=0, keepdims=True).astype(o_ref.dtype)
      return h
    h_ref[...] = jax.lax.fori_loop(0, chunk, step, h_ref[...])

  def fn(x, dtv, a, bt, ct):
    seq = pl.BlockSpec((chunk, bc), lambda j, c: (c, j))
    st = pl.BlockSpec((dstate, chunk), lambda j, c: (0, c))
    return pl.pallas_call(
        kernel, out_shape=S((length, ch), dt), grid=(ch // bc, length // chunk),
        in_specs=[seq, seq, pl.BlockSpec((dstate, bc), lambda j, c: (0, j)), st, st], out_specs=seq,
        scratch_shapes=[pltpu.VMEM((dstate, bc), F32)], compiler_params=_cp(limit, ("parallel", "arbitrary")),
        name="ssm_scan")(x, dtv, a, bt, ct)
  return fn, (S((length, ch), dt), S((length, ch), dt), S((dstate, ch), F32), S((dstate, length), F32),
              S((dstate, length), F32))


def qkv_proj_rope(bm, heads, hd, bk, k, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  m, n = 2 * bm, heads * hd
  nk = k // bk

  def rope(y, cos_ref, sin_ref):
    rot = pltpu.roll(y, hd // 2, 1)
    return y * cos_ref[...].astype(F32) + rot * sin_ref[...].astype(F32)
  kernel = _k_accumulated(nk, F32, rope)

  def fn(x, w, cos, sin):
    t = pl.BlockSpec((bm, hd), lambda i, j, kk: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, heads, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, hd), lambda i, j, kk: (kk, j)),
                  t, t],
        out_specs=pl.BlockSpec((bm, hd), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, hd), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="qkv_proj_rope")(x, w, cos, sin)
  return fn, (S((m, k), dt), S((k, n), dt), S((m, hd), dt), S((m, hd), dt))


def lora_matmul(bm, bn, bk, r, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  m, n, k = 2 * bm, 2 * bn, 2 * bk
  nk = k // bk

  def kernel(x_ref, w_ref, a_ref, b_ref, o_ref, acc_ref, xa_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
      xa_ref[...] = jnp.zeros_like(xa_ref)
    x = x_ref[...]
    acc_ref[...] += jnp.dot(x, w_ref[...], preferred_element_type=F32)
    xa_ref[...] += jnp.dot(x, a_ref[...], preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      low = jnp.dot(xa_ref[...].astype(dt), b_ref[...], preferred_element_type=F32)
      o_ref[...] = (acc_ref[...] + 0.5 * low).astype(o_ref.dtype)

  def fn(x, w, a, b):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((bk, r), lambda i, j, kk: (kk, 0)), pl.BlockSpec((r, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32), pltpu.VMEM((bm, r), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="lora_matmul")(x, w, a, b)
  return fn, (S((m, k), dt), S((k, n), dt), S((k, r), dt), S((r, n), dt))


# Set D' ("heldout4"): written after the third held-out set was judged, with the model as it stood:
# an attention backward with two accumulators, page tables and token ids read by index maps from
# scalar prefetch, group statistics, strided pooling, a fused quantizing norm and an in-place cache
# update.


def flash_attn_bwd_dkv(heads, s, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nq = s // bq
  scale = float(d) ** -0.5

  def kernel(q_ref, k_ref, v_ref, do_ref, lse_ref, di_ref, dk_ref, dv_ref, dk_acc, dv_acc):
    t = pl.program_id(2)

    @pl.when(t == 0)
    def _():
      dk_acc[...] = jnp.zeros_like(dk_acc)
      dv_acc[...] = jnp.zeros_like(dv_acc)
    q, k, v, do = q_ref[...], k_ref[...], v_ref[...], do_ref[...]
    sc = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=F32) * scale
    p = jnp.exp(sc - lse_ref[...])
    dv_acc[...] += jax.lax.dot_general(p.astype(dt), do, (((0,), (0,)), ((), ())), preferred_element_type=F32)
    dp = jax.lax.dot_general(do, v, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    ds = p * (dp - di_ref[...]) * scale
    dk_acc[...] += jax.lax.dot_general(ds.astype(dt), q, (((0,), (0,)), ((), ())), preferred_element_type=F32)

    @pl.when(t == nq - 1)
    def _():
      dk_ref[...] = dk_acc[...].astype(dk_ref.dtype)
      dv_ref[...] = dv_acc[...].astype(dv_ref.dtype)

  def fn(q, k, v, do, lse, di):
    qs = pl.BlockSpec((None, bq, d), lambda h, j, t: (h, t, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, j, t: (h, j, 0))
    st = pl.BlockSpec((None, bq, 1), lambda h, j, t: (h, t, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((heads, s, d), dt), S((heads, s, d), dt)), grid=(heads, s // bk, nq),
        in_specs=[qs, ks, ks, qs, st, st], out_specs=(ks, ks),
        scratch_shapes=[pltpu.VMEM((bk, d), F32), pltpu.VMEM((bk, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="flash_attn_bwd_dkv")(
            q, k, v, do, lse, di)
  a = S((heads, s, d), dt)
  return fn, (a, a, a, a, S((heads, s, 1), F32), S((heads, s, 1), F32))


def paged_attention(batch, kv_heads, group, d, page_size, pages_per_seq, kvb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  num_pages = batch * pages_per_seq + 3

  def kernel(tab_ref, len_ref, q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    b, p = pl.program_id(0), pl.program_id(2)

    @pl.when(p == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    pos = p * page_size + jax.lax.broadcasted_iota(I32, (group, page_size), 1)
    valid = pos < len_ref[b]
    for h in range(kvb):
      sc = jax.lax.dot_general(q_ref[h], k_ref[h], (((1,), (1,)), ((), ())), preferred_element_type=F32)
      _online_softmax_step(jnp.where(valid, sc, NEG), v_ref, dt, m_ref, l_ref, acc_ref, h)

    @pl.when(p == pages_per_seq - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :, :1]).astype(o_ref.dtype)

  def fn(tab, lens, q, k_pages, v_pages):
    qs = pl.BlockSpec((None, kvb, group, d), lambda b, h, p, tab: (b, h, 0, 0))
    kv = pl.BlockSpec((kvb, None, page_size, d), lambda b, h, p, tab: (h, tab[b * pages_per_seq + p], 0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((batch, kv_heads, group, d), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(batch, kv_heads // kvb, pages_per_seq),
            in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), qs, kv, kv], out_specs=qs,
            scratch_shapes=[pltpu.VMEM((kvb, group, 128), F32), pltpu.VMEM((kvb, group, 128), F32),
                            pltpu.VMEM((kvb, group, d), F32)]),
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="paged_attention")(
            tab, lens, q, k_pages, v_pages)
  pages = S((kv_heads, num_pages, page_size, d), dt)
  return fn, (S((batch * pages_per_seq,), I32), S((batch,), I32), S((batch, kv_heads, group, d), dt), pages, pages)


def group_norm(batch, hw, c, groups, bc=None, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  bc = bc or c
  cg = c // groups
  gb = bc // cg

  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...].astype(F32)
    s1 = jnp.sum(x, axis=0, keepdims=True)
    s2 = jnp.sum(x * x, axis=0, keepdims=True)
    to_g = (jax.lax.broadcasted_iota(I32, (bc, gb), 0) // cg == jax.lax.broadcasted_iota(I32, (bc, gb), 1)).astype(F32)
    to_c = (jax.lax.broadcasted_iota(I32, (gb, bc), 1) // cg == jax.lax.broadcasted_iota(I32, (gb, bc), 0)).astype(F32)
    n = float(hw * cg)
    mean = jnp.dot(jnp.dot(s1, to_g, preferred_element_type=F32) / n, to_c, preferred_element_type=F32)
    msq = jnp.dot(jnp.dot(s2, to_g, preferred_element_type=F32) / n, to_c, preferred_element_type=F32)
    r = jax.lax.rsqrt(msq - mean * mean + 1e-5)
    o_ref[...] = ((x - mean) * (r * w_ref[...].astype(F32)) + b_ref[...].astype(F32)).astype(o_ref.dtype)

  def fn(x, w, b):
    blk = pl.BlockSpec((None, hw, bc), lambda n, j: (n, 0, j))
    vec = pl.BlockSpec((1, bc), lambda n, j: (0, j))
    return pl.pallas_call(
        kernel, out_shape=S((batch, hw, c), dt), grid=(batch, c // bc), in_specs=[blk, vec, vec], out_specs=blk,
        compiler_params=_cp(limit, ("parallel", "parallel")), name="group_norm")(x, w, b)
  return fn, (S((batch, hw, c), dt), S((1, c), dt), S((1, c), dt))


def embedding_gather(tokens, vocab, d, rb, scale=True, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  mult = float(d) ** 0.5 if scale else 1.0

  def kernel(ids_ref, t_ref, o_ref, buf_ref):
    r = pl.program_id(1)
    row = t_ref[...].astype(F32)
    buf_ref[pl.ds(r, 1), :] = row * mult if scale else row

    @pl.when(r == rb - 1)
    def _():
      o_ref[...] = buf_ref[...].astype(o_ref.dtype)

  def fn(ids, table):
    return pl.pallas_call(
        kernel, out_shape=S((tokens, d), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(tokens // rb, rb),
            in_specs=[pl.BlockSpec((None, 1, d), lambda i, r, ids: (ids[i * rb + r], 0, 0))],
            out_specs=pl.BlockSpec((rb, d), lambda i, r, ids: (i, 0)),
            scratch_shapes=[pltpu.VMEM((rb, d), F32)]),
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="embedding_gather")(ids, table)
  return fn, (S((tokens,), I32), S((vocab, 1, d), dt))


def maxpool2d(batch, h, w, c, bc, window=2, stride=2, dtype="bf16", limit=None):
  """h and w even; the input is the NHWC array viewed as (batch, h, w / 2, 2 c), so that a column
  pair's even and odd columns are two channel blocks of the lanes; window 3 (stride 2) pools a
  VALID window over the (padded) even size."""
  dt = DTYPES[dtype]
  hp, wp = h // 2, w // 2
  ho, wo = (hp, wp) if window == 2 else (hp - 1, wp - 1)
  nc = c // bc

  def kernel(e_ref, od_ref, o_ref):
    cm = jnp.maximum(e_ref[:, pl.ds(0, wo), :], od_ref[:, pl.ds(0, wo), :])
    if window == 3:
      cm = jnp.maximum(cm, e_ref[:, pl.ds(1, wo), :])
    pairs = cm.reshape(hp, 2, wo, bc)
    ev, odd = pairs[:, 0], pairs[:, 1]
    out = jnp.maximum(ev[:ho], odd[:ho])
    if window == 3:
      out = jnp.maximum(out, ev[1:ho + 1])
    o_ref[...] = out

  def fn(x):
    return pl.pallas_call(
        kernel, out_shape=S((batch, ho, wo, c), dt), grid=(batch, nc),
        in_specs=[pl.BlockSpec((None, h, wp, bc), lambda b, j: (b, 0, 0, j)),
                  pl.BlockSpec((None, h, wp, bc), lambda b, j: (b, 0, 0, nc + j))],
        out_specs=pl.BlockSpec((None, ho, wo, bc), lambda b, j: (b, 0, 0, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="maxpool2d")(x, x)
  return fn, (S((batch, h, wp, 2 * c), dt),)


def rmsnorm_quant(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, q_ref, s_ref):
    x = x_ref[...].astype(F32)
    y = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w_ref[...].astype(F32)
    scale = jnp.maximum(jnp.max(jnp.abs(y), axis=-1, keepdims=True), 1e-8) / 127.0
    q_ref[...] = jnp.clip(jnp.round(y / scale), -127.0, 127.0).astype(I32).astype(jnp.int8)
    s_ref[...] = scale

  def fn(x, w):
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), jnp.int8), S((rows, 1), F32)), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, d), lambda i: (i, 0)), pl.BlockSpec((1, d), lambda i: (0, 0))],
        out_specs=(pl.BlockSpec((br, d), lambda i: (i, 0)), pl.BlockSpec((br, 1), lambda i: (i, 0))),
        compiler_params=_cp(limit, ("parallel",)), name="rmsnorm_quant")(x, w)
  return fn, (S((rows, d), dt), S((1, d), dt))


def kv_cache_update(cache_len, tokens, heads, d, bt, hb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  n = heads * d

  def kernel(pos_ref, k_ref, v_ref, cos_ref, sin_ref, kc_hbm, vc_hbm, ko_ref, vo_ref):
    c, sn = cos_ref[...].astype(F32), sin_ref[...].astype(F32)
    for h in range(hb):
      x = k_ref[:, h * d:(h + 1) * d].astype(F32)
      ko_ref[:, h * d:(h + 1) * d] = (x * c + pltpu.roll(x, d // 2, 1) * sn).astype(ko_ref.dtype)
    vo_ref[...] = v_ref[...]

  def fn(pos, k, v, cos, sin, k_cache, v_cache):
    new = pl.BlockSpec((bt, hb * d), lambda i, j, pos: (i, j))
    tab = pl.BlockSpec((bt, d), lambda i, j, pos: (i, 0))
    hbm = pl.BlockSpec(memory_space=pl.ANY)
    out = pl.BlockSpec((bt, hb * d), lambda i, j, pos: (pos[0] + i, j))
    return pl.pallas_call(
        kernel, out_shape=(S((cache_len, n), dt), S((cache_len, n), dt)),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(tokens // bt, heads // hb),
            in_specs=[new, new, tab, tab, hbm, hbm], out_specs=(out, out)),
        input_output_aliases={5: 0, 6: 1},
        compiler_params=_cp(limit, ("parallel", "parallel")), name="kv_cache_update")(
            pos, k, v, cos, sin, k_cache, v_cache)
  new, tab, cache = S((tokens, n), dt), S((tokens, d), F32), S((cache_len, n), dt)
  return fn, (S((1,), I32), new, new, tab, tab, cache, cache)


# =============================================================================================
# Set E ("heldout5"): written after the fourth held-out set was judged and the v5p megacore, one-row
# relayout and roll-unpack rules were added, with the model as it stood: a grouped matmul whose weight
# is picked by a scalar-prefetched tile map, grouped-query causal attention, a 2-D depthwise conv, an
# int8 KV cache, a codebook argmin and a carried Welford combination.


def grouped_matmul(m, k, n, groups, bm, bk, bn, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = k // bk

  def kernel(offs_ref, tg_ref, x_ref, w_ref, o_ref, acc_ref):
    i, kk = pl.program_id(0), pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      g = tg_ref[i]
      row = i * bm + jax.lax.broadcasted_iota(I32, (bm, bn), 0)
      inside = (row >= offs_ref[g]) & (row < offs_ref[g + 1])
      o_ref[...] = jnp.where(inside, acc_ref[...], 0.0).astype(o_ref.dtype)

  def fn(offs, tile_group, x, w):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=2, grid=(m // bm, n // bn, nk),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk, offs, tg: (i, kk)),
                      pl.BlockSpec((None, bk, bn), lambda i, j, kk, offs, tg: (tg[i], kk, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk, offs, tg: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), F32)]),
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="grouped_matmul")(
            offs, tile_group, x, w)
  return fn, (S((groups + 1,), I32), S((m // bm,), I32), S((m, k), dt), S((groups, k, n), dt))


def flash_fwd_gqa(kv_heads, group, s, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk
  rows = group * bq
  scale = float(d) ** -0.5

  def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    qi, ki = pl.program_id(1), pl.program_id(2)

    @pl.when(ki == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)

    @pl.when(ki * bk <= qi * bq + bq - 1)
    def _():
      q = q_ref[...].reshape(rows, d)
      sc = jax.lax.dot_general(q, k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32) * scale
      qpos = qi * bq + jax.lax.broadcasted_iota(I32, (rows, bk), 0) % bq
      kpos = ki * bk + jax.lax.broadcasted_iota(I32, (rows, bk), 1)
      _online_softmax_step(jnp.where(kpos <= qpos, sc, NEG), v_ref, dt, m_ref, l_ref, acc_ref, Ellipsis)

    @pl.when(ki == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).reshape(group, bq, d).astype(o_ref.dtype)

  def fn(q, k, v):
    qs = pl.BlockSpec((None, group, bq, d), lambda h, i, j: (h, 0, i, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, i, j: (h, j, 0))
    return pl.pallas_call(
        kernel, out_shape=S((kv_heads, group, s, d), dt), grid=(kv_heads, s // bq, nk),
        in_specs=[qs, ks, ks], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((rows, 128), F32), pltpu.VMEM((rows, 128), F32), pltpu.VMEM((rows, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="flash_fwd_gqa")(q, k, v)
  kv = S((kv_heads, s, d), dt)
  return fn, (S((kv_heads, group, s, d), dt), kv, kv)


def depthwise_conv2d(batch, h, w, c, bc, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, o_ref):
    taps = w_ref[...].astype(F32)
    acc = jnp.zeros((h, w, bc), F32)
    for dy in range(3):
      for dx in range(3):
        acc = acc + x_ref[pl.ds(dy, h), pl.ds(dx, w), :].astype(F32) * taps[dy, dx:dx + 1, :]
    o_ref[...] = acc.astype(o_ref.dtype)

  def fn(x, taps):
    return pl.pallas_call(
        kernel, out_shape=S((batch, h, w, c), dt), grid=(batch, c // bc),
        in_specs=[pl.BlockSpec((None, h + 2, w + 2, bc), lambda b, j: (b, 0, 0, j)),
                  pl.BlockSpec((3, 3, bc), lambda b, j: (0, 0, j))],
        out_specs=pl.BlockSpec((None, h, w, bc), lambda b, j: (b, 0, 0, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="depthwise_conv2d")(x, taps)
  return fn, (S((batch, h + 2, w + 2, c), dt), S((3, 3, c), dt))


def int8_kv_decode(batch, kv_heads, group, s, d, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk
  scale = float(d) ** -0.5

  def kernel(q_ref, k_ref, v_ref, ks_ref, vs_ref, o_ref, m_ref, l_ref, acc_ref):
    j = pl.program_id(2)

    @pl.when(j == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    k = k_ref[...].astype(dt)
    sc = jax.lax.dot_general(q_ref[...], k, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    sc = sc * (ks_ref[...] * scale)
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(sc, axis=-1, keepdims=True))
    p = jnp.exp(sc - m_new[:, :1])
    alpha = jnp.exp(m_prev - m_new)
    l_ref[...] = l_ref[...] * alpha + jnp.sum(p, axis=-1, keepdims=True)
    pv = jnp.dot((p * vs_ref[...]).astype(dt), v_ref[...].astype(dt), preferred_element_type=F32)
    acc_ref[...] = acc_ref[...] * alpha[:, :1] + pv
    m_ref[...] = m_new

    @pl.when(j == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v, k_scale, v_scale):
    qs = pl.BlockSpec((None, None, group, d), lambda b, h, j: (b, h, 0, 0))
    kv = pl.BlockSpec((None, None, bk, d), lambda b, h, j: (b, h, j, 0))
    sc = pl.BlockSpec((None, None, 1, bk), lambda b, h, j: (b, h, 0, j))
    return pl.pallas_call(
        kernel, out_shape=S((batch, kv_heads, group, d), dt), grid=(batch, kv_heads, nk),
        in_specs=[qs, kv, kv, sc, sc], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((group, 128), F32), pltpu.VMEM((group, 128), F32), pltpu.VMEM((group, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="int8_kv_decode")(
            q, k, v, k_scale, v_scale)
  cache = S((batch, kv_heads, s, d), jnp.int8)
  sv = S((batch, kv_heads, 1, s), F32)
  return fn, (S((batch, kv_heads, group, d), dt), cache, cache, sv, sv)


def vq_codebook(rows, d, codes, br, bc, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nc = codes // bc

  def kernel(x_ref, c_ref, idx_ref, dist_ref, best_ref, arg_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      best_ref[...] = jnp.full(best_ref.shape, -NEG, F32)
      arg_ref[...] = jnp.zeros(arg_ref.shape, I32)
    x, cb = x_ref[...], c_ref[...]
    xf, cf = x.astype(F32), cb.astype(F32)
    xsq = jnp.sum(xf * xf, axis=-1, keepdims=True)
    csq = jax.lax.dot_general(jnp.ones((1, d), F32), cf * cf, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    xc = jax.lax.dot_general(x, cb, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    dist = xsq - 2.0 * xc + csq
    bmin = jnp.min(dist, axis=-1, keepdims=True)
    col = jax.lax.broadcasted_iota(I32, dist.shape, 1)
    barg = jnp.min(jnp.where(dist == bmin, col, bc), axis=-1, keepdims=True) + j * bc
    better = bmin < best_ref[...]
    arg_ref[...] = jnp.where(better, barg, arg_ref[...])
    best_ref[...] = jnp.where(better, bmin, best_ref[...])

    @pl.when(j == nc - 1)
    def _():
      idx_ref[...] = arg_ref[...]
      dist_ref[...] = best_ref[...]

  def fn(x, codebook):
    col = pl.BlockSpec((br, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, 1), I32), S((rows, 1), F32)), grid=(rows // br, nc),
        in_specs=[pl.BlockSpec((br, d), lambda i, j: (i, 0)), pl.BlockSpec((bc, d), lambda i, j: (j, 0))],
        out_specs=(col, col), scratch_shapes=[pltpu.VMEM((br, 1), F32), pltpu.VMEM((br, 1), I32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="vq_codebook")(x, codebook)
  return fn, (S((rows, d), dt), S((codes, d), dt))


def welford_stats(rows, d, br, bd, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nr = rows // br

  def kernel(x_ref, mean_ref, var_ref, mu_ref, m2_ref):
    i = pl.program_id(1)

    @pl.when(i == 0)
    def _():
      mu_ref[...] = jnp.zeros_like(mu_ref)
      m2_ref[...] = jnp.zeros_like(m2_ref)
    x = x_ref[...].astype(F32)
    bmean = jnp.sum(x, axis=0, keepdims=True) * (1.0 / br)
    xc = x - bmean
    bm2 = jnp.sum(xc * xc, axis=0, keepdims=True)
    na = (i * br).astype(F32)
    n = na + float(br)
    delta = bmean - mu_ref[...]
    mu_ref[...] = mu_ref[...] + delta * (float(br) / n)
    m2_ref[...] = m2_ref[...] + bm2 + delta * delta * (na * float(br) / n)

    @pl.when(i == nr - 1)
    def _():
      mean_ref[...] = mu_ref[...].astype(mean_ref.dtype)
      var_ref[...] = (m2_ref[...] * (1.0 / rows)).astype(var_ref.dtype)

  def fn(x):
    vec = pl.BlockSpec((1, bd), lambda j, i: (0, j))
    return pl.pallas_call(
        kernel, out_shape=(S((1, d), dt), S((1, d), dt)), grid=(d // bd, nr),
        in_specs=[pl.BlockSpec((br, bd), lambda j, i: (i, j))], out_specs=(vec, vec),
        scratch_shapes=[pltpu.VMEM((1, bd), F32), pltpu.VMEM((1, bd), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="welford_stats")(x)
  return fn, (S((rows, d), dt),)


# =============================================================================================
# Set F ("heldout6"): written after the fifth held-out set was judged, with the model as it stood:
# a weight in nn.Linear's (out, in) layout converted with per-channel zero points, fp8 operands
# converted in the body, a vocabulary projection fused into a z-loss cross-entropy, a bisection
# loop over whole vocabulary rows, an additive bias streamed in blocks beside k and v, and a
# block-sparse attention whose schedule and mask kinds come from scalar prefetch.


def quant_linear_nt(m, n, k, bm, bn, bk, wdtype="i8", dtype="bf16", limit=None):
  dt, wt = DTYPES[dtype], DTYPES[wdtype]
  nk = k // bk

  def kernel(x_ref, w_ref, z_ref, s_ref, o_ref, acc_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    w = (w_ref[...].astype(F32) - z_ref[...]).astype(dt)
    acc_ref[...] += jax.lax.dot_general(x_ref[...], w, (((1,), (1,)), ((), ())), preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] * s_ref[...]).astype(o_ref.dtype)

  def fn(x, w, zero, scale):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bn, bk), lambda i, j, kk: (j, kk)),
                  pl.BlockSpec((bn, 1), lambda i, j, kk: (j, 0)), pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="quant_linear_nt")(x, w, zero, scale)
  return fn, (S((m, k), dt), S((n, k), wt), S((n, 1), F32), S((1, n), F32))


FP8 = {"e4m3": jnp.float8_e4m3fn, "e5m2": jnp.float8_e5m2}


def fp8_scaled_matmul(m, n, k, bm, bn, bk, fp8="e4m3", dtype="bf16", limit=None):
  dt, ft = DTYPES[dtype], FP8[fp8]
  nk = k // bk

  def kernel(x_ref, w_ref, xs_ref, ws_ref, o_ref, acc_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...].astype(dt), w_ref[...].astype(dt), preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] * xs_ref[...] * ws_ref[...]).astype(o_ref.dtype)

  def fn(x, w, x_scale, w_scale):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)), pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="fp8_scaled_matmul")(
            x, w, x_scale, w_scale)
  return fn, (S((m, k), ft), S((k, n), ft), S((m, 1), F32), S((1, n), F32))


def linear_ce_zloss(rows, d, vocab, br, bv, z=1e-4, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nv = vocab // bv

  def kernel(h_ref, w_ref, lab_ref, loss_ref, lse_ref, m_ref, l_ref, t_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      m_ref[...] = jnp.full(m_ref.shape, NEG, F32)
      l_ref[...] = jnp.zeros(l_ref.shape, F32)
      t_ref[...] = jnp.zeros(t_ref.shape, F32)
    logits = jnp.dot(h_ref[...], w_ref[...], preferred_element_type=F32)
    col = jax.lax.broadcasted_iota(I32, logits.shape, 1) + j * bv
    t_ref[...] += jnp.sum(jnp.where(col == lab_ref[...], logits, 0.0), axis=-1, keepdims=True)
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(logits, axis=-1, keepdims=True))
    l_ref[...] = l_ref[...] * jnp.exp(m_prev - m_new) + jnp.sum(jnp.exp(logits - m_new), axis=-1, keepdims=True)
    m_ref[...] = m_new

    @pl.when(j == nv - 1)
    def _():
      lse = m_ref[...] + jnp.log(l_ref[...])
      lse_ref[...] = lse
      loss_ref[...] = lse - t_ref[...] + z * lse * lse

  def fn(h, w, lab):
    col = pl.BlockSpec((br, 1), lambda i, j: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, 1), F32), S((rows, 1), F32)), grid=(rows // br, nv),
        in_specs=[pl.BlockSpec((br, d), lambda i, j: (i, 0)), pl.BlockSpec((d, bv), lambda i, j: (0, j)), col],
        out_specs=(col, col), scratch_shapes=[pltpu.VMEM((br, 1), F32)] * 3,
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="linear_ce_zloss")(h, w, lab)
  return fn, (S((rows, d), dt), S((d, vocab), dt), S((rows, 1), I32))


def topp_minp_mask(rows, vocab, br, iters, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, temp_ref, topp_ref, minp_ref, o_ref):
    x = x_ref[...].astype(F32) / temp_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    pmax = jnp.max(p, axis=-1, keepdims=True)
    top_p = topp_ref[...]

    def body(_, carry):
      lo, hi = carry
      mid = 0.5 * (lo + hi)
      mass = jnp.sum(jnp.where(p >= mid, p, 0.0), axis=-1, keepdims=True)
      keep_more = mass < top_p
      return jnp.where(keep_more, lo, mid), jnp.where(keep_more, mid, hi)
    lo, _ = jax.lax.fori_loop(0, iters, body, (jnp.zeros((br, 1), F32), pmax))
    thresh = jnp.maximum(lo, minp_ref[...] * pmax)
    o_ref[...] = jnp.where(p >= thresh, x, NEG).astype(o_ref.dtype)

  def fn(x, temp, top_p, min_p):
    col = pl.BlockSpec((br, 1), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((rows, vocab), dt), grid=(rows // br,),
        in_specs=[pl.BlockSpec((br, vocab), lambda i: (i, 0)), col, col, col],
        out_specs=pl.BlockSpec((br, vocab), lambda i: (i, 0)),
        compiler_params=_cp(limit, ("parallel",)), name="topp_minp_mask")(x, temp, top_p, min_p)
  c = S((rows, 1), F32)
  return fn, (S((rows, vocab), dt), c, c, c)


def bias_attention(heads, s, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk
  scale = float(d) ** -0.5

  def kernel(q_ref, k_ref, v_ref, ab_ref, o_ref, m_ref, l_ref, acc_ref):
    ki = pl.program_id(2)

    @pl.when(ki == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    sc = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32) * scale
    _online_softmax_step(sc + ab_ref[...].astype(F32), v_ref, dt, m_ref, l_ref, acc_ref, Ellipsis)

    @pl.when(ki == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v, ab):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, j: (h, i, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, i, j: (h, j, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bq, nk),
        in_specs=[qs, ks, ks, pl.BlockSpec((None, bq, bk), lambda h, i, j: (h, i, j))], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="bias_attention")(q, k, v, ab)
  x = S((heads, s, d), dt)
  return fn, (x, x, x, S((heads, s, s), dt))


def splash_sparse_attention(heads, s, d, bq, bk, nnz, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nq = s // bq
  scale = float(d) ** -0.5

  def kernel(kv_ref, kind_ref, q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    i, j = pl.program_id(1), pl.program_id(2)

    @pl.when(j == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    t = i * nnz + j
    sc = jax.lax.dot_general(q_ref[...], k_ref[...], (((1,), (1,)), ((), ())), preferred_element_type=F32) * scale
    qpos = i * bq + jax.lax.broadcasted_iota(I32, (bq, bk), 0)
    kpos = kv_ref[t] * bk + jax.lax.broadcasted_iota(I32, (bq, bk), 1)
    keep = (kind_ref[t] == 0) | (kpos <= qpos)
    _online_softmax_step(jnp.where(keep, sc, NEG), v_ref, dt, m_ref, l_ref, acc_ref, Ellipsis)

    @pl.when(j == nnz - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(kv_idx, kinds, q, k, v):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, j, kv, kind: (h, i, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, i, j, kv, kind: (h, kv[i * nnz + j], 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=2, grid=(heads, nq, nnz), in_specs=[qs, ks, ks], out_specs=qs,
            scratch_shapes=[pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, d), F32)]),
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="splash_sparse_attention")(
            kv_idx, kinds, q, k, v)
  x = S((heads, s, d), dt)
  return fn, (S((nq * nnz,), I32), S((nq * nnz,), I32), x, x, x)


# =============================================================================================
# Set G ("heldout7"): written after the sixth held-out set was compiled, with the model as it stood:
# an int8 KV cache converted for both dots of a chunked prefill with per-head scales from SMEM on
# the scores and the output, int4/int8 expert weights picked by a scalar-prefetched tile map with
# per-group scales after two dots, a norm held in scratch across int8 Q/K/V projections, a 2-D
# rotary embedding by two lane rolls ahead of the QK dot, a router whose top-k choices are counted
# against a carried per-expert capacity, and the dx half of a gated MLP's backward.


def int8_kv_prefill(kv_heads, group, sq, skv, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = skv // bk
  rows = group * bq
  off = skv - sq
  scale = float(d) ** -0.5

  def kernel(ks_ref, vs_ref, q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    h, qi, ki = pl.program_id(0), pl.program_id(1), pl.program_id(2)

    @pl.when(ki == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)

    @pl.when(ki * bk <= off + qi * bq + bq - 1)
    def _():
      q = q_ref[...].reshape(rows, d)
      k = k_ref[...].astype(dt)
      sc = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=F32)
      sc = sc * (ks_ref[h] * scale)
      qpos = off + qi * bq + jax.lax.broadcasted_iota(I32, (rows, bk), 0) % bq
      kpos = ki * bk + jax.lax.broadcasted_iota(I32, (rows, bk), 1)
      sc = jnp.where(kpos <= qpos, sc, NEG)
      m_prev = m_ref[...]
      m_new = jnp.maximum(m_prev, jnp.max(sc, axis=-1, keepdims=True))
      p = jnp.exp(sc - m_new[:, :1])
      alpha = jnp.exp(m_prev - m_new)
      l_ref[...] = l_ref[...] * alpha + jnp.sum(p, axis=-1, keepdims=True)
      pv = jnp.dot(p.astype(dt), v_ref[...].astype(dt), preferred_element_type=F32)
      acc_ref[...] = acc_ref[...] * alpha[:, :1] + pv
      m_ref[...] = m_new

    @pl.when(ki == nk - 1)
    def _():
      o = acc_ref[...] * (vs_ref[h] / l_ref[:, :1])
      o_ref[...] = o.reshape(group, bq, d).astype(o_ref.dtype)

  def fn(k_scale, v_scale, q, k, v):
    smem = pl.BlockSpec(memory_space=pltpu.SMEM)
    qs = pl.BlockSpec((None, group, bq, d), lambda h, i, j: (h, 0, i, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, i, j: (h, j, 0))
    return pl.pallas_call(
        kernel, out_shape=S((kv_heads, group, sq, d), dt), grid=(kv_heads, sq // bq, nk),
        in_specs=[smem, smem, qs, ks, ks], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((rows, 128), F32), pltpu.VMEM((rows, 128), F32), pltpu.VMEM((rows, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="int8_kv_prefill")(
            k_scale, v_scale, q, k, v)
  cache = S((kv_heads, skv, d), jnp.int8)
  hs = S((kv_heads,), F32)
  return fn, (hs, hs, S((kv_heads, group, sq, d), dt), cache, cache)


def moe_wq_gate_up(m, d, f, experts, bm, bf, bk, group, wdtype="i4", dtype="bf16", limit=None):
  dt, wt = DTYPES[dtype], DTYPES[wdtype]
  nk, ng = d // bk, bk // group

  def kernel(te_ref, x_ref, wg_ref, wu_ref, sg_ref, su_ref, rw_ref, o_ref, ga_ref, ua_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      ga_ref[...] = jnp.zeros_like(ga_ref)
      ua_ref[...] = jnp.zeros_like(ua_ref)
    sg, su = sg_ref[...], su_ref[...]
    g = jnp.zeros(ga_ref.shape, F32)
    u = jnp.zeros(ua_ref.shape, F32)
    for gi in range(ng):
      x = x_ref[:, pl.ds(gi * group, group)]
      wg = wg_ref[pl.ds(gi * group, group), :].astype(dt)
      wu = wu_ref[pl.ds(gi * group, group), :].astype(dt)
      g = g + jnp.dot(x, wg, preferred_element_type=F32) * sg[gi:gi + 1, :]
      u = u + jnp.dot(x, wu, preferred_element_type=F32) * su[gi:gi + 1, :]
    ga_ref[...] += g
    ua_ref[...] += u

    @pl.when(kk == nk - 1)
    def _():
      o_ref[...] = (_silu(ga_ref[...]) * ua_ref[...] * rw_ref[...]).astype(o_ref.dtype)

  def fn(tile_expert, x, wg, wu, sg, su, rw):
    w = pl.BlockSpec((None, bk, bf), lambda i, j, kk, te: (te[i], kk, j))
    sc = pl.BlockSpec((None, None, ng, bf), lambda i, j, kk, te: (te[i], kk, 0, j))
    return pl.pallas_call(
        kernel, out_shape=S((m, f), dt),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(m // bm, f // bf, nk),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk, te: (i, kk)), w, w, sc, sc,
                      pl.BlockSpec((bm, 1), lambda i, j, kk, te: (i, 0))],
            out_specs=pl.BlockSpec((bm, bf), lambda i, j, kk, te: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bf), F32), pltpu.VMEM((bm, bf), F32)]),
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="moe_wq_gate_up")(
            tile_expert, x, wg, wu, sg, su, rw)
  wq = S((experts, d, f), wt)
  scs = S((experts, nk, ng, f), F32)
  return fn, (S((m // bm,), I32), S((m, d), dt), wq, wq, scs, scs, S((m, 1), F32))


def rmsnorm_qkv_int8(rows, d, kv_heads, group, hd, br, kvb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nq, nkv = kvb * group * hd, kvb * hd

  def kernel(x_ref, g_ref, wq_ref, wk_ref, wv_ref, sq_ref, sk_ref, sv_ref, qo_ref, ko_ref, vo_ref, xn_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      x = x_ref[...].astype(F32)
      ms = jnp.mean(x * x, axis=-1, keepdims=True)
      xn_ref[...] = (x * jax.lax.rsqrt(ms + 1e-6) * g_ref[...].astype(F32)).astype(dt)
    xn = xn_ref[...]
    qo_ref[...] = (jnp.dot(xn, wq_ref[...].astype(dt), preferred_element_type=F32) * sq_ref[...]).astype(dt)
    ko_ref[...] = (jnp.dot(xn, wk_ref[...].astype(dt), preferred_element_type=F32) * sk_ref[...]).astype(dt)
    vo_ref[...] = (jnp.dot(xn, wv_ref[...].astype(dt), preferred_element_type=F32) * sv_ref[...]).astype(dt)

  def fn(x, gamma, wq, wk, wv, sq, sk, sv):
    qcol = lambda i, j: (0, j)  # noqa: E731
    return pl.pallas_call(
        kernel, out_shape=(S((rows, kv_heads * group * hd), dt), S((rows, kv_heads * hd), dt),
                           S((rows, kv_heads * hd), dt)),
        grid=(rows // br, kv_heads // kvb),
        in_specs=[pl.BlockSpec((br, d), lambda i, j: (i, 0)), pl.BlockSpec((1, d), lambda i, j: (0, 0)),
                  pl.BlockSpec((d, nq), qcol), pl.BlockSpec((d, nkv), qcol), pl.BlockSpec((d, nkv), qcol),
                  pl.BlockSpec((1, nq), qcol), pl.BlockSpec((1, nkv), qcol), pl.BlockSpec((1, nkv), qcol)],
        out_specs=(pl.BlockSpec((br, nq), lambda i, j: (i, j)), pl.BlockSpec((br, nkv), lambda i, j: (i, j)),
                   pl.BlockSpec((br, nkv), lambda i, j: (i, j))),
        scratch_shapes=[pltpu.VMEM((br, d), dt)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="rmsnorm_qkv_int8")(
            x, gamma, wq, wk, wv, sq, sk, sv)
  i8 = jnp.int8
  return fn, (S((rows, d), dt), S((1, d), dt), S((d, kv_heads * group * hd), i8), S((d, kv_heads * hd), i8),
              S((d, kv_heads * hd), i8), S((1, kv_heads * group * hd), F32), S((1, kv_heads * hd), F32),
              S((1, kv_heads * hd), F32))


def rope2d_attention(heads, s, d, bq, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = s // bk
  qd = d // 4
  scale = float(d) ** -0.5

  def rot2d(x, c, sn):
    # each half of the head dim rotated by one axis' position: its first quarter takes minus the
    # second, its second quarter the first (rotate_half within the half), by two lane rolls
    lane = jax.lax.broadcasted_iota(I32, x.shape, 1) % (2 * qd)
    r = jnp.where(lane < qd, -pltpu.roll(x, d - qd, 1), pltpu.roll(x, qd, 1))
    return x * c + r * sn

  def kernel(q_ref, k_ref, v_ref, cq_ref, sq_ref, ck_ref, sk_ref, o_ref, qr_ref, m_ref, l_ref, acc_ref):
    ki = pl.program_id(2)

    @pl.when(ki == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
      qr_ref[...] = (rot2d(q_ref[...].astype(F32), cq_ref[...], sq_ref[...]) * scale).astype(dt)
    k = rot2d(k_ref[...].astype(F32), ck_ref[...], sk_ref[...]).astype(dt)
    sc = jax.lax.dot_general(qr_ref[...], k, (((1,), (1,)), ((), ())), preferred_element_type=F32)
    _online_softmax_step(sc, v_ref, dt, m_ref, l_ref, acc_ref, Ellipsis)

    @pl.when(ki == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q, k, v, cos, sin):
    qs = pl.BlockSpec((None, bq, d), lambda h, i, j: (h, i, 0))
    ks = pl.BlockSpec((None, bk, d), lambda h, i, j: (h, j, 0))
    tq = pl.BlockSpec((bq, d), lambda h, i, j: (i, 0))
    tk = pl.BlockSpec((bk, d), lambda h, i, j: (j, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, s, d), dt), grid=(heads, s // bq, nk),
        in_specs=[qs, ks, ks, tq, tq, tk, tk], out_specs=qs,
        scratch_shapes=[pltpu.VMEM((bq, d), dt), pltpu.VMEM((bq, 128), F32), pltpu.VMEM((bq, 128), F32),
                        pltpu.VMEM((bq, d), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="rope2d_attention")(
            q, k, v, cos, sin, cos, sin)
  x = S((heads, s, d), dt)
  t = S((s, d), F32)
  return fn, (x, x, x, t, t)


def router_capacity(tokens, d, experts, topk, capacity, bt, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, cw_ref, pos_ref, cnt_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
      cnt_ref[...] = jnp.zeros_like(cnt_ref)
    logits = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=F32)
    e = jnp.exp(logits - jnp.max(logits, axis=-1, keepdims=True))
    probs = e / jnp.sum(e, axis=-1, keepdims=True)
    col = jax.lax.broadcasted_iota(I32, probs.shape, 1)
    rest = probs
    sel, masks = jnp.zeros_like(probs), []
    for _ in range(topk):
      mx = jnp.max(rest, axis=-1, keepdims=True)
      idx = jnp.min(jnp.where(rest == mx, col, experts), axis=-1, keepdims=True)
      hit = col == idx
      masks.append(hit.astype(F32))
      sel = sel + jnp.where(hit, probs, 0.0)
      rest = jnp.where(hit, -1.0, rest)
    chosen = sum(masks)
    ri = jax.lax.broadcasted_iota(I32, (bt, bt), 0)
    ci = jax.lax.broadcasted_iota(I32, (bt, bt), 1)
    before = jnp.dot((ri > ci).astype(F32), chosen, preferred_element_type=F32) + cnt_ref[...]
    pos = jnp.zeros_like(probs)
    for r in range(topk):
      pos = pos + masks[r] * before
      before = before + masks[r]
    keep = (chosen > 0.0) & (pos < float(capacity))
    cw_ref[...] = jnp.where(keep, sel / jnp.sum(sel, axis=-1, keepdims=True), 0.0)
    pos_ref[...] = jnp.where(keep, pos, -1.0).astype(I32)
    cnt_ref[...] += jnp.sum(chosen, axis=0, keepdims=True)

  def fn(x, w):
    blk = pl.BlockSpec((bt, experts), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((tokens, experts), F32), S((tokens, experts), I32)), grid=(tokens // bt,),
        in_specs=[pl.BlockSpec((bt, d), lambda i: (i, 0)), pl.BlockSpec((d, experts), lambda i: (0, 0))],
        out_specs=(blk, blk), scratch_shapes=[pltpu.VMEM((1, experts), F32)],
        compiler_params=_cp(limit, ("arbitrary",)), name="router_capacity")(x, w)
  return fn, (S((tokens, d), dt), S((d, experts), dt))


def glu_mlp_bwd(tokens, d, f, bt, bf, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nf = f // bf
  nt = (((1,), (1,)), ((), ()))

  def kernel(x_ref, dy_ref, wg_ref, wu_ref, wd_ref, dg_ref, du_ref, dx_ref, acc_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    x = x_ref[...]
    g = jnp.dot(x, wg_ref[...], preferred_element_type=F32)
    u = jnp.dot(x, wu_ref[...], preferred_element_type=F32)
    dh = jax.lax.dot_general(dy_ref[...], wd_ref[...], nt, preferred_element_type=F32)
    sg = 1.0 / (1.0 + jnp.exp(-g))
    dg = (dh * u * sg * (1.0 + g * (1.0 - sg))).astype(dt)
    du = (dh * g * sg).astype(dt)
    dg_ref[...] = dg
    du_ref[...] = du
    acc_ref[...] += (jax.lax.dot_general(dg, wg_ref[...], nt, preferred_element_type=F32)
                     + jax.lax.dot_general(du, wu_ref[...], nt, preferred_element_type=F32))

    @pl.when(j == nf - 1)
    def _():
      dx_ref[...] = acc_ref[...].astype(dx_ref.dtype)

  def fn(x, dy, wg, wu, wd):
    row = pl.BlockSpec((bt, d), lambda i, j: (i, 0))
    hb = pl.BlockSpec((bt, bf), lambda i, j: (i, j))
    return pl.pallas_call(
        kernel, out_shape=(S((tokens, f), dt), S((tokens, f), dt), S((tokens, d), dt)), grid=(tokens // bt, nf),
        in_specs=[row, row, pl.BlockSpec((d, bf), lambda i, j: (0, j)), pl.BlockSpec((d, bf), lambda i, j: (0, j)),
                  pl.BlockSpec((bf, d), lambda i, j: (j, 0))],
        out_specs=(hb, hb, row), scratch_shapes=[pltpu.VMEM((bt, d), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="glu_mlp_bwd")(x, dy, wg, wu, wd)
  t = S((tokens, d), dt)
  return fn, (t, t, S((d, f), dt), S((d, f), dt), S((f, d), dt))


# =============================================================================================
# Set H ("heldout8"): written after the seventh held-out set was compiled, with the model as it
# stood: multi-head latent attention over a compressed KV cache with the queries absorbed into the
# latent, an int8 x int8 dot into int32 with an f32 scale + bias epilogue, a Mamba-2 SSD chunk with
# its segsum decay mask and a carried state, a layer norm backward recomputing its statistics with
# dgamma / dbeta in f32 scratch, a LoRA update whose shrink is made once per row block and held
# across the n axis, and a lane-axis cumsum (triangular dot or log-step rolls) with a capacity mask.


def mla_decode(batch, heads, kv_len, bk, hb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  lat, rd = 512, 64
  nk = kv_len // bk
  scale = float(128 + rd) ** -0.5
  nt = (((1,), (1,)), ((), ()))

  def kernel(ql_ref, qr_ref, ckv_ref, kr_ref, o_ref, m_ref, l_ref, acc_ref):
    ki = pl.program_id(2)

    @pl.when(ki == 0)
    def _():
      _init_online_softmax(m_ref, l_ref, acc_ref)
    c = ckv_ref[...]
    sc = (jax.lax.dot_general(ql_ref[...], c, nt, preferred_element_type=F32)
          + jax.lax.dot_general(qr_ref[...], kr_ref[...], nt, preferred_element_type=F32)) * scale
    m_prev = m_ref[...]
    m_new = jnp.maximum(m_prev, jnp.max(sc, axis=-1, keepdims=True))
    p = jnp.exp(sc - m_new[:, :1])
    alpha = jnp.exp(m_prev - m_new)
    l_ref[...] = l_ref[...] * alpha + jnp.sum(p, axis=-1, keepdims=True)
    acc_ref[...] = acc_ref[...] * alpha[:, :1] + jnp.dot(p.astype(dt), c, preferred_element_type=F32)
    m_ref[...] = m_new

    @pl.when(ki == nk - 1)
    def _():
      o_ref[...] = (acc_ref[...] / l_ref[:, :1]).astype(o_ref.dtype)

  def fn(q_lat, q_rope, c_kv, k_rope):
    ql = pl.BlockSpec((None, hb, lat), lambda b, h, j: (b, h, 0))
    qr = pl.BlockSpec((None, hb, rd), lambda b, h, j: (b, h, 0))
    return pl.pallas_call(
        kernel, out_shape=S((batch, heads, lat), dt), grid=(batch, heads // hb, nk),
        in_specs=[ql, qr, pl.BlockSpec((None, bk, lat), lambda b, h, j: (b, j, 0)),
                  pl.BlockSpec((None, bk, rd), lambda b, h, j: (b, j, 0))],
        out_specs=ql,
        scratch_shapes=[pltpu.VMEM((hb, 128), F32), pltpu.VMEM((hb, 128), F32), pltpu.VMEM((hb, lat), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="mla_decode")(
            q_lat, q_rope, c_kv, k_rope)
  return fn, (S((batch, heads, lat), dt), S((batch, heads, rd), dt), S((batch, kv_len, lat), dt),
              S((batch, kv_len, rd), dt))


def w8a8_matmul(m, n, k, bm, bn, bk, out="bf16", limit=None):
  nk = k // bk

  def kernel(x_ref, w_ref, xs_ref, ws_ref, b_ref, o_ref, acc_ref):
    kk = pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=I32)

    @pl.when(kk == nk - 1)
    def _():
      y = acc_ref[...].astype(F32) * xs_ref[...] * ws_ref[...] + b_ref[...]
      o_ref[...] = y.astype(o_ref.dtype)

  def fn(x, w, xs, ws, bias):
    col = pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))
    return pl.pallas_call(
        kernel, out_shape=S((m, n), DTYPES[out]), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)), col, col],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), I32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="w8a8_matmul")(x, w, xs, ws, bias)
  return fn, (S((m, k), jnp.int8), S((k, n), jnp.int8), S((m, 1), F32), S((1, n), F32), S((1, n), F32))


def ssd_chunk_scan(heads, seqlen, chunk, dstate, hd, dtype="f32", limit=None):
  dt = DTYPES[dtype]
  c = chunk
  nt = (((1,), (1,)), ((), ()))
  tn = (((0,), (0,)), ((), ()))

  def kernel(a_ref, x_ref, dt_ref, b_ref, c_ref, y_ref, h_ref):
    hh, ci = pl.program_id(0), pl.program_id(1)

    @pl.when(ci == 0)
    def _():
      h_ref[...] = jnp.zeros_like(h_ref)
    ri = jax.lax.broadcasted_iota(I32, (c, c), 0)
    cj = jax.lax.broadcasted_iota(I32, (c, c), 1)
    dtr = dt_ref[...].astype(F32)                      # (1, c): the chunk's step sizes on the lanes
    ar = dtr * a_ref[hh]                               # A * dt
    # cumulative sums of A * dt as a column (lane reduce) and as a row (upper-triangular dot)
    cs_col = jnp.sum(jnp.where(cj <= ri, jnp.broadcast_to(ar, (c, c)), 0.0), axis=1, keepdims=True)
    cs_row = jnp.dot(ar, (ri <= cj).astype(F32), preferred_element_type=F32)
    dt_col = jnp.sum(jnp.where(cj == ri, jnp.broadcast_to(dtr, (c, c)), 0.0), axis=1, keepdims=True)
    decay = jnp.where(cj <= ri, jnp.exp(cs_col - cs_row), 0.0)    # exp(segsum), causal
    x = x_ref[...]
    bm, cm = b_ref[...], c_ref[...]
    scores = jax.lax.dot_general(cm, bm, nt, preferred_element_type=F32)
    mm = (scores * decay * dtr).astype(dt)
    y = jnp.dot(mm, x, preferred_element_type=F32)
    # the state carried in from earlier chunks, decayed to each position
    y = y + jnp.dot(cm, h_ref[...].astype(dt), preferred_element_type=F32) * jnp.exp(cs_col)
    y_ref[...] = y.astype(y_ref.dtype)
    last = cs_row[:, c - 1:c]
    wb = (bm.astype(F32) * (jnp.exp(last - cs_col) * dt_col)).astype(dt)
    h_ref[...] = h_ref[...] * jnp.exp(last) + jax.lax.dot_general(wb, x, tn, preferred_element_type=F32)

  def fn(a, x, dtv, b, cmat):
    xs = pl.BlockSpec((None, c, hd), lambda h, i: (h, i, 0))
    st = pl.BlockSpec((c, dstate), lambda h, i: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, seqlen, hd), dt), grid=(heads, seqlen // c),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), xs, pl.BlockSpec((None, 1, c), lambda h, i: (h, 0, i)),
                  st, st],
        out_specs=xs, scratch_shapes=[pltpu.VMEM((dstate, hd), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="ssd_chunk_scan")(a, x, dtv, b, cmat)
  return fn, (S((heads,), F32), S((heads, seqlen, hd), dt), S((heads, 1, seqlen), dt), S((seqlen, dstate), dt),
              S((seqlen, dstate), dt))


def layernorm_bwd_scratch(rows, d, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nr = rows // br

  def kernel(x_ref, dy_ref, g_ref, dx_ref, dg_ref, db_ref, gacc_ref, bacc_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
      gacc_ref[...] = jnp.zeros_like(gacc_ref)
      bacc_ref[...] = jnp.zeros_like(bacc_ref)
    x = x_ref[...].astype(F32)
    dy = dy_ref[...].astype(F32)
    mu = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    rs = jax.lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + 1e-5)
    xhat = xc * rs
    gdy = dy * g_ref[...].astype(F32)
    dx = rs * (gdy - jnp.mean(gdy, axis=-1, keepdims=True) - xhat * jnp.mean(gdy * xhat, axis=-1, keepdims=True))
    dx_ref[...] = dx.astype(dx_ref.dtype)
    gacc_ref[...] += jnp.sum(dy * xhat, axis=0, keepdims=True)
    bacc_ref[...] += jnp.sum(dy, axis=0, keepdims=True)

    @pl.when(i == nr - 1)
    def _():
      dg_ref[...] = gacc_ref[...]
      db_ref[...] = bacc_ref[...]

  def fn(x, dy, g):
    row = pl.BlockSpec((br, d), lambda i: (i, 0))
    vec = pl.BlockSpec((1, d), lambda i: (0, 0))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, d), dt), S((1, d), F32), S((1, d), F32)), grid=(nr,),
        in_specs=[row, row, vec], out_specs=(row, vec, vec),
        scratch_shapes=[pltpu.VMEM((1, d), F32), pltpu.VMEM((1, d), F32)],
        compiler_params=_cp(limit, ("arbitrary",)), name="layernorm_bwd_scratch")(x, dy, g)
  return fn, (S((rows, d), dt), S((rows, d), dt), S((1, d), dt))


def lora_shrink_expand(m, n, k, r, bm, bn, bk, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nk = k // bk
  scale = 2.0

  def kernel(x_ref, w_ref, a_ref, b_ref, o_ref, acc_ref, xa_ref):
    j, kk = pl.program_id(1), pl.program_id(2)

    @pl.when(kk == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when((j == 0) & (kk == 0))
    def _():
      xa_ref[...] = jnp.zeros_like(xa_ref)
    x = x_ref[...]
    acc_ref[...] += jnp.dot(x, w_ref[...], preferred_element_type=F32)

    @pl.when(j == 0)
    def _():
      # the shrink x A, made once per row block over k and held for every n block after it
      xa_ref[...] += jnp.dot(x, a_ref[...], preferred_element_type=F32)

    @pl.when(kk == nk - 1)
    def _():
      up = jnp.dot(xa_ref[...].astype(dt), b_ref[...], preferred_element_type=F32)
      o_ref[...] = (acc_ref[...] + scale * up).astype(o_ref.dtype)

  def fn(x, w, a, b):
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((bk, r), lambda i, j, kk: (kk, 0)), pl.BlockSpec((r, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32), pltpu.VMEM((bm, r), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary", "arbitrary")), name="lora_shrink_expand")(x, w, a, b)
  return fn, (S((m, k), dt), S((k, n), dt), S((k, r), dt), S((r, n), dt))


def cumsum_topk_mask(rows, cols, br, bc, capacity, method="dot", dtype="f32", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, pos_ref, keep_ref, c_ref):
    t = pl.program_id(1)

    @pl.when(t == 0)
    def _():
      c_ref[...] = jnp.zeros_like(c_ref)
    x = x_ref[...].astype(F32)
    if method == "dot":
      ri = jax.lax.broadcasted_iota(I32, (bc, bc), 0)
      cj = jax.lax.broadcasted_iota(I32, (bc, bc), 1)
      cs = jnp.dot(x, (ri <= cj).astype(F32), preferred_element_type=F32)
    else:
      lane = jax.lax.broadcasted_iota(I32, (br, bc), 1)
      cs, s = x, 1
      while s < bc:
        cs = cs + jnp.where(lane >= s, pltpu.roll(cs, s, 1), 0.0)
        s *= 2
    cs = cs + c_ref[...]
    c_ref[...] = cs[:, bc - 1:bc]
    keep = (x > 0.0) & (cs <= float(capacity))
    pos_ref[...] = jnp.where(keep, cs - 1.0, -1.0).astype(I32)
    keep_ref[...] = keep.astype(keep_ref.dtype)

  def fn(x):
    blk = pl.BlockSpec((br, bc), lambda e, t: (e, t))
    return pl.pallas_call(
        kernel, out_shape=(S((rows, cols), I32), S((rows, cols), dt)), grid=(rows // br, cols // bc),
        in_specs=[blk], out_specs=(blk, blk), scratch_shapes=[pltpu.VMEM((br, 1), F32)],
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="cumsum_topk_mask")(x)
  return fn, (S((rows, cols), dt),)


# =============================================================================================
# Set I ("heldout9"): written after the tile-aligned concatenation rule (backends/tpu/vreg_replay.cc,
# ReassemblesOperandVregs), which was found on the im2col conv2d, the only family of the earlier
# sets that concatenates: every family here concatenates, on the lanes or the sublanes, loaded or
# computed operands, as a dot's left or right operand or into a store, with whole and part tiles.


def _rotary_call(kernel, name, tokens, heads, hd, rot, bt, hb, dt, limit):
  """A rotary kernel over (heads, tokens, hd) blocks of hb heads and bt tokens, with (bt, rot) f32
  cos and sin tables: the function and its argument shapes."""
  def fn(x, c, sn):
    blk = pl.BlockSpec((hb, bt, hd), lambda i, h: (h, i, 0))
    tab = pl.BlockSpec((bt, rot), lambda i, h: (i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, tokens, hd), dt), grid=(tokens // bt, heads // hb),
        in_specs=[blk, tab, tab], out_specs=blk,
        compiler_params=_cp(limit, ("parallel", "parallel")), name=name)(x, c, sn)
  return fn, (S((heads, tokens, hd), dt), S((tokens, rot), F32), S((tokens, rot), F32))


def unet_skip_conv1x1(hw, c_up, c_skip, cout, bm, bn, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(u_ref, s_ref, w_ref, b_ref, o_ref):
    h = jnp.concatenate([u_ref[...], s_ref[...]], axis=-1)
    acc = jnp.dot(h, w_ref[...], preferred_element_type=F32) + b_ref[...].astype(F32)
    o_ref[...] = _silu(acc).astype(o_ref.dtype)

  def fn(u, sk, w, b):
    return pl.pallas_call(
        kernel, out_shape=S((hw, cout), dt), grid=(hw // bm, cout // bn),
        in_specs=[pl.BlockSpec((bm, c_up), lambda i, j: (i, 0)), pl.BlockSpec((bm, c_skip), lambda i, j: (i, 0)),
                  pl.BlockSpec((c_up + c_skip, bn), lambda i, j: (0, j)), pl.BlockSpec((1, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="unet_skip_conv1x1")(u, sk, w, b)
  return fn, (S((hw, c_up), dt), S((hw, c_skip), dt), S((c_up + c_skip, cout), dt), S((1, cout), dt))


def rope_rotate_half(tokens, heads, d, bt, hb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  half = d // 2

  def kernel(x_ref, c_ref, s_ref, o_ref):
    x = x_ref[...].astype(F32)
    rot = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    o_ref[...] = (x * c_ref[...][None] + rot * s_ref[...][None]).astype(o_ref.dtype)

  return _rotary_call(kernel, "rope_rotate_half", tokens, heads, d, d, bt, hb, dt, limit)


def spec_decode_attention(heads, cache, new, d, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nt = (((1,), (1,)), ((), ()))
  scale = float(d) ** -0.5

  def kernel(q_ref, kc_ref, vc_ref, kn_ref, vn_ref, o_ref):
    k = jnp.concatenate([kc_ref[...], kn_ref[...]], axis=0)
    v = jnp.concatenate([vc_ref[...], vn_ref[...]], axis=0)
    sc = jax.lax.dot_general(q_ref[...], k, nt, preferred_element_type=F32) * scale
    row = jax.lax.broadcasted_iota(I32, sc.shape, 0)
    col = jax.lax.broadcasted_iota(I32, sc.shape, 1)
    sc = jnp.where(col <= cache + row, sc, NEG)
    p = jnp.exp(sc - jnp.max(sc, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o_ref[...] = jnp.dot(p.astype(dt), v, preferred_element_type=F32).astype(o_ref.dtype)

  def fn(q, kc, vc, kn, vn):
    tok = pl.BlockSpec((None, new, d), lambda h: (h, 0, 0))
    cached = pl.BlockSpec((None, cache, d), lambda h: (h, 0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, new, d), dt), grid=(heads,),
        in_specs=[tok, cached, cached, tok, tok], out_specs=tok,
        compiler_params=_cp(limit, ("parallel",)), name="spec_decode_attention")(q, kc, vc, kn, vn)
  t, c = S((heads, new, d), dt), S((heads, cache, d), dt)
  return fn, (t, c, c, t, t)


def mha_concat_outproj(seq, heads, d, bq, dm, bn, dtype="bf16", limit=None, combine="concat"):
  """`combine`: "concat" (the family: the heads concatenated, one output projection) or
  "accumulate" (each head times its rows of the projection, summed: the same product without the
  concatenation; bench/tpu/probe_part_tile_concat.py)."""
  dt = DTYPES[dtype]
  nt = (((1,), (1,)), ((), ()))
  scale = float(d) ** -0.5

  def kernel(q_ref, k_ref, v_ref, w_ref, o_ref):
    outs = []
    for h in range(heads):
      sc = jax.lax.dot_general(q_ref[h], k_ref[h], nt, preferred_element_type=F32) * scale
      p = jnp.exp(sc - jnp.max(sc, axis=-1, keepdims=True))
      p = p / jnp.sum(p, axis=-1, keepdims=True)
      outs.append(jnp.dot(p.astype(dt), v_ref[h], preferred_element_type=F32).astype(dt))
    if combine == "concat":
      out = jnp.dot(jnp.concatenate(outs, axis=-1), w_ref[...], preferred_element_type=F32)
    else:
      out = sum(jnp.dot(o, w_ref[h * d:(h + 1) * d, :], preferred_element_type=F32) for h, o in enumerate(outs))
    o_ref[...] = out.astype(o_ref.dtype)

  def fn(q, k, v, w):
    kv = pl.BlockSpec((heads, seq, d), lambda i, j: (0, 0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((seq, dm), dt), grid=(seq // bq, dm // bn),
        in_specs=[pl.BlockSpec((heads, bq, d), lambda i, j: (0, i, 0)), kv, kv,
                  pl.BlockSpec((heads * d, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bq, bn), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "arbitrary")), name="mha_concat_outproj")(q, k, v, w)
  a = S((heads, seq, d), dt)
  return fn, (a, a, a, S((heads * d, dm), dt))


def fused_gate_up_concat(m, d, f, bm, bf, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, wg_ref, wu_ref, o_ref):
    w = jnp.concatenate([wg_ref[...], wu_ref[...]], axis=1)
    gu = jnp.dot(x_ref[...], w, preferred_element_type=F32)
    o_ref[...] = (_silu(gu[:, :bf]) * gu[:, bf:]).astype(o_ref.dtype)

  def fn(x, wg, wu):
    wb = pl.BlockSpec((d, bf), lambda i, j: (0, j))
    return pl.pallas_call(
        kernel, out_shape=S((m, f), dt), grid=(m // bm, f // bf),
        in_specs=[pl.BlockSpec((bm, d), lambda i, j: (i, 0)), wb, wb],
        out_specs=pl.BlockSpec((bm, bf), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="fused_gate_up_concat")(x, wg, wu)
  return fn, (S((m, d), dt), S((d, f), dt), S((d, f), dt))


# =============================================================================================
# Set J ("heldout10"): written after the part-tile concatenation rule (a concatenation of operands
# that do not fill whole tiles holds its result whole), found on the ninth set's rotate_half RoPE:
# partial rotary embeddings, MLA prefill attention over concatenated nope + rope head parts, and
# NeRF's positional encoding into its first layer, each concatenating part tiles.


def partial_rotary(tokens, heads, hd, rot, bt, hb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  half = rot // 2

  def kernel(x_ref, c_ref, s_ref, o_ref):
    x = x_ref[...].astype(F32)
    xr = x[..., :rot]
    turned = jnp.concatenate([-xr[..., half:], xr[..., :half]], axis=-1)
    rotated = xr * c_ref[...][None] + turned * s_ref[...][None]
    o_ref[...] = jnp.concatenate([rotated, x[..., rot:]], axis=-1).astype(o_ref.dtype)

  return _rotary_call(kernel, "partial_rotary", tokens, heads, hd, rot, bt, hb, dt, limit)


def mla_prefill_scores(heads, seq, bq, nope=128, rope=64, vd=128, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nt = (((1,), (1,)), ((), ()))
  scale = float(nope + rope) ** -0.5

  def kernel(qn_ref, qr_ref, kn_ref, kr_ref, v_ref, o_ref):
    q = jnp.concatenate([qn_ref[...], qr_ref[...]], axis=-1)
    k = jnp.concatenate([kn_ref[...], kr_ref[...]], axis=-1)
    sc = jax.lax.dot_general(q, k, nt, preferred_element_type=F32) * scale
    p = jnp.exp(sc - jnp.max(sc, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o_ref[...] = jnp.dot(p.astype(dt), v_ref[...], preferred_element_type=F32).astype(o_ref.dtype)

  def fn(qn, qr, kn, kr, v):
    def rows(width, block):
      return pl.BlockSpec((None, block, width), lambda h, i: (h, i if block == bq else 0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, seq, vd), dt), grid=(heads, seq // bq),
        in_specs=[rows(nope, bq), rows(rope, bq), rows(nope, seq), rows(rope, seq), rows(vd, seq)],
        out_specs=rows(vd, bq),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="mla_prefill_scores")(qn, qr, kn, kr, v)
  return fn, (S((heads, seq, nope), dt), S((heads, seq, rope), dt), S((heads, seq, nope), dt),
              S((heads, seq, rope), dt), S((heads, seq, vd), dt))


def nerf_posenc_mlp(points, freqs, width, br, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  feats = 3 + 6 * freqs

  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...]
    parts = [x]
    for k in range(freqs):
      parts += [jnp.sin(x * (2.0 ** k)), jnp.cos(x * (2.0 ** k))]
    enc = jnp.concatenate(parts, axis=-1).astype(dt)
    h = jnp.dot(enc, w_ref[...], preferred_element_type=F32) + b_ref[...]
    o_ref[...] = jnp.maximum(h, 0.0).astype(o_ref.dtype)

  def fn(x, w, b):
    return pl.pallas_call(
        kernel, out_shape=S((points, width), dt), grid=(points // br,),
        in_specs=[pl.BlockSpec((br, 3), lambda i: (i, 0)), pl.BlockSpec((feats, width), lambda i: (0, 0)),
                  pl.BlockSpec((1, width), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((br, width), lambda i: (i, 0)),
        compiler_params=_cp(limit, ("parallel",)), name="nerf_posenc_mlp")(x, w, b)
  return fn, (S((points, 3), F32), S((feats, width), dt), S((1, width), F32))


# =============================================================================================
# Set K ("heldout11"): written after the slice rule (a slice that covers every vreg of its
# operand is that operand's vregs), each slicing values in its body: Mamba's causal depthwise
# conv1d over a padded block by shifted row slices, a GLU over a fused gate + up projection split
# by lane slices (Phi-3's gate_up_proj, ChatGLM's dense_h_to_4h), and attention over a fused QKV
# block split per head (GPT-2's c_attn, BERT, ViT).


def causal_conv1d_taps(batch, seqlen, channels, bc, width=4, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  padded = seqlen + width - 1

  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...].astype(F32)
    w = w_ref[...].astype(F32)
    acc = b_ref[...].astype(F32) + x[0:seqlen] * w[0:1]
    for k in range(1, width):
      acc = acc + x[k:k + seqlen] * w[k:k + 1]
    o_ref[...] = _silu(acc).astype(o_ref.dtype)

  def fn(x, w, b):
    return pl.pallas_call(
        kernel, out_shape=S((batch, seqlen, channels), dt), grid=(batch, channels // bc),
        in_specs=[pl.BlockSpec((None, padded, bc), lambda i, j: (i, 0, j)),
                  pl.BlockSpec((width, bc), lambda i, j: (0, j)), pl.BlockSpec((1, bc), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((None, seqlen, bc), lambda i, j: (i, 0, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="causal_conv1d_taps")(x, w, b)
  return fn, (S((batch, padded, channels), dt), S((width, channels), dt), S((1, channels), dt))


def glu_split_fused(m, d, f, bm, bf, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, w_ref, o_ref):
    h = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=F32)
    o_ref[...] = (_silu(h[:, :bf]) * h[:, bf:]).astype(o_ref.dtype)

  def fn(x, w):
    return pl.pallas_call(
        kernel, out_shape=S((m, f), dt), grid=(m // bm, f // bf),
        in_specs=[pl.BlockSpec((bm, d), lambda i, j: (i, 0)), pl.BlockSpec((d, 2 * bf), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bf), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="glu_split_fused")(x, w)
  return fn, (S((m, d), dt), S((d, 2 * f), dt))


def _softmax_attention_block(q, k, v, dt, scale):
  """softmax(q k^T * scale) v over whole blocks, in f32 with a dot of `dt` operands."""
  sc = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=F32) * scale
  p = jnp.exp(sc - jnp.max(sc, axis=-1, keepdims=True))
  p = p / jnp.sum(p, axis=-1, keepdims=True)
  return jnp.dot(p.astype(dt), v, preferred_element_type=F32)


def _whole_block_attention(dt, d):
  """The kernel of one (q, k, v) block each: softmax(q k^T / sqrt(d)) v, stored as the output's dtype."""
  def kernel(q_ref, k_ref, v_ref, o_ref):
    o_ref[...] = _softmax_attention_block(q_ref[...], k_ref[...], v_ref[...], dt, float(d) ** -0.5).astype(o_ref.dtype)
  return kernel

def qkv_split_attention(heads, seq, d, bq, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  scale = float(d) ** -0.5

  def kernel(qb_ref, kvb_ref, o_ref):
    q = qb_ref[...][:, :d]
    full = kvb_ref[...]
    k, v = full[:, d:2 * d], full[:, 2 * d:]
    o_ref[...] = _softmax_attention_block(q, k, v, dt, scale).astype(o_ref.dtype)

  def fn(qkv):
    return pl.pallas_call(
        kernel, out_shape=S((heads, seq, d), dt), grid=(heads, seq // bq),
        in_specs=[pl.BlockSpec((None, bq, 3 * d), lambda h, i: (h, i, 0)),
                  pl.BlockSpec((None, seq, 3 * d), lambda h, i: (h, 0, 0))],
        out_specs=pl.BlockSpec((None, bq, d), lambda h, i: (h, i, 0)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="qkv_split_attention")(qkv, qkv)
  return fn, (S((heads, seq, 3 * d), dt),)



# =============================================================================================
# Set L ("heldout12"): written after the MXU-pass rule (a dot's computed left operand is held
# whole only where its right operand spans more than one MXU tile, and then packed, as the MXU
# takes it), each feeding a dot a left operand computed in the body, its right operand one MXU
# tile wide or several: a SwiGLU's down projection fused after the gating (vLLM's SiluAndMul
# feeding down_proj, Liger's fused SwiGLU), a LayerNorm fused before its linear (Transformer
# Engine's LayerNormLinear, Apex's FusedLayerNormLinear), and attention at Gemma's 256-lane head
# dim (p @ v two MXU tiles wide on v4-v5p, one on v6e and v7x).


def swiglu_down_fused(m, d, f, bm, bf, bn, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nf = f // bf

  def kernel(g_ref, u_ref, w_ref, o_ref, acc_ref):
    t = pl.program_id(2)

    @pl.when(t == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    h = (_silu(g_ref[...].astype(F32)) * u_ref[...].astype(F32)).astype(dt)
    acc_ref[...] += jnp.dot(h, w_ref[...], preferred_element_type=F32)

    @pl.when(t == nf - 1)
    def _():
      o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  def fn(g, u, w):
    gu = pl.BlockSpec((bm, bf), lambda i, j, t: (i, t))
    return pl.pallas_call(
        kernel, out_shape=S((m, d), dt), grid=(m // bm, d // bn, nf),
        in_specs=[gu, gu, pl.BlockSpec((bf, bn), lambda i, j, t: (t, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, t: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), F32)],
        compiler_params=_cp(limit, ("parallel", "parallel", "arbitrary")), name="swiglu_down_fused")(g, u, w)
  return fn, (S((m, f), dt), S((m, f), dt), S((f, d), dt))


def layernorm_linear(m, d, n, bm, bn, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(x_ref, g_ref, b_ref, w_ref, o_ref):
    x = x_ref[...].astype(F32)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mean
    var = jnp.mean(xc * xc, axis=-1, keepdims=True)
    y = xc * jax.lax.rsqrt(var + 1e-5) * g_ref[...].astype(F32) + b_ref[...].astype(F32)
    o_ref[...] = jnp.dot(y.astype(dt), w_ref[...], preferred_element_type=F32).astype(o_ref.dtype)

  def fn(x, g, b, w):
    row = pl.BlockSpec((1, d), lambda i, j: (0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((m, n), dt), grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, d), lambda i, j: (i, 0)), row, row, pl.BlockSpec((d, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=_cp(limit, ("parallel", "parallel")), name="layernorm_linear")(x, g, b, w)
  return fn, (S((m, d), dt), S((1, d), dt), S((1, d), dt), S((d, n), dt))


def gemma_attention(heads, seq, d, bq, dtype="bf16", limit=None):
  dt = DTYPES[dtype]
  nt = (((1,), (1,)), ((), ()))
  scale = float(d) ** -0.5

  # v is loaded after the softmax, where the dot reads it (not with q and k, as
  # _whole_block_attention loads it): the traced program keeps that order.
  def kernel(q_ref, k_ref, v_ref, o_ref):
    sc = jax.lax.dot_general(q_ref[...], k_ref[...], nt, preferred_element_type=F32) * scale
    p = jnp.exp(sc - jnp.max(sc, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o_ref[...] = jnp.dot(p.astype(dt), v_ref[...], preferred_element_type=F32).astype(o_ref.dtype)

  def fn(q, k, v):
    kv = pl.BlockSpec((None, seq, d), lambda h, i: (h, 0, 0))
    qs = pl.BlockSpec((None, bq, d), lambda h, i: (h, i, 0))
    return pl.pallas_call(
        kernel, out_shape=S((heads, seq, d), dt), grid=(heads, seq // bq), in_specs=[qs, kv, kv], out_specs=qs,
        compiler_params=_cp(limit, ("parallel", "parallel")), name="gemma_attention")(q, k, v)
  a = S((heads, seq, d), dt)
  return fn, (a, a, a)


# =============================================================================================
# Set M ("heldout13"): written after a validated band's central was made at least what the vreg
# replay holds across a barrier (less v4's register file), each softmax-ing a whole score block in
# one grid step, a body of a validated class that holds its scores across the softmax: Whisper's
# decoder cross-attention over the 1,500 encoder frames, ViT's self-attention over 197 tokens (196
# patches and the class token), and multi-query decode attention (Falcon-7B, StarCoder: every query
# head of a token against one shared K / V head).



def whisper_cross_attention(heads, tokens, frames, d, bq, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def fn(q, k, v):
    qs = pl.BlockSpec((None, bq, d), lambda h, i: (h, i, 0))
    kv = pl.BlockSpec((None, frames, d), lambda h, i: (h, 0, 0))
    return pl.pallas_call(
        _whole_block_attention(dt, d), out_shape=S((heads, tokens, d), dt), grid=(heads, tokens // bq), in_specs=[qs, kv, kv], out_specs=qs,
        compiler_params=_cp(limit, ("parallel", "parallel")), name="whisper_cross_attention")(q, k, v)
  kvs = S((heads, frames, d), dt)
  return fn, (S((heads, tokens, d), dt), kvs, kvs)


def vit_attention(batch, heads, tokens, d, hb, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def kernel(q_ref, k_ref, v_ref, o_ref):
    for h in range(hb):
      o_ref[h] = _softmax_attention_block(q_ref[h], k_ref[h], v_ref[h], dt, float(d) ** -0.5).astype(o_ref.dtype)

  def fn(q, k, v):
    spec = pl.BlockSpec((None, hb, tokens, d), lambda b, h: (b, h, 0, 0))
    return pl.pallas_call(
        kernel, out_shape=S((batch, heads, tokens, d), dt), grid=(batch, heads // hb), in_specs=[spec, spec, spec],
        out_specs=spec, compiler_params=_cp(limit, ("parallel", "parallel")), name="vit_attention")(q, k, v)
  a = S((batch, heads, tokens, d), dt)
  return fn, (a, a, a)


def mqa_decode_attention(batch, heads, s, d, dtype="bf16", limit=None):
  dt = DTYPES[dtype]

  def fn(q, k, v):
    kv = pl.BlockSpec((None, s, d), lambda b: (b, 0, 0))
    qs = pl.BlockSpec((None, heads, d), lambda b: (b, 0, 0))
    return pl.pallas_call(
        _whole_block_attention(dt, d), out_shape=S((batch, heads, d), dt), grid=(batch,), in_specs=[qs, kv, kv], out_specs=qs,
        compiler_params=_cp(limit, ("parallel",)), name="mqa_decode_attention")(q, k, v)
  kvs = S((batch, s, d), dt)
  return fn, (S((batch, heads, d), dt), kvs, kvs)

DEV = [swiglu_mlp, swiglu_mlp_buf1, rmsnorm_matmul, dwconv1d, running_argmax, transpose_add, dequant_i8_matmul,
       online_lse, layernorm_bwd, cumsum_carry, block_sparse_matmul, manual_dma, gelu_squeezed, add_rmsnorm_alias,
       decode_attention]
HELDOUT = [rope, gqa_decode, topk_mask, dequant_group_matmul, matmul_bias_gelu, moe_router, cross_entropy,
           local_attention, rmsnorm_bwd, adamw, absmax_quant, softcap_attention, segment_sum, conv2d_im2col]
HELDOUT2 = [greedy_argmax, alibi_attention, causal_softmax, smoothed_cross_entropy, gated_rmsnorm]
HELDOUT3 = [layernorm_fwd, linear_attn_chunk, qk_norm_rope, cross_entropy_bwd, int8_matmul, ssm_scan, qkv_proj_rope,
            lora_matmul]
HELDOUT4 = [flash_attn_bwd_dkv, paged_attention, group_norm, embedding_gather, maxpool2d, rmsnorm_quant,
            kv_cache_update]
HELDOUT5 = [grouped_matmul, flash_fwd_gqa, depthwise_conv2d, int8_kv_decode, vq_codebook, welford_stats]
HELDOUT6 = [quant_linear_nt, fp8_scaled_matmul, linear_ce_zloss, topp_minp_mask, bias_attention,
            splash_sparse_attention]
HELDOUT7 = [int8_kv_prefill, moe_wq_gate_up, rmsnorm_qkv_int8, rope2d_attention, router_capacity, glu_mlp_bwd]
HELDOUT8 = [mla_decode, w8a8_matmul, ssd_chunk_scan, layernorm_bwd_scratch, lora_shrink_expand, cumsum_topk_mask]
HELDOUT9 = [unet_skip_conv1x1, rope_rotate_half, spec_decode_attention, mha_concat_outproj, fused_gate_up_concat]
HELDOUT10 = [partial_rotary, mla_prefill_scores, nerf_posenc_mlp]
HELDOUT11 = [causal_conv1d_taps, glu_split_fused, qkv_split_attention]
HELDOUT12 = [swiglu_down_fused, layernorm_linear, gemma_attention]
HELDOUT13 = [whisper_cross_attention, vit_attention, mqa_decode_attention]
BUILDERS = {f.__name__: f for f in DEV + HELDOUT + HELDOUT2 + HELDOUT3 + HELDOUT4 + HELDOUT5 + HELDOUT6
            + HELDOUT7 + HELDOUT8 + HELDOUT9 + HELDOUT10 + HELDOUT11 + HELDOUT12 + HELDOUT13}


def build(kind, params):
  return BUILDERS[kind](**params)


# =============================================================================================
# the shapes of each set (every family from small streaming blocks to blocks past the default
# scoped limit; a few past the raised limit too)


def _rows(kind, keys, tuples, **fixed):
  out = []
  for t in tuples:
    p = dict(fixed)
    p.update(zip(keys, t))
    out.append((kind, p))
  return out


def dev_shapes():
  s = []
  s += _rows("swiglu_mlp", ("d", "f", "bt", "bf", "dtype"), [
      (512, 2048, 128, 256, "bf16"), (1024, 4096, 256, 512, "bf16"), (1024, 4096, 512, 1024, "bf16"),
      (2048, 8192, 256, 512, "bf16"), (2048, 8192, 512, 1024, "bf16"), (1536, 6144, 384, 768, "bf16"),
      (4096, 8192, 256, 512, "bf16"), (1024, 4096, 256, 512, "f32")],
      tokens=2048)
  s += _rows("swiglu_mlp_buf1", ("d", "f", "bt", "bf"), [
      (512, 2048, 256, 2048), (1024, 4096, 256, 4096), (1024, 4096, 256, 512), (2048, 8192, 512, 1024),
      (768, 3072, 128, 3072), (1024, 2048, 1024, 2048), (4096, 4096, 256, 1024)],
      tokens=2048)
  s += _rows("rmsnorm_matmul", ("d", "n", "br", "bn", "dtype"), [
      (1024, 1024, 128, 256, "bf16"), (1024, 4096, 256, 1024, "bf16"), (2048, 4096, 512, 512, "bf16"),
      (4096, 4096, 256, 1024, "bf16"), (8192, 2048, 256, 512, "bf16"),
      (1536, 3072, 512, 768, "bf16"), (2048, 2048, 1024, 2048, "f32"), (768, 1536, 512, 384, "bf16")],
      rows=4096)
  s += _rows("dwconv1d", ("batch", "length", "ch", "width", "bc", "dtype"), [
      (2, 999, 512, 4, 128, "f32"), (2, 999, 512, 4, 512, "f32"), (2, 1001, 1024, 4, 256, "bf16"),
      (1, 4095, 256, 4, 256, "f32"), (1, 4097, 512, 4, 512, "bf16"), (4, 513, 2048, 3, 1024, "f32"),
      (1, 8191, 256, 4, 128, "f32"), (2, 2047, 768, 5, 768, "bf16")])
  s += _rows("running_argmax", ("d", "br", "bk", "dtype"), [
      (4096, 128, 512, "f32"), (4096, 256, 1024, "f32"), (8192, 512, 2048, "f32"), (32768, 256, 4096, "f32"),
      (8192, 64, 8192, "bf16"), (4096, 512, 4096, "bf16"), (32768, 512, 4096, "f32")], rows=4096)
  s += _rows("transpose_add", ("bm", "bn", "dtype"), [
      (128, 256, "f32"), (256, 512, "f32"), (512, 512, "bf16"), (512, 1024, "f32"), (1024, 1024, "f32"),
      (1024, 2048, "bf16"), (2048, 1024, "f32"), (384, 640, "f32")])
  s += _rows("dequant_i8_matmul", ("bm", "bn", "bk"), [
      (128, 256, 256), (256, 512, 512), (512, 512, 1024), (512, 1024, 512), (1024, 1024, 1024),
      (256, 2048, 2048), (1024, 2048, 512), (384, 768, 1536), (2048, 1024, 1024)])
  s += _rows("online_lse", ("d", "br", "bk", "dtype"), [
      (8192, 128, 1024, "f32"), (8192, 256, 2048, "f32"), (32768, 256, 4096, "bf16"), (65536, 1024, 4096, "bf16"),
      (16384, 1024, 2048, "f32"), (8192, 64, 8192, "f32"), (4096, 512, 512, "f32")], rows=4096)
  s += _rows("layernorm_bwd", ("d", "br", "dtype"), [
      (512, 256, "f32"), (1024, 512, "f32"), (2048, 256, "bf16"), (4096, 256, "f32"), (4096, 512, "bf16"),
      (8192, 256, "f32"), (1000, 1024, "f32"), (3072, 1024, "f32")], rows=8192)
  s += _rows("cumsum_carry", ("br", "bd", "dtype"), [
      (128, 512, "f32"), (256, 512, "f32"), (512, 1024, "f32"), (1024, 1024, "f32"), (256, 2048, "bf16"),
      (1024, 2048, "bf16"), (512, 4096, "f32"), (128, 128, "f32")], rows=8192)
  for _, p in s[-8:]:
    p["d"] = 2 * p["bd"]
  s += _rows("block_sparse_matmul", ("bm", "bn", "bk", "nnz", "dtype"), [
      (128, 128, 256, 2, "bf16"), (256, 256, 512, 3, "bf16"), (512, 512, 512, 4, "bf16"), (512, 1024, 1024, 2, "bf16"),
      (1024, 1024, 512, 3, "bf16"), (256, 2048, 1024, 4, "bf16"), (1024, 1024, 2048, 2, "bf16"),
      (512, 512, 1024, 5, "f32"), (2048, 512, 512, 3, "bf16")])
  s += _rows("manual_dma", ("rows", "d", "br", "dtype"), [
      (4096, 512, 128, "f32"), (4096, 1024, 256, "f32"), (8192, 2048, 512, "bf16"), (8192, 4096, 512, "f32"),
      (8192, 4096, 1024, "f32"), (16384, 8192, 256, "bf16"), (4096, 8192, 1024, "f32"), (4096, 1000, 256, "f32"),
      (8192, 2048, 2048, "f32")])
  s += _rows("gelu_squeezed", ("batch", "rows", "d", "br", "dtype"), [
      (3, 1000, 333, 1000, "f32"), (2, 1000, 1000, 200, "f32"), (4, 999, 130, 999, "bf16"),
      (2, 4000, 520, 800, "bf16"), (3, 2000, 3000, 400, "f32"), (2, 3000, 1000, 600, "f32"),
      (5, 777, 4096, 777, "f32"), (2, 8000, 1000, 4000, "bf16"), (2, 1000, 2047, 1000, "f32")])
  s += _rows("add_rmsnorm_alias", ("d", "br", "dtype"), [
      (512, 256, "bf16"), (1024, 512, "bf16"), (2048, 1024, "bf16"), (4096, 512, "f32"), (4096, 1024, "bf16"),
      (8192, 512, "bf16"), (1536, 2048, "bf16"), (5120, 256, "f32")], rows=8192)
  s += _rows("decode_attention", ("batch", "heads", "s", "d", "bk", "dtype"), [
      (4, 8, 4096, 128, 256, "bf16"), (4, 16, 4096, 128, 1024, "bf16"), (2, 32, 8192, 128, 2048, "bf16"),
      (2, 64, 8192, 128, 4096, "bf16"), (2, 16, 16384, 256, 4096, "bf16"), (4, 8, 8192, 64, 8192, "bf16"),
      (2, 128, 8192, 128, 2048, "bf16"), (1, 16, 32768, 128, 16384, "f32"), (4, 40, 4096, 128, 512, "bf16")])
  return s


def heldout_shapes():
  s = []
  s += _rows("rope", ("seq", "q_heads", "kv_heads", "d", "bt", "dtype"), [
      (2048, 8, 1, 128, 128, "bf16"), (2048, 8, 2, 128, 256, "bf16"), (4096, 16, 4, 128, 512, "bf16"),
      (4096, 32, 8, 128, 512, "bf16"), (8192, 64, 8, 128, 512, "bf16"), (2048, 16, 16, 256, 256, "bf16"),
      (4096, 8, 8, 64, 512, "f32"), (4096, 16, 16, 128, 256, "f32")])
  s += _rows("gqa_decode", ("batch", "kv_heads", "group", "s", "d", "bk", "kvb"), [
      (4, 8, 4, 4096, 128, 512, 1), (4, 8, 4, 4096, 128, 512, 2), (4, 8, 8, 8192, 128, 1024, 4),
      (2, 8, 8, 8192, 128, 2048, 8), (2, 4, 16, 16384, 128, 4096, 4), (4, 16, 2, 4096, 128, 512, 4),
      (2, 8, 4, 8192, 256, 2048, 2), (2, 8, 8, 32768, 128, 4096, 4), (4, 2, 6, 4096, 128, 1024, 2)])
  s += _rows("topk_mask", ("d", "br", "k", "dtype"), [
      (1024, 128, 4, "f32"), (1024, 256, 8, "f32"), (4096, 128, 8, "f32"), (4096, 256, 16, "f32"),
      (8192, 256, 8, "bf16"), (32768, 64, 8, "f32"), (2000, 512, 4, "f32"), (4096, 512, 32, "f32")], rows=4096)
  s += _rows("dequant_group_matmul", ("bm", "bn", "bk", "group", "wdtype"), [
      (128, 256, 512, 128, "i8"), (256, 512, 512, 128, "i8"), (256, 512, 1024, 256, "i8"),
      (512, 1024, 1024, 128, "i8"), (1024, 1024, 1024, 256, "i8"), (512, 2048, 2048, 512, "i8"),
      (1024, 2048, 512, 128, "i8"), (256, 512, 512, 128, "i4"), (512, 1024, 1024, 128, "i4")])
  s += _rows("matmul_bias_gelu", ("bm", "bn", "bk", "dtype"), [
      (128, 128, 256, "bf16"), (256, 512, 512, "bf16"), (512, 512, 1024, "bf16"), (512, 1024, 512, "bf16"),
      (1024, 1024, 1024, "bf16"), (1024, 2048, 512, "bf16"), (384, 1152, 768, "bf16"), (512, 512, 512, "f32"),
      (1024, 1024, 512, "f32")])
  s += _rows("moe_router", ("tokens", "d", "experts", "bt", "dtype"), [
      (4096, 1024, 8, 256, "bf16"), (4096, 2048, 8, 512, "bf16"), (4096, 4096, 16, 512, "bf16"),
      (4096, 4096, 64, 1024, "bf16"), (8192, 2048, 128, 512, "bf16"), (8192, 4096, 256, 1024, "bf16"),
      (4096, 7168, 256, 512, "bf16"), (4096, 1024, 60, 256, "f32")])
  s += _rows("cross_entropy", ("rows", "vocab", "br", "bv", "dtype"), [
      (2048, 32768, 128, 1024, "bf16"), (2048, 32768, 256, 2048, "bf16"), (2048, 32000, 256, 3200, "bf16"),
      (4096, 131072, 512, 4096, "bf16"), (2048, 256000, 256, 6400, "bf16"), (2048, 50304, 128, 16768, "bf16"),
      (2048, 32768, 64, 512, "f32")])
  s += _rows("local_attention", ("heads", "s", "d", "bq", "window", "dtype"), [
      (2, 4096, 128, 256, 256, "bf16"), (2, 4096, 128, 512, 384, "bf16"), (2, 8192, 128, 1024, 1024, "bf16"),
      (2, 8192, 128, 2048, 2048, "bf16"), (2, 4096, 256, 512, 512, "bf16"), (4, 4096, 64, 512, 256, "bf16"),
      (2, 8192, 128, 1024, 512, "f32"), (2, 4096, 128, 128, 128, "bf16")])
  s += _rows("rmsnorm_bwd", ("d", "br", "dtype"), [
      (512, 256, "bf16"), (1024, 512, "bf16"), (2048, 512, "f32"), (4096, 256, "bf16"), (4096, 1024, "bf16"),
      (8192, 256, "f32"), (1000, 2048, "f32"), (3072, 768, "bf16")], rows=8192)
  s += _rows("adamw", ("rows", "d", "br", "gdtype"), [
      (4096, 1024, 128, "bf16"), (4096, 1024, 256, "bf16"), (8192, 2048, 256, "f32"), (8192, 2048, 512, "bf16"),
      (8192, 4096, 512, "bf16"), (16384, 1000, 2048, "bf16"),
      (4096, 8192, 256, "bf16"), (4096, 512, 4096, "bf16")])
  s += _rows("absmax_quant", ("d", "br", "dtype"), [
      (512, 256, "bf16"), (1024, 512, "bf16"), (2048, 512, "f32"), (4096, 256, "bf16"), (4096, 1024, "f32"),
      (8192, 512, "bf16"), (1000, 1024, "f32"), (14336, 256, "bf16")], rows=8192)
  s += _rows("softcap_attention", ("heads", "s", "d", "bq", "bk", "dtype"), [
      (2, 4096, 128, 256, 256, "bf16"), (2, 4096, 128, 512, 512, "bf16"), (2, 4096, 128, 1024, 512, "bf16"),
      (2, 4096, 256, 1024, 1024, "bf16"), (2, 8192, 128, 2048, 1024, "bf16"), (2, 8192, 128, 2048, 2048, "bf16"),
      (2, 4096, 128, 512, 1024, "f32"), (2, 4096, 64, 512, 512, "bf16")])
  s += _rows("segment_sum", ("rows", "d", "segments", "br", "dtype"), [
      (4096, 1024, 8, 256, "bf16"), (4096, 1024, 64, 512, "bf16"), (8192, 2048, 64, 1024, "bf16"),
      (8192, 4096, 128, 512, "bf16"), (8192, 4096, 256, 2048, "bf16"), (16384, 8192, 16, 1024, "bf16"),
      (8192, 2048, 60, 512, "f32"), (8192, 1000, 32, 1024, "bf16")])
  s += _rows("conv2d_im2col", ("batch", "h", "w", "cin", "cout", "bco", "kh", "kw", "dtype"), [
      (2, 16, 16, 128, 128, 128, 3, 3, "bf16"), (2, 16, 16, 128, 256, 128, 3, 3, "bf16"),
      (2, 32, 32, 128, 256, 256, 3, 3, "bf16"), (2, 32, 32, 256, 512, 256, 3, 3, "bf16"),
      (2, 64, 64, 128, 256, 256, 3, 3, "bf16"), (2, 56, 56, 128, 128, 128, 3, 3, "bf16"),
      (2, 28, 32, 256, 512, 512, 3, 3, "bf16"), (2, 16, 16, 512, 1024, 512, 3, 3, "bf16"),
      (2, 32, 32, 128, 128, 128, 5, 5, "bf16"), (2, 32, 32, 256, 256, 256, 3, 3, "f32")])
  return s


def heldout2_shapes():
  s = []
  s += _rows("greedy_argmax", ("vocab", "br", "dtype"), [
      (32000, 8, "bf16"), (32768, 32, "bf16"), (50304, 16, "f32"), (128256, 8, "bf16"), (151936, 16, "bf16"),
      (32000, 64, "f32")], rows=2048)
  s += _rows("alibi_attention", ("heads", "s", "d", "bq", "bk", "dtype"), [
      (4, 2048, 128, 256, 256, "bf16"), (4, 2048, 128, 512, 512, "bf16"), (2, 4096, 128, 1024, 512, "bf16"),
      (2, 4096, 64, 1024, 1024, "bf16"), (2, 4096, 128, 2048, 1024, "bf16"), (2, 2048, 256, 512, 512, "bf16")])
  s += _rows("causal_softmax", ("s", "br", "dtype"), [
      (2048, 64, "bf16"), (2048, 256, "f32"), (4096, 128, "bf16"), (4096, 512, "bf16"), (8192, 256, "f32"),
      (8192, 512, "bf16")])
  s += _rows("smoothed_cross_entropy", ("vocab", "br", "dtype"), [
      (32000, 16, "bf16"), (32768, 64, "bf16"), (50304, 32, "f32"), (128256, 16, "bf16"), (65536, 128, "bf16"),
      (32000, 256, "f32")], rows=2048)
  s += _rows("gated_rmsnorm", ("d", "br", "dtype"), [
      (1024, 256, "bf16"), (2048, 512, "bf16"), (4096, 256, "f32"), (4096, 1024, "bf16"), (8192, 512, "bf16"),
      (2560, 1024, "f32")], rows=8192)
  return s


def heldout3_shapes():
  s = []
  s += _rows("layernorm_fwd", ("d", "br", "dtype"), [
      (768, 256, "bf16"), (1024, 512, "bf16"), (2048, 1024, "f32"), (3000, 256, "bf16"), (4096, 512, "bf16"),
      (5120, 1024, "bf16"), (8192, 512, "f32")], rows=8192)
  s += _rows("linear_attn_chunk", ("heads", "s", "d", "bt", "dtype"), [
      (4, 2048, 64, 128, "bf16"), (4, 2048, 128, 256, "bf16"), (2, 4096, 128, 512, "bf16"),
      (2, 4096, 256, 256, "bf16"), (2, 4096, 128, 256, "f32"), (2, 8192, 128, 1024, "bf16"),
      (2, 8192, 256, 1024, "bf16")])
  s += _rows("qk_norm_rope", ("heads", "seq", "d", "bt", "dtype"), [
      (8, 4096, 128, 256, "bf16"), (16, 4096, 64, 512, "bf16"), (8, 8192, 128, 1024, "bf16"),
      (4, 4096, 128, 2048, "f32"), (4, 8192, 256, 2048, "bf16"), (8, 4096, 128, 4096, "f32"),
      (2, 8192, 256, 8192, "bf16")])
  s += _rows("cross_entropy_bwd", ("vocab", "br", "bv", "dtype"), [
      (32768, 64, 1024, "bf16"), (32768, 128, 4096, "bf16"), (50304, 64, 50304, "f32"), (65536, 256, 8192, "bf16"),
      (128000, 128, 6400, "bf16"), (151552, 256, 9472, "bf16"), (262144, 128, 16384, "bf16")], rows=2048)
  s += _rows("int8_matmul", ("bm", "bn", "bk"), [
      (128, 128, 256), (256, 256, 512), (384, 768, 1152), (512, 512, 512), (512, 1024, 1024), (1024, 1024, 2048),
      (2048, 1024, 1024)])
  s += _rows("ssm_scan", ("length", "ch", "dstate", "bc", "dtype"), [
      (1024, 1024, 16, 128, "f32"), (2048, 1024, 16, 256, "f32"), (2048, 2048, 16, 512, "f32"),
      (1024, 4096, 16, 2048, "bf16"), (2048, 2048, 64, 512, "f32"), (2048, 4096, 16, 1024, "f32"),
      (2048, 4096, 128, 1024, "f32")])
  s += _rows("qkv_proj_rope", ("bm", "heads", "hd", "bk", "k"), [
      (128, 8, 128, 512, 2048), (256, 16, 128, 1024, 4096), (256, 32, 128, 512, 5120), (512, 8, 128, 2048, 4096),
      (1024, 4, 256, 1024, 4096), (1024, 8, 256, 2048, 4096), (2048, 4, 128, 4096, 8192)])
  s += _rows("lora_matmul", ("bm", "bn", "bk", "r"), [
      (128, 256, 256, 8), (256, 512, 512, 16), (384, 1152, 768, 16), (512, 512, 1024, 32), (512, 1024, 1024, 64),
      (1024, 1024, 2048, 16), (2048, 2048, 512, 64)])
  return s


def heldout4_shapes():
  s = []
  s += _rows("flash_attn_bwd_dkv", ("heads", "s", "d", "bq", "bk", "dtype"), [
      (4, 2048, 64, 128, 128, "bf16"), (4, 2048, 128, 256, 256, "bf16"), (2, 4096, 96, 512, 256, "bf16"),
      (2, 4096, 128, 512, 512, "f32"), (2, 4096, 256, 512, 1024, "bf16"), (2, 8192, 256, 1024, 1024, "bf16")])
  s += _rows("paged_attention", ("batch", "kv_heads", "group", "d", "page_size", "pages_per_seq", "kvb", "dtype"), [
      (4, 8, 1, 128, 64, 32, 1, "bf16"), (4, 8, 4, 128, 128, 32, 2, "bf16"), (4, 8, 8, 128, 256, 16, 8, "bf16"),
      (2, 8, 6, 256, 512, 16, 4, "bf16"), (2, 16, 8, 128, 1024, 8, 16, "bf16"), (2, 4, 8, 256, 1024, 8, 4, "f32")])
  s += _rows("group_norm", ("batch", "hw", "c", "groups", "bc", "dtype"), [
      (2, 64, 1280, 32, None, "bf16"), (2, 256, 1280, 32, 640, "bf16"), (2, 1024, 960, 32, None, "bf16"),
      (2, 4096, 320, 32, None, "bf16"), (1, 4096, 512, 32, 256, "f32"), (1, 16384, 256, 32, None, "bf16")])
  s += _rows("embedding_gather", ("tokens", "vocab", "d", "rb", "scale", "dtype"), [
      (2048, 32000, 768, 8, True, "bf16"), (2048, 50304, 2560, 32, False, "f32"),
      (4096, 128256, 4096, 128, False, "bf16"), (4096, 256000, 3072, 256, True, "bf16"),
      (6144, 151936, 5120, 384, False, "bf16"), (8192, 128256, 8192, 512, False, "bf16")])
  s += _rows("maxpool2d", ("batch", "h", "w", "c", "bc", "window", "stride", "dtype"), [
      (2, 56, 56, 256, 128, 2, 2, "bf16"), (2, 114, 114, 128, 128, 3, 2, "bf16"),
      (2, 112, 112, 128, 128, 2, 2, "bf16"), (2, 58, 58, 256, 256, 3, 2, "f32"),
      (2, 224, 224, 128, 128, 2, 2, "bf16"), (1, 148, 148, 256, 256, 3, 2, "bf16")])
  s += _rows("rmsnorm_quant", ("d", "br", "dtype"), [
      (768, 256, "bf16"), (3000, 512, "bf16"), (4096, 256, "f32"), (4096, 512, "bf16"), (5120, 1024, "bf16"),
      (8192, 512, "bf16")], rows=8192)
  s += _rows("kv_cache_update", ("cache_len", "tokens", "heads", "d", "bt", "hb", "dtype"), [
      (4096, 256, 8, 128, 16, 8, "bf16"), (8192, 512, 8, 128, 128, 4, "bf16"), (8192, 1024, 32, 128, 256, 8, "bf16"),
      (16384, 2048, 16, 256, 512, 8, "bf16"), (8192, 2048, 8, 128, 1024, 8, "f32"),
      (32768, 4096, 40, 128, 512, 5, "bf16")])
  return s



def heldout5_shapes():
  s = []
  s += _rows("grouped_matmul", ("m", "k", "n", "groups", "bm", "bk", "bn", "dtype"), [
      (2048, 1024, 1024, 8, 128, 256, 256, "bf16"), (2048, 2048, 2048, 4, 256, 512, 512, "f32"),
      (4096, 2048, 1408, 16, 256, 512, 1408, "bf16"), (4096, 4096, 14336, 8, 512, 1024, 1024, "bf16"),
      (4096, 7168, 2048, 2, 1024, 1792, 1024, "bf16"), (8192, 4096, 2048, 8, 512, 2048, 2048, "bf16")])
  s += _rows("flash_fwd_gqa", ("kv_heads", "group", "s", "d", "bq", "bk", "dtype"), [
      (8, 4, 2048, 128, 128, 128, "bf16"), (4, 6, 4096, 64, 128, 256, "bf16"), (2, 4, 4096, 128, 512, 512, "f32"),
      (2, 8, 4096, 128, 256, 512, "bf16"), (8, 8, 8192, 128, 512, 1024, "bf16"),
      (2, 16, 8192, 256, 256, 1024, "bf16")])
  s += _rows("depthwise_conv2d", ("batch", "h", "w", "c", "bc", "dtype"), [
      (2, 7, 7, 1024, 512, "bf16"), (1, 14, 14, 512, 512, "f32"), (2, 28, 28, 256, 256, "bf16"),
      (2, 56, 56, 128, 128, "bf16"), (2, 112, 112, 96, 96, "bf16"), (1, 150, 150, 128, 128, "bf16")])
  s += _rows("int8_kv_decode", ("batch", "kv_heads", "group", "s", "d", "bk", "dtype"), [
      (8, 8, 1, 4096, 128, 512, "bf16"), (4, 8, 4, 8192, 128, 1024, "bf16"), (2, 2, 8, 16384, 128, 2048, "bf16"),
      (4, 4, 6, 32768, 128, 4096, "f32"), (1, 8, 8, 32768, 256, 8192, "bf16"),
      (1, 2, 16, 65536, 128, 16384, "bf16")])
  s += _rows("vq_codebook", ("rows", "d", "codes", "br", "bc", "dtype"), [
      (8192, 64, 512, 512, 512, "bf16"), (4096, 32, 1000, 512, 1000, "f32"), (4096, 256, 1024, 256, 512, "f32"),
      (8192, 256, 8192, 512, 1024, "bf16"), (4096, 256, 8192, 2048, 1024, "bf16"),
      (4096, 512, 16384, 1024, 2048, "bf16")])
  s += _rows("welford_stats", ("rows", "d", "br", "bd", "dtype"), [
      (8192, 768, 512, 768, "bf16"), (4000, 1000, 400, 1000, "bf16"), (16384, 4096, 1024, 2048, "bf16"),
      (32768, 2048, 2048, 1024, "bf16"), (8192, 8192, 512, 4096, "f32"), (65536, 512, 8192, 512, "bf16")])
  return s


def heldout6_shapes():
  s = []
  s += _rows("quant_linear_nt", ("m", "n", "k", "bm", "bn", "bk", "wdtype", "dtype"), [
      (16, 4096, 4096, 16, 512, 1024, "i8", "bf16"), (256, 14336, 4096, 256, 1024, 1024, "i8", "bf16"),
      (512, 4096, 14336, 512, 512, 2048, "i4", "bf16"), (1024, 8192, 8192, 256, 1024, 2048, "i8", "f32"),
      (2048, 14336, 4096, 512, 2048, 2048, "i8", "bf16"), (8192, 8192, 8192, 1024, 2048, 4096, "i8", "bf16")])
  s += _rows("fp8_scaled_matmul", ("m", "n", "k", "bm", "bn", "bk", "fp8", "dtype"), [
      (128, 2048, 2048, 128, 256, 512, "e4m3", "bf16"), (512, 4096, 4096, 256, 512, 1024, "e4m3", "bf16"),
      (1024, 7168, 2048, 512, 512, 2048, "e5m2", "bf16"), (2048, 4096, 4096, 512, 1024, 1024, "e4m3", "f32"),
      (4096, 14336, 4096, 1024, 1024, 2048, "e4m3", "bf16"), (8192, 8192, 8192, 2048, 2048, 2048, "e4m3", "bf16")])
  s += _rows("linear_ce_zloss", ("rows", "d", "vocab", "br", "bv", "dtype"), [
      (2048, 2048, 32000, 128, 1280, "bf16"), (2048, 4096, 32000, 256, 1280, "f32"),
      (4096, 4096, 128256, 256, 768, "bf16"), (4096, 3072, 256000, 512, 1024, "bf16"),
      (8192, 5120, 131072, 1024, 2048, "bf16"), (4096, 8192, 256000, 512, 2048, "bf16")])
  s += _rows("topp_minp_mask", ("rows", "vocab", "br", "iters", "dtype"), [
      (64, 32000, 8, 16, "bf16"), (128, 32000, 32, 16, "f32"), (128, 128256, 16, 20, "bf16"),
      (1024, 50304, 128, 20, "bf16"), (256, 151936, 32, 20, "bf16"), (256, 256000, 64, 24, "bf16")])
  s += _rows("bias_attention", ("heads", "s", "d", "bq", "bk", "dtype"), [
      (8, 1024, 64, 128, 128, "bf16"), (12, 2048, 64, 256, 512, "bf16"), (16, 2048, 128, 512, 512, "f32"),
      (8, 4096, 128, 512, 1024, "bf16"), (4, 4096, 256, 1024, 1024, "bf16"), (4, 8192, 128, 2048, 2048, "bf16")])
  s += _rows("splash_sparse_attention", ("heads", "s", "d", "bq", "bk", "nnz", "dtype"), [
      (8, 4096, 128, 128, 128, 8, "bf16"), (8, 8192, 64, 256, 256, 8, "bf16"), (4, 8192, 128, 512, 512, 6, "f32"),
      (16, 8192, 128, 512, 512, 4, "bf16"), (8, 16384, 128, 1024, 1024, 4, "bf16"),
      (4, 32768, 256, 2048, 2048, 4, "bf16")])
  return s


def heldout7_shapes():
  s = []
  s += _rows("int8_kv_prefill", ("kv_heads", "group", "sq", "skv", "d", "bq", "bk", "dtype"), [
      (8, 4, 256, 4096, 128, 128, 256, "bf16"), (2, 4, 512, 4096, 64, 128, 512, "f32"),
      (4, 7, 512, 8192, 128, 128, 512, "bf16"), (1, 8, 1024, 8192, 256, 256, 512, "bf16"),
      (8, 8, 2048, 32768, 128, 256, 1024, "bf16"), (4, 8, 4096, 16384, 128, 512, 1024, "bf16")])
  s += _rows("moe_wq_gate_up", ("m", "d", "f", "experts", "bm", "bf", "bk", "group", "wdtype", "dtype"), [
      (512, 2048, 1408, 64, 128, 128, 512, 128, "i4", "bf16"), (512, 4096, 14336, 8, 128, 256, 512, 128, "i8", "f32"),
      (1024, 4096, 14336, 8, 256, 512, 1024, 128, "i4", "bf16"),
      (4096, 2048, 768, 128, 512, 768, 2048, 256, "i8", "bf16"),
      (2048, 7168, 2048, 256, 256, 512, 1792, 128, "i4", "bf16"),
      (8192, 6144, 16384, 8, 1024, 1024, 2048, 128, "i4", "bf16")])
  s += _rows("rmsnorm_qkv_int8", ("rows", "d", "kv_heads", "group", "hd", "br", "kvb", "dtype"), [
      (8, 4096, 8, 4, 128, 8, 2, "bf16"), (2048, 2048, 16, 1, 64, 256, 2, "bf16"),
      (1024, 2048, 1, 8, 256, 128, 1, "bf16"),
      (2048, 3584, 4, 7, 128, 128, 1, "f32"), (4096, 4096, 8, 4, 128, 256, 1, "bf16"),
      (4096, 8192, 8, 8, 128, 512, 1, "bf16")])
  s += _rows("rope2d_attention", ("heads", "s", "d", "bq", "bk", "dtype"), [
      (16, 256, 64, 128, 128, "bf16"), (16, 1024, 64, 256, 256, "bf16"), (16, 1024, 128, 256, 512, "f32"),
      (24, 4096, 128, 512, 512, "bf16"), (16, 4096, 128, 1024, 1024, "bf16"), (8, 16384, 256, 2048, 2048, "bf16")])
  s += _rows("router_capacity", ("tokens", "d", "experts", "topk", "capacity", "bt", "dtype"), [
      (1024, 2048, 8, 2, 320, 128, "bf16"), (2048, 2048, 60, 4, 171, 256, "f32"), (4096, 4096, 8, 2, 1280, 256, "bf16"),
      (4096, 2048, 128, 8, 320, 512, "bf16"), (8192, 7168, 256, 8, 320, 1024, "bf16"),
      (8192, 6144, 8, 2, 2560, 2048, "bf16")])
  s += _rows("glu_mlp_bwd", ("tokens", "d", "f", "bt", "bf", "dtype"), [
      (1024, 2048, 8192, 128, 256, "bf16"), (2048, 2048, 5632, 256, 512, "bf16"), (2048, 3072, 8192, 128, 128, "f32"),
      (2048, 4096, 14336, 256, 256, "bf16"), (4096, 5120, 13824, 512, 512, "bf16"),
      (8192, 8192, 28672, 256, 512, "bf16")])
  return s


def heldout8_shapes():
  s = []
  s += _rows("mla_decode", ("batch", "heads", "kv_len", "bk", "hb", "dtype"), [
      (1, 16, 1024, 256, 16, "bf16"), (2, 32, 2048, 512, 8, "f32"), (4, 56, 4096, 512, 56, "bf16"),
      (8, 128, 8192, 1024, 32, "bf16"), (4, 128, 16384, 2048, 128, "bf16"), (2, 64, 32768, 8192, 64, "bf16")])
  s += _rows("w8a8_matmul", ("m", "n", "k", "bm", "bn", "bk", "out"), [
      (32, 4096, 4096, 32, 512, 1024, "bf16"), (128, 3584, 3584, 128, 512, 512, "bf16"),
      (1024, 14336, 4096, 256, 512, 1024, "f32"), (2048, 4096, 14336, 512, 1024, 2048, "bf16"),
      (4096, 18944, 3584, 512, 512, 3584, "bf16"), (8192, 8192, 8192, 2048, 2048, 4096, "bf16")])
  s += _rows("ssd_chunk_scan", ("heads", "seqlen", "chunk", "dstate", "hd", "dtype"), [
      (8, 1024, 128, 64, 64, "f32"), (24, 2048, 256, 128, 64, "f32"), (7, 4096, 128, 128, 64, "bf16"),
      (32, 8192, 256, 128, 64, "f32"), (16, 4096, 512, 256, 128, "f32"), (8, 8192, 2048, 256, 128, "f32")])
  s += _rows("layernorm_bwd_scratch", ("rows", "d", "br", "dtype"), [
      (8, 4096, 8, "bf16"), (2048, 1000, 128, "f32"), (4096, 3584, 256, "bf16"), (8192, 8192, 512, "bf16"),
      (16384, 7168, 256, "f32"), (8192, 16384, 1024, "f32")])
  s += _rows("lora_shrink_expand", ("m", "n", "k", "r", "bm", "bn", "bk", "dtype"), [
      (16, 4096, 4096, 16, 16, 1024, 1024, "bf16"), (512, 3584, 3584, 64, 256, 512, 512, "bf16"),
      (1024, 4096, 4096, 32, 256, 1024, 2048, "f32"), (2048, 14336, 4096, 16, 512, 1024, 1024, "bf16"),
      (4096, 4096, 14336, 64, 512, 512, 2048, "bf16"), (8192, 8192, 8192, 32, 2048, 2048, 2048, "bf16")])
  s += _rows("cumsum_topk_mask", ("rows", "cols", "br", "bc", "capacity", "method", "dtype"), [
      (8, 4096, 8, 512, 1280, "dot", "f32"), (60, 2048, 60, 256, 171, "roll", "f32"),
      (56, 8192, 56, 512, 600, "dot", "f32"), (128, 8192, 32, 1024, 320, "roll", "bf16"),
      (256, 16384, 64, 2048, 320, "dot", "bf16"), (256, 32768, 256, 4096, 640, "dot", "f32")])
  return s


def heldout9_shapes():
  s = []
  s += _rows("unet_skip_conv1x1", ("hw", "c_up", "c_skip", "cout", "bm", "bn", "dtype"), [
      (4096, 1280, 640, 640, 512, 640, "bf16"), (1024, 1280, 1280, 1280, 256, 1280, "bf16"),
      (16384, 640, 320, 320, 1024, 320, "bf16"), (4096, 320, 320, 320, 2048, 320, "bf16"),
      (4096, 1280, 1280, 1280, 1024, 640, "bf16"), (1024, 640, 640, 640, 512, 640, "f32")])
  s += _rows("rope_rotate_half", ("tokens", "heads", "d", "bt", "hb", "dtype"), [
      (2048, 32, 128, 256, 8, "bf16"), (4096, 8, 256, 512, 4, "bf16"), (8192, 16, 64, 1024, 16, "bf16"),
      (4096, 32, 128, 1024, 16, "bf16"), (4096, 16, 256, 1024, 8, "bf16"), (2048, 32, 128, 512, 8, "f32")])
  s += _rows("spec_decode_attention", ("heads", "cache", "new", "d", "dtype"), [
      (32, 1024, 16, 128, "bf16"), (8, 4096, 32, 128, "bf16"), (32, 2048, 8, 128, "bf16"),
      (16, 8192, 16, 256, "bf16"), (8, 16384, 64, 128, "bf16"), (32, 2048, 16, 128, "f32")])
  s += _rows("mha_concat_outproj", ("seq", "heads", "d", "bq", "dm", "bn", "dtype"), [
      (256, 12, 64, 128, 768, 768, "bf16"), (512, 16, 64, 256, 1024, 1024, "bf16"),
      (1024, 8, 128, 256, 1024, 1024, "bf16"), (2048, 4, 128, 512, 512, 512, "bf16"),
      (1024, 16, 128, 512, 2048, 1024, "bf16"), (512, 8, 128, 256, 1024, 1024, "f32")])
  s += _rows("fused_gate_up_concat", ("m", "d", "f", "bm", "bf", "dtype"), [
      (2048, 1024, 4096, 256, 512, "bf16"), (4096, 4096, 14336, 512, 512, "bf16"),
      (16, 4096, 11008, 16, 256, "bf16"), (8192, 2048, 8192, 1024, 1024, "bf16"),
      (2048, 8192, 28672, 256, 2048, "bf16"), (1024, 2048, 5632, 256, 512, "f32")])
  return s


def heldout10_shapes():
  s = []
  s += _rows("partial_rotary", ("tokens", "heads", "hd", "rot", "bt", "hb", "dtype"), [
      (2048, 32, 128, 32, 256, 8, "bf16"), (2048, 32, 80, 32, 512, 8, "bf16"), (4096, 16, 256, 64, 512, 4, "bf16"),
      (8192, 12, 64, 16, 1024, 12, "bf16"), (4096, 32, 128, 64, 1024, 16, "bf16"), (2048, 32, 128, 32, 512, 8, "f32")])
  s += _rows("mla_prefill_scores", ("heads", "seq", "bq", "dtype"), [
      (16, 1024, 256, "bf16"), (16, 2048, 512, "bf16"), (32, 4096, 256, "bf16"), (8, 4096, 1024, "bf16"),
      (128, 512, 512, "bf16"), (16, 1024, 256, "f32")])
  s += _rows("nerf_posenc_mlp", ("points", "freqs", "width", "br", "dtype"), [
      (65536, 10, 256, 1024, "bf16"), (65536, 4, 128, 2048, "bf16"), (131072, 10, 256, 4096, "bf16"),
      (32768, 6, 256, 512, "bf16"), (65536, 10, 128, 8192, "bf16"), (65536, 10, 256, 1024, "f32")])
  return s


def heldout11_shapes():
  s = []
  # Mamba's d_inner (2 x d_model: 130m 1536, 370m 2048, 790m 3072, 1.4b 4096, 2.8b 5120).
  s += _rows("causal_conv1d_taps", ("batch", "seqlen", "channels", "bc", "dtype"), [
      (2, 2048, 1536, 512, "bf16"), (1, 4096, 2048, 256, "bf16"), (2, 1024, 3072, 1024, "bf16"),
      (1, 2048, 4096, 512, "f32"), (4, 512, 5120, 1280, "bf16"), (1, 8192, 2560, 256, "bf16")])
  # Phi-3-mini (3072, 8192), ChatGLM3-6B (4096, 13696), Phi-3-medium (5120, 17920), TinyLlama (2048, 5632).
  s += _rows("glu_split_fused", ("m", "d", "f", "bm", "bf", "dtype"), [
      (256, 3072, 8192, 256, 256, "bf16"), (2048, 3072, 8192, 512, 512, "bf16"),
      (16, 4096, 13696, 16, 128, "bf16"), (1024, 5120, 17920, 256, 640, "bf16"),
      (4096, 2048, 5632, 512, 256, "bf16"), (512, 3072, 8192, 256, 512, "f32")])
  # GPT-2 small (12 x 64), BERT-large (16 x 64), ViT-L/14 at 336 px (576 patches), 128-dim heads.
  s += _rows("qkv_split_attention", ("heads", "seq", "d", "bq", "dtype"), [
      (12, 1024, 64, 256, "bf16"), (16, 512, 64, 128, "bf16"), (16, 2048, 128, 512, "bf16"),
      (32, 1024, 128, 256, "bf16"), (16, 576, 64, 192, "bf16"), (12, 1024, 64, 256, "f32")])
  return s


def heldout12_shapes():
  s = []
  # (d_model, intermediate): Llama-2-7B (4096, 11008), Mistral-7B / Llama-3-8B (4096, 14336),
  # Qwen2-7B (3584, 18944), Gemma-2B (2048, 16384), Llama-3.2-1B (2048, 8192).
  s += _rows("swiglu_down_fused", ("m", "d", "f", "bm", "bf", "bn", "dtype"), [
      (256, 4096, 11008, 256, 256, 128, "bf16"), (512, 4096, 14336, 256, 512, 256, "bf16"),
      (128, 3584, 18944, 128, 512, 512, "bf16"), (1024, 2048, 16384, 512, 512, 1024, "bf16"),
      (64, 4096, 14336, 64, 1024, 512, "bf16"), (512, 2048, 8192, 256, 256, 256, "f32")])
  # (hidden, out): ViT-B's fc1 (768, 3072), BERT-large's fc1 (1024, 4096) and QKV (1024, 3072),
  # OPT-1.3B's fc1 (2048, 8192), Whisper-large's fc1 (1280, 5120).
  s += _rows("layernorm_linear", ("m", "d", "n", "bm", "bn", "dtype"), [
      (2048, 768, 3072, 256, 256, "bf16"), (1024, 1024, 4096, 512, 128, "bf16"),
      (4096, 1024, 3072, 256, 512, "bf16"), (512, 2048, 8192, 128, 1024, "bf16"),
      (2048, 1280, 5120, 256, 256, "bf16"), (1024, 768, 3072, 256, 512, "f32")])
  # Gemma-7B (16 heads of 256), Gemma-2-9B (16 of 256), Gemma-2-27B (32 of 128), at 1-8K tokens.
  s += _rows("gemma_attention", ("heads", "seq", "d", "bq", "dtype"), [
      (16, 1024, 256, 256, "bf16"), (16, 2048, 256, 128, "bf16"), (8, 4096, 256, 128, "bf16"),
      (32, 2048, 128, 256, "bf16"), (16, 512, 256, 512, "bf16"), (16, 1024, 256, 128, "f32")])
  return s


def heldout13_shapes():
  s = []
  # Whisper (heads of 64): tiny 6, base 8, small 12, medium 16, large 20; 1,500 encoder frames; up
  # to 448 decoder tokens.
  s += _rows("whisper_cross_attention", ("heads", "tokens", "frames", "d", "bq", "dtype"), [
      (6, 448, 1500, 64, 448, "bf16"), (8, 256, 1500, 64, 128, "bf16"), (12, 448, 1500, 64, 64, "bf16"),
      (16, 448, 1500, 64, 224, "bf16"), (20, 256, 1500, 64, 256, "bf16"), (12, 256, 1500, 64, 128, "f32")])
  # ViT at 224 px, patch 16 (197 tokens): B/16 12 heads, L/16 16, H/14 at 224 px 257 tokens, 16 heads.
  s += _rows("vit_attention", ("batch", "heads", "tokens", "d", "hb", "dtype"), [
      (8, 12, 197, 64, 1, "bf16"), (8, 12, 197, 64, 4, "bf16"), (8, 16, 197, 64, 2, "bf16"),
      (4, 16, 257, 80, 2, "bf16"), (8, 16, 197, 64, 8, "bf16"), (8, 12, 197, 64, 2, "f32")])
  # Falcon-7B (71 heads of 64), StarCoder (48 of 128), PaLM-style 32 of 128, at 2-8K cached tokens.
  s += _rows("mqa_decode_attention", ("batch", "heads", "s", "d", "dtype"), [
      (8, 71, 2048, 64, "bf16"), (4, 48, 8192, 128, "bf16"), (8, 32, 4096, 128, "bf16"),
      (2, 71, 8192, 64, "bf16"), (8, 48, 2048, 128, "bf16"), (4, 32, 4096, 128, "f32")])
  return s


SETS = {"dev": dev_shapes, "heldout": heldout_shapes, "heldout2": heldout2_shapes, "heldout3": heldout3_shapes,
        "heldout4": heldout4_shapes, "heldout5": heldout5_shapes, "heldout6": heldout6_shapes,
        "heldout7": heldout7_shapes, "heldout8": heldout8_shapes, "heldout9": heldout9_shapes,
        "heldout10": heldout10_shapes, "heldout11": heldout11_shapes,
        "heldout12": heldout12_shapes, "heldout13": heldout13_shapes}


def shapes(set_name):
  """[(kind, params)] of a set ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5",
  "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12" or "heldout13")."""
  return SETS[set_name]()
