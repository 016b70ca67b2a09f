// Runs on: a host thread (a spawned rank). Owns: Megatron's transformer layer
// (megatron/core/transformer/transformer_layer.py, names in camelCase) on one
// tensor-parallel rank:
//
//   x --inputLayernorm--> selfAttention --+ x--> preMlpLayernorm --> mlp --+--> y
//   |                                     |  |                             |
//   +------------- residual --------------+  +-------- residual -----------+
//
//   selfAttention: linearQkv (ColumnParallelLinear h -> (nq + 2 nkv) d; this
//                  rank's query heads, then its key and value heads),
//                  coreAttention (causal, grouped-query), linearProj
//                  (RowParallelLinear nq d -> h: all-reduce, or reduce-scatter)
//   mlp:           linearFc1 (h -> ffn) + GeLU, or linearFc1 (gate and up
//                  fused, h -> 2 ffn) + SwiGLU; linearFc2 (RowParallelLinear ffn -> h)
//
// Activations are [s b, h] with row = position * b + sequence (Megatron's
// [s, b, h]), on PE 0 of cube 0 of the rank's SIP, as the parallel linear
// layers' weights are. With sequenceParallel (Korthikanti et al. 2022) x and
// y are this rank's s b / tp rows, the norms and residuals run on them, and the
// linear layers all-gather before the column GEMM and reduce-scatter after
// the row GEMM; the results equal tensor parallelism alone.
import { z } from 'zod';
import { issueProblems } from '../config/problems.js';
import { dottedPath } from '../config/schema-path.js';
import { formatConfigProblem, KernbenchError } from '../errors.js';
import type { Tensor } from '../host/tensor.js';
import type { Torch } from '../host/torch.js';
import { tabulateF32 } from '../tabulate.js';
import { ColumnParallelLinear, RowParallelLinear, requireDivisible } from './layers.js';
import { coreAttention, gelu, norm, residualAdd, swiglu, type AttentionDims } from './layer-kernels.js';
import { getTensorModelParallelWorldSize } from './parallel-state.js';
import type { LayerTimeline } from './timeline.js';

/** A layer's options; defaults are declared here, once. */
export const TransformerLayerOptionsSchema = z
  .object({
    hiddenSize: z.number().int().positive(),
    numAttentionHeads: z.number().int().positive(),
    /** Key/value heads (grouped-query attention); default: numAttentionHeads. */
    numQueryGroups: z.number().int().positive().optional(),
    /** The MLP's inner size; default 4 hiddenSize. */
    ffnHiddenSize: z.number().int().positive().optional(),
    /** s: positions per sequence. */
    seqLength: z.number().int().positive(),
    /** b: sequences per forward (Megatron's micro_batch_size), default 1. */
    microBatchSize: z.number().int().positive().default(1),
    normalization: z.enum(['LayerNorm', 'RMSNorm']).default('LayerNorm'),
    activation: z.enum(['gelu', 'swiglu']).default('gelu'),
    /** Biases on the linear layers (Megatron's add_bias_linear), default true. */
    addBias: z.boolean().default(true),
    /** Sequence parallelism (Megatron's sequence_parallel), default false. */
    sequenceParallel: z.boolean().default(false),
    /**
     * Overlap each sequence-parallel collective with its GEMM (fused ring
     * kernels, collective-matmul.ts), default false; needs sequenceParallel.
     */
    overlap: z.boolean().default(false),
    /**
     * PEs each linear layer's GEMM splits over, default 1: that many PEs of
     * the cube holding the layer's tensors, a block of output rows each
     * (ParallelLinearOptions.gemmPes, decision 0116).
     */
    gemmPes: z.number().int().positive().default(1),
    dtype: z.enum(['f16', 'bf16', 'f32']).default('f16'),
  })
  .strict()
  // The rules between fields, reported with the fields' own problems: a head is
  // hiddenSize / numAttentionHeads wide, and the query heads share the key/value groups evenly.
  .superRefine((o, ctx) => {
    if (o.hiddenSize % o.numAttentionHeads !== 0) {
      ctx.addIssue({ code: 'custom', path: ['hiddenSize'], message: `must be a multiple of numAttentionHeads (${o.numAttentionHeads}), got ${o.hiddenSize}`, input: o.hiddenSize });
    }
    const groups = o.numQueryGroups ?? o.numAttentionHeads;
    if (o.numAttentionHeads % groups !== 0) {
      ctx.addIssue({ code: 'custom', path: ['numAttentionHeads'], message: `must be a multiple of numQueryGroups (${groups}), got ${o.numAttentionHeads}`, input: o.numAttentionHeads });
    }
  });

export type TransformerLayerOptions = z.input<typeof TransformerLayerOptionsSchema>;
export type TransformerLayerConfig = Required<z.output<typeof TransformerLayerOptionsSchema>>;

/** The full (unsplit) parameters of a layer, row-major, weights [in, out]. */
export interface LayerParameters {
  ln1Weight: Float32Array;
  ln1Bias: Float32Array | null;
  /** [h, nq d], [h, nkv d], [h, nkv d] and their biases. */
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  bq: Float32Array | null;
  bk: Float32Array | null;
  bv: Float32Array | null;
  /** [nq d, h], [h]. */
  wo: Float32Array;
  bo: Float32Array | null;
  ln2Weight: Float32Array;
  ln2Bias: Float32Array | null;
  /** gelu: [h, ffn]; swiglu: the gate's [h, ffn]. */
  w1: Float32Array;
  b1: Float32Array | null;
  /** swiglu only: the up projection [h, ffn]. */
  w1Up: Float32Array | null;
  b1Up: Float32Array | null;
  /** [ffn, h], [h]. */
  w2: Float32Array;
  b2: Float32Array | null;
}

/** Options checked, defaults applied; every problem reported at once (ERR_INVALID_OPTIONS). */
export function layerConfig(options: TransformerLayerOptions): TransformerLayerConfig {
  const r = TransformerLayerOptionsSchema.safeParse(options, { reportInput: true });
  if (!r.success) {
    const problems = issueProblems(r.error.issues, TransformerLayerOptionsSchema, (path) => ({ file: 'TransformerLayer options', path: dottedPath(path) }));
    throw new KernbenchError('ERR_INVALID_OPTIONS', problems.map(formatConfigProblem).join('; '));
  }
  const o = r.data;
  const c = { ...o, numQueryGroups: o.numQueryGroups ?? o.numAttentionHeads, ffnHiddenSize: o.ffnHiddenSize ?? 4 * o.hiddenSize };
  if (c.overlap && !c.sequenceParallel) throw new KernbenchError('ERR_OVERLAP_NEEDS_SEQUENCE_PARALLEL', 'TransformerLayer: overlap fuses the sequence-parallel collectives with the GEMMs, so it needs sequenceParallel: true, got overlap: true, sequenceParallel: false');
  return c;
}

/** LayerNorm or RMSNorm over the hidden size (Megatron's TENorm choice), weight 1 and bias 0 until loaded. */
export class Norm {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  constructor(
    private readonly torch: Torch,
    readonly kind: 'LayerNorm' | 'RMSNorm',
    readonly hiddenSize: number,
    readonly dtype: TransformerLayerConfig['dtype'],
  ) {
    this.weight = torch.zeros([hiddenSize], { dtype, name: 'norm_weight' });
    this.bias = kind === 'LayerNorm' ? torch.zeros([hiddenSize], { dtype, name: 'norm_bias' }) : null;
  }

  async load(weight: ArrayLike<number>, bias: ArrayLike<number> | null): Promise<void> {
    await this.weight.copy_(this.torch.fromArray(Float32Array.from(weight), { shape: [this.hiddenSize], dtype: this.dtype }));
    if (this.bias && bias) await this.bias.copy_(this.torch.fromArray(Float32Array.from(bias), { shape: [this.hiddenSize], dtype: this.dtype }));
  }

  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const y = this.torch.empty(x.shape, { dtype: this.dtype, name: 'normed' });
    const h = this.torch.launch(this.kind === 'LayerNorm' ? 'layer_norm' : 'rms_norm', norm, x, this.weight, this.bias, y, this.kind);
    await h;
    timeline?.record(h, 'vector');
    return y;
  }
}

/** Megatron's SelfAttention: linearQkv, coreAttention, linearProj. */
export class SelfAttention {
  readonly linearQkv: ColumnParallelLinear;
  readonly linearProj: RowParallelLinear;
  /** Query heads and key/value groups on this rank. */
  readonly numAttentionHeadsPerPartition: number;
  readonly numQueryGroupsPerPartition: number;
  readonly headDim: number;
  private readonly ws: number;

  constructor(
    private readonly torch: Torch,
    private readonly c: TransformerLayerConfig,
  ) {
    this.ws = getTensorModelParallelWorldSize(torch);
    requireDivisible('SelfAttention', 'numAttentionHeads', c.numAttentionHeads, this.ws);
    requireDivisible('SelfAttention', 'numQueryGroups', c.numQueryGroups, this.ws);
    this.headDim = c.hiddenSize / c.numAttentionHeads;
    this.numAttentionHeadsPerPartition = c.numAttentionHeads / this.ws;
    this.numQueryGroupsPerPartition = c.numQueryGroups / this.ws;
    const qkvOut = (c.numAttentionHeads + 2 * c.numQueryGroups) * this.headDim;
    const common = { bias: c.addBias, dtype: c.dtype, sequenceParallel: c.sequenceParallel, overlap: c.overlap, gemmPes: c.gemmPes };
    this.linearQkv = new ColumnParallelLinear(torch, { inFeatures: c.hiddenSize, outFeatures: qkvOut, ...common });
    this.linearProj = new RowParallelLinear(torch, { inFeatures: c.numAttentionHeads * this.headDim, outFeatures: c.hiddenSize, ...common });
  }

  /** x [s b (/ tp), h] -> [s b (/ tp), h]. */
  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const qkv = await this.linearQkv.forward(x, timeline);
    const c = this.c;
    const ctx = this.torch.empty([c.seqLength * c.microBatchSize, this.numAttentionHeadsPerPartition * this.headDim], { dtype: c.dtype, name: 'context' });
    const dims: AttentionDims = { heads: this.numAttentionHeadsPerPartition, groups: this.numQueryGroupsPerPartition, headDim: this.headDim, seqLength: c.seqLength, batch: c.microBatchSize };
    const h = this.torch.launch('core_attention', coreAttention, qkv, ctx, dims);
    await h;
    timeline?.record(h, 'attention', { flops: 4 * c.microBatchSize * c.seqLength * c.seqLength * this.headDim * this.numAttentionHeadsPerPartition });
    return this.linearProj.forward(ctx, timeline);
  }

  /**
   * Load the full Q, K, V and output weights. linearQkv's full weight is laid
   * out rank by rank (Megatron interleaves by query group the same way), so
   * that its column block r is rank r's query heads, then key heads, then
   * value heads.
   */
  async load(p: LayerParameters): Promise<void> {
    const c = this.c;
    const d = this.headDim;
    const fused = fuseQkv(p.wq, p.wk, p.wv, c.hiddenSize, c.numAttentionHeads, c.numQueryGroups, d, this.ws);
    await this.linearQkv.loadFullWeight(fused);
    if (c.addBias && p.bq && p.bk && p.bv) await this.linearQkv.loadFullBias(fuseQkv(p.bq, p.bk, p.bv, 1, c.numAttentionHeads, c.numQueryGroups, d, this.ws));
    await this.linearProj.loadFullWeight(p.wo);
    if (c.addBias && p.bo) await this.linearProj.loadFullBias(p.bo);
  }
}

/** [rows, (nq + 2 nkv) d] with, for each rank in turn, its nq/ws query heads, nkv/ws key heads and nkv/ws value heads. */
export function fuseQkv(q: Float32Array, k: Float32Array, v: Float32Array, rows: number, nq: number, nkv: number, d: number, ws: number): Float32Array {
  const cols = (nq + 2 * nkv) * d;
  const nql = nq / ws, nkvl = nkv / ws;
  // Source matrix, its column count, and the first head for each fused column block.
  const blocks: [Float32Array, number, number][] = [];
  for (let r = 0; r < ws; r++) {
    for (let i = 0; i < nql; i++) blocks.push([q, nq * d, r * nql + i]);
    for (let i = 0; i < nkvl; i++) blocks.push([k, nkv * d, r * nkvl + i]);
    for (let i = 0; i < nkvl; i++) blocks.push([v, nkv * d, r * nkvl + i]);
  }
  return tabulateF32(rows * cols, (e) => {
    const row = Math.floor(e / cols);
    const col = e % cols;
    const [src, srcCols, head] = blocks[Math.floor(col / d)];
    return src[row * srcCols + head * d + (col % d)];
  });
}

/**
 * Megatron's MLP: linearFc1, the activation, linearFc2. With SwiGLU, linearFc1
 * is the gate and up projections fused (h -> 2 ffn), laid out rank by rank
 * (each rank's gate columns, then its up columns) as Megatron does, so that a
 * rank's block holds both halves and sequence parallelism all-gathers once.
 */
export class Mlp {
  readonly linearFc1: ColumnParallelLinear;
  readonly linearFc2: RowParallelLinear;
  private readonly ws: number;

  constructor(
    private readonly torch: Torch,
    private readonly c: TransformerLayerConfig,
  ) {
    this.ws = getTensorModelParallelWorldSize(torch);
    const common = { bias: c.addBias, dtype: c.dtype, sequenceParallel: c.sequenceParallel, overlap: c.overlap, gemmPes: c.gemmPes };
    const fc1Out = c.activation === 'swiglu' ? 2 * c.ffnHiddenSize : c.ffnHiddenSize;
    this.linearFc1 = new ColumnParallelLinear(torch, { inFeatures: c.hiddenSize, outFeatures: fc1Out, ...common });
    this.linearFc2 = new RowParallelLinear(torch, { inFeatures: c.ffnHiddenSize, outFeatures: c.hiddenSize, ...common });
  }

  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const h = await this.linearFc1.forward(x, timeline);
    let act = h;
    if (this.c.activation === 'swiglu') {
      act = this.torch.empty([h.shape[0], h.shape[1] / 2], { dtype: this.c.dtype, name: 'swiglu_out' });
      const k = this.torch.launch('swiglu', swiglu, h, act);
      await k;
      timeline?.record(k, 'vector');
    } else {
      const k = this.torch.launch('gelu', gelu, h);
      await k;
      timeline?.record(k, 'vector');
    }
    return this.linearFc2.forward(act, timeline);
  }

  async load(p: LayerParameters): Promise<void> {
    const c = this.c;
    const h = c.hiddenSize, f = c.ffnHiddenSize;
    if (c.activation === 'swiglu' && p.w1Up) {
      await this.linearFc1.loadFullWeight(fuseGateUp(p.w1, p.w1Up, h, f, this.ws));
      if (c.addBias && p.b1 && p.b1Up) await this.linearFc1.loadFullBias(fuseGateUp(p.b1, p.b1Up, 1, f, this.ws));
    } else {
      await this.linearFc1.loadFullWeight(p.w1);
      if (c.addBias && p.b1) await this.linearFc1.loadFullBias(p.b1);
    }
    await this.linearFc2.loadFullWeight(p.w2);
    if (c.addBias && p.b2) await this.linearFc2.loadFullBias(p.b2);
  }
}

/** [rows, 2 ffn] with, for each rank in turn, its ffn/ws gate columns then its ffn/ws up columns. */
export function fuseGateUp(gate: Float32Array, up: Float32Array, rows: number, ffn: number, ws: number): Float32Array {
  const n = ffn / ws;
  return tabulateF32(rows * 2 * ffn, (e) => {
    const row = Math.floor(e / (2 * ffn));
    const col = e % (2 * ffn);
    const rank = Math.floor(col / (2 * n));
    const within = col % (2 * n);
    const src = within < n ? gate : up;
    return src[row * ffn + rank * n + (within % n)];
  });
}

/** Megatron's TransformerLayer (pre-norm, as GPT and Llama). */
export class TransformerLayer {
  readonly config: TransformerLayerConfig;
  readonly inputLayernorm: Norm;
  readonly selfAttention: SelfAttention;
  readonly preMlpLayernorm: Norm;
  readonly mlp: Mlp;
  /** Rows of this rank's x and y: s b, or s b / tp with sequence parallelism. */
  readonly rows: number;

  constructor(
    private readonly torch: Torch,
    options: TransformerLayerOptions,
  ) {
    const c = layerConfig(options);
    this.config = c;
    const ws = getTensorModelParallelWorldSize(torch);
    const tokens = c.seqLength * c.microBatchSize;
    if (c.sequenceParallel) requireDivisible('TransformerLayer', 's b (seqLength x microBatchSize, sequenceParallel)', tokens, ws);
    this.rows = c.sequenceParallel ? tokens / ws : tokens;
    this.inputLayernorm = new Norm(torch, c.normalization, c.hiddenSize, c.dtype);
    this.selfAttention = new SelfAttention(torch, c);
    this.preMlpLayernorm = new Norm(torch, c.normalization, c.hiddenSize, c.dtype);
    this.mlp = new Mlp(torch, c);
  }

  /** Load the full parameters; each rank keeps its part. */
  async load(p: LayerParameters): Promise<void> {
    await this.inputLayernorm.load(p.ln1Weight, p.ln1Bias);
    await this.selfAttention.load(p);
    await this.preMlpLayernorm.load(p.ln2Weight, p.ln2Bias);
    await this.mlp.load(p);
  }

  /** y = x + attention(norm(x)); y += mlp(norm(y)). x and y are [rows, h] on this rank. */
  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const c = this.config;
    if (x.shape.length !== 2 || x.shape[0] !== this.rows || x.shape[1] !== c.hiddenSize) {
      throw new KernbenchError('ERR_SHAPE_MISMATCH', `TransformerLayer.forward: x must be [${this.rows}, ${c.hiddenSize}] on this rank (s b${c.sequenceParallel ? ' / tp' : ''} rows), got [${x.shape.join(', ')}]`);
    }
    if (timeline) timeline.block = 'attention';
    const attn = await this.selfAttention.forward(await this.inputLayernorm.forward(x, timeline), timeline);
    const mid = await this.residual(x, attn, timeline);
    if (timeline) timeline.block = 'mlp';
    const mlp = await this.mlp.forward(await this.preMlpLayernorm.forward(mid, timeline), timeline);
    return this.residual(mid, mlp, timeline);
  }

  private async residual(a: Tensor, b: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const out = this.torch.empty(a.shape, { dtype: this.config.dtype, name: 'residual' });
    const h = this.torch.launch('residual_add', residualAdd, a, b, out);
    await h;
    timeline?.record(h, 'vector');
    return out;
  }
}
