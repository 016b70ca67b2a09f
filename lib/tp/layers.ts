// Runs on: a host thread (a spawned rank, or main for a 1-rank world). Owns:
// Megatron's tensor-parallel linear layers (seed 001, ADR-0027 D4/D5):
//
//   ColumnParallelLinear   W [in, out] split by columns: rank r holds
//                          W[:, r*out/ws : (r+1)*out/ws]. forward(x [M, in])
//                          = x @ W_r (+ b_r) -> [M, out/ws]. No collective.
//   RowParallelLinear      W [in, out] split by rows: rank r holds
//                          W[r*in/ws : (r+1)*in/ws, :]. forward(x_r [M, in/ws])
//                          = allReduce_sum(x_r @ W_r) (+ b) -> [M, out] on
//                          every rank; b is added once, after the reduce.
//
// Chained (Column then Row) they form Megatron's MLP: the column layer's
// output is already the row layer's input slice, so the pair needs one
// all-reduce. Megatron's gather_output=True / input_is_parallel=False modes
// are not provided: outputs stay split, inputs are expected split.
//
// Placement: weights, bias and outputs live on this rank's SIP (the one
// torch.ahbm.setDevice(rank) selected) under the default DPPolicy — cube 0,
// PE 0 — so each layer's GEMM is one kernel on one PE, or, with the gemmPes
// option, one kernel on that many PEs of cube 0, each computing a block of
// the output's rows in place (pe-split.ts). Weights are laid out [in, out]
// (x @ W), the transpose of torch.nn.Linear's [out, in].
//
// forward() launches through torch.launch (the gemm kernel in gemm-kernel.ts;
// nothing is multiplied on the host) and returns once its output is computed,
// so a kernel error surfaces at the forward call that caused it.
import { z } from 'zod';
import { issueProblems } from '../config/problems.js';
import { dottedPath } from '../config/schema-path.js';
import { formatConfigProblem, KernbenchError } from '../errors.js';
import type { Tensor } from '../host/tensor.js';
import type { LaunchHandle } from '../host/host-runtime.js';
import type { Torch } from '../host/torch.js';
import { COLLECTIVE_MATMUL_SENDS, allGatherGemm, gemmReduceScatter } from './collective-matmul.js';
import { addBias, gemm } from './gemm-kernel.js';
import { cubePes, rowBlocks, wholeOn } from './pe-split.js';
import { getTensorModelParallelRank, getTensorModelParallelWorldSize } from './parallel-state.js';
import { elementBytes, type LayerTimeline } from './timeline.js';
import { tabulateF32 } from '../tabulate.js';

/** Options of both parallel linear layers; defaults are declared here, once. */
export const ParallelLinearOptionsSchema = z
  .object({
    /** Features of the full (unsplit) input. */
    inFeatures: z.number().int().positive(),
    /** Features of the full (unsplit) output. */
    outFeatures: z.number().int().positive(),
    /** Add a learnable bias (default true, as torch.nn.Linear and Megatron). Starts at zero. */
    bias: z.boolean().default(true),
    /** Element type of weight, bias, input and output (default f16, the seed's). */
    dtype: z.enum(['f16', 'bf16', 'f32']).default('f16'),
    /**
     * Megatron's sequence_parallel (Korthikanti et al. 2022), default false:
     * ColumnParallelLinear takes this rank's rows of x (M / ws) and all-gathers
     * them before its GEMM; RowParallelLinear reduce-scatters its output by rows
     * instead of all-reducing it.
     */
    sequenceParallel: z.boolean().default(false),
    /**
     * Overlap the sequence-parallel collective with the GEMM, default false
     * (needs sequenceParallel): one fused ring kernel (collective-matmul.ts),
     * all-gather feeding the GEMM block by block, or the GEMM of one block
     * behind the reduce-scatter of the previous one. Same numbers.
     */
    overlap: z.boolean().default(false),
    /**
     * PEs each GEMM launch splits over, default 1 (the layer's PE alone): the
     * PEs of the cube holding the layer's tensors, each computing a block of
     * the output's rows in place (pe-split.ts, decision 0116). Tensors stay
     * where they are. The fused overlap kernels are not split.
     */
    gemmPes: z.number().int().positive().default(1),
  })
  .strict();

export type ParallelLinearOptions = z.input<typeof ParallelLinearOptionsSchema>;
type ResolvedOptions = z.output<typeof ParallelLinearOptionsSchema>;

/** Column-parallel linear layer: this rank computes out/ws of the output columns. */
export class ColumnParallelLinear {
  readonly inFeatures: number;
  readonly outFeatures: number;
  /** Output columns this rank computes: outFeatures / TP world size. */
  readonly outputSizePerPartition: number;
  readonly dtype: ResolvedOptions['dtype'];
  /** This rank's slice of W: [inFeatures, outputSizePerPartition]. */
  readonly weight: Tensor;
  /** This rank's slice of b: [outputSizePerPartition], or null without bias. */
  readonly bias: Tensor | null;
  readonly sequenceParallel: boolean;
  readonly overlap: boolean;
  /** PEs each GEMM launch splits over (the option). */
  readonly gemmPes: number;
  private readonly rank: number;
  private readonly ws: number;

  constructor(
    private readonly torch: Torch,
    options: ParallelLinearOptions,
  ) {
    const o = parseOptions('ColumnParallelLinear', options);
    this.sequenceParallel = o.sequenceParallel;
    this.overlap = o.overlap;
    const ws = getTensorModelParallelWorldSize(torch);
    this.rank = getTensorModelParallelRank(torch);
    requireOwnDevice('ColumnParallelLinear', torch, this.rank);
    requireDivisible('ColumnParallelLinear', 'outFeatures', o.outFeatures, ws);
    this.ws = ws;
    this.inFeatures = o.inFeatures;
    this.outFeatures = o.outFeatures;
    this.outputSizePerPartition = o.outFeatures / ws;
    this.dtype = o.dtype;
    this.weight = torch.zeros([o.inFeatures, this.outputSizePerPartition], { dtype: o.dtype, name: 'column_parallel_weight' });
    this.bias = o.bias ? torch.zeros([this.outputSizePerPartition], { dtype: o.dtype, name: 'column_parallel_bias' }) : null;
    this.gemmPes = o.gemmPes;
    gemmPesOf(torch, this.weight, o.gemmPes);
  }

  /**
   * y_r = x @ W_r (+ b_r): x [M, inFeatures] on this layer's PE, y_r [M,
   * outputSizePerPartition]. With sequenceParallel, x is this rank's M / ws
   * rows and is all-gathered first (every rank must call forward). Launches are
   * recorded in `timeline` when one is given.
   */
  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    let input = x;
    const rows = checkInput('ColumnParallelLinear', x, this.inFeatures, this.dtype, this.weight);
    if (this.overlap) {
      const m = rows * this.ws;
      const y = this.torch.empty([m, this.outputSizePerPartition], { dtype: this.dtype, name: 'column_parallel_out' });
      const h = this.torch.distributed.launchCollective('all_gather_gemm', allGatherGemm, x, [x.toDesc(), this.weight.toDesc(), y.toDesc(), this.bias ? this.bias.toDesc() : null], { leadingTensor: false, sends: COLLECTIVE_MATMUL_SENDS });
      await h;
      timeline?.record(h, 'overlapped', { bytes: m * this.inFeatures * elementBytes(this.dtype), flops: 2 * m * this.inFeatures * this.outputSizePerPartition });
      return y;
    }
    if (this.sequenceParallel) {
      input = this.torch.empty([rows * this.ws, this.inFeatures], { dtype: this.dtype, name: 'sequence_parallel_gathered' });
      const work = await this.torch.distributed.allGather(input, x);
      timeline?.record(work.handle, 'collective', { bytes: input.numel * elementBytes(this.dtype) });
    }
    const m = input.shape[0];
    const y = this.torch.empty([m, this.outputSizePerPartition], { dtype: this.dtype, name: 'column_parallel_out' });
    const h = launchGemm(this.torch, 'column_parallel_gemm', input, this.weight, y, this.bias, this.gemmPes);
    await h;
    timeline?.record(h, 'gemm', { flops: 2 * m * this.inFeatures * this.outputSizePerPartition });
    return y;
  }

  /** Keep this rank's columns of the full [inFeatures, outFeatures] weight (row-major), as Megatron's weight loader does. */
  async loadFullWeight(full: ArrayLike<number>): Promise<void> {
    requireLength('ColumnParallelLinear.loadFullWeight', 'weight', full, [this.inFeatures, this.outFeatures]);
    const n = this.outputSizePerPartition;
    const slice = columnBlock(full, this.inFeatures, this.outFeatures, this.rank * n, n);
    await this.weight.copy_(this.torch.fromArray(slice, { shape: [this.inFeatures, n], dtype: this.dtype }));
  }

  /** Keep this rank's part of the full [outFeatures] bias. */
  async loadFullBias(full: ArrayLike<number>): Promise<void> {
    const bias = requireBias('ColumnParallelLinear', this.bias);
    requireLength('ColumnParallelLinear.loadFullBias', 'bias', full, [this.outFeatures]);
    const n = this.outputSizePerPartition;
    const slice = tabulateF32(n, (j) => full[this.rank * n + j]);
    await bias.copy_(this.torch.fromArray(slice, { shape: [n], dtype: this.dtype }));
  }
}

/** Row-parallel linear layer: this rank holds in/ws rows of W; the partial products are summed by an all-reduce. */
export class RowParallelLinear {
  readonly inFeatures: number;
  readonly outFeatures: number;
  /** Input features this rank sees: inFeatures / TP world size. */
  readonly inputSizePerPartition: number;
  readonly dtype: ResolvedOptions['dtype'];
  /** This rank's slice of W: [inputSizePerPartition, outFeatures]. */
  readonly weight: Tensor;
  /** The whole bias [outFeatures] (every rank holds it; added once after the reduce), or null. */
  readonly bias: Tensor | null;
  readonly sequenceParallel: boolean;
  readonly overlap: boolean;
  /** PEs each GEMM launch splits over (the option). */
  readonly gemmPes: number;
  private readonly rank: number;
  private readonly ws: number;

  constructor(
    private readonly torch: Torch,
    options: ParallelLinearOptions,
  ) {
    const o = parseOptions('RowParallelLinear', options);
    this.sequenceParallel = o.sequenceParallel;
    this.overlap = o.overlap;
    const ws = getTensorModelParallelWorldSize(torch);
    this.rank = getTensorModelParallelRank(torch);
    requireOwnDevice('RowParallelLinear', torch, this.rank);
    requireDivisible('RowParallelLinear', 'inFeatures', o.inFeatures, ws);
    this.ws = ws;
    this.inFeatures = o.inFeatures;
    this.outFeatures = o.outFeatures;
    this.inputSizePerPartition = o.inFeatures / ws;
    this.dtype = o.dtype;
    this.weight = torch.zeros([this.inputSizePerPartition, o.outFeatures], { dtype: o.dtype, name: 'row_parallel_weight' });
    this.bias = o.bias ? torch.zeros([o.outFeatures], { dtype: o.dtype, name: 'row_parallel_bias' }) : null;
    this.gemmPes = o.gemmPes;
    gemmPesOf(torch, this.weight, o.gemmPes);
  }

  /**
   * y = sum over ranks of x_r @ W_r (+ b): x_r [M, inputSizePerPartition] on
   * this layer's PE, y [M, outFeatures], the same on every rank. Every rank of
   * the group must call it (the all-reduce is collective). With
   * sequenceParallel the sum is reduce-scattered by rows instead: y is this
   * rank's M / ws rows. Launches are recorded in `timeline` when one is given.
   */
  async forward(x: Tensor, timeline?: LayerTimeline): Promise<Tensor> {
    const m = checkInput('RowParallelLinear', x, this.inputSizePerPartition, this.dtype, this.weight);
    if (this.overlap) return this.forwardOverlapped(x, m, timeline);
    const partial = this.torch.empty([m, this.outFeatures], { dtype: this.dtype, name: 'row_parallel_out' });
    const h = launchGemm(this.torch, 'row_parallel_gemm', x, this.weight, partial, null, this.gemmPes);
    await h;
    timeline?.record(h, 'gemm', { flops: 2 * m * this.inputSizePerPartition * this.outFeatures });
    let y = partial;
    const bytes = partial.numel * elementBytes(this.dtype);
    if (this.sequenceParallel) {
      requireDivisible('RowParallelLinear.forward', 'the rows of x (sequenceParallel)', m, this.ws);
      y = this.torch.empty([m / this.ws, this.outFeatures], { dtype: this.dtype, name: 'sequence_parallel_scattered' });
      const work = await this.torch.distributed.reduceScatter(y, partial, { op: 'sum' });
      timeline?.record(work.handle, 'collective', { bytes });
    } else {
      const work = await this.torch.distributed.allReduce(partial, { op: 'sum' });
      timeline?.record(work.handle, 'collective', { bytes });
    }
    // After the reduce, not inside the gemm: a bias in each partial product would be summed ws times.
    await this.addBiasTo(y, timeline);
    return y;
  }

  /** The overlap option: the fused GEMM + reduce-scatter kernel, then the bias (added once, after the sum, as without overlap). */
  private async forwardOverlapped(x: Tensor, m: number, timeline?: LayerTimeline): Promise<Tensor> {
    requireDivisible('RowParallelLinear.forward', 'the rows of x (sequenceParallel)', m, this.ws);
    const y = this.torch.empty([m / this.ws, this.outFeatures], { dtype: this.dtype, name: 'sequence_parallel_scattered' });
    const h = this.torch.distributed.launchCollective('gemm_reduce_scatter', gemmReduceScatter, x, [x.toDesc(), this.weight.toDesc(), y.toDesc()], { leadingTensor: false, sends: COLLECTIVE_MATMUL_SENDS });
    await h;
    timeline?.record(h, 'overlapped', { bytes: m * this.outFeatures * elementBytes(this.dtype), flops: 2 * m * this.inputSizePerPartition * this.outFeatures });
    await this.addBiasTo(y, timeline);
    return y;
  }

  private async addBiasTo(y: Tensor, timeline?: LayerTimeline): Promise<void> {
    if (!this.bias) return;
    const b = this.torch.launch('row_parallel_bias', addBias, y, this.bias);
    await b;
    timeline?.record(b, 'vector');
  }

  /** Keep this rank's rows of the full [inFeatures, outFeatures] weight (row-major), as Megatron's weight loader does. */
  async loadFullWeight(full: ArrayLike<number>): Promise<void> {
    requireLength('RowParallelLinear.loadFullWeight', 'weight', full, [this.inFeatures, this.outFeatures]);
    const k = this.inputSizePerPartition;
    const start = this.rank * k * this.outFeatures;
    const slice = tabulateF32(k * this.outFeatures, (i) => full[start + i]);
    await this.weight.copy_(this.torch.fromArray(slice, { shape: [k, this.outFeatures], dtype: this.dtype }));
  }

  /** Set the whole [outFeatures] bias (not split: it is added once, after the all-reduce). */
  async loadFullBias(full: ArrayLike<number>): Promise<void> {
    const bias = requireBias('RowParallelLinear', this.bias);
    requireLength('RowParallelLinear.loadFullBias', 'bias', full, [this.outFeatures]);
    await bias.copy_(this.torch.fromArray(Float32Array.from(full), { shape: [this.outFeatures], dtype: this.dtype }));
  }
}

// ---- the GEMM launch and checks shared by both layers ----------------------------

/**
 * y = x @ w (+ bias) by the gemm kernel. With gemmPes 1 it runs on the PE
 * holding the tensors; with more, one launch runs it on that many PEs of
 * their cube, each on a block of x's and y's rows and the whole of w and the
 * bias (views of the same bytes, pe-split.ts). Each output element is the same
 * tl.dot over the full K either way, so the values are the same bits.
 */
function launchGemm(torch: Torch, name: string, x: Tensor, w: Tensor, y: Tensor, bias: Tensor | null, gemmPes: number): LaunchHandle {
  if (gemmPes === 1) return torch.launch(name, gemm, x, w, y, ...(bias ? [bias] : []));
  for (const t of [x, w, y, ...(bias ? [bias] : [])]) torch.requireLive(t, name);
  const pes = gemmPesOf(torch, x, gemmPes).slice(0, x.shape[0]);
  return torch.launch(name, gemm, rowBlocks(x.toDesc(), pes), wholeOn(w.toDesc(), pes), rowBlocks(y.toDesc(), pes), bias ? wholeOn(bias.toDesc(), pes) : null);
}

/** The PEs of `t`'s cube a GEMM splits over (refused past the cube's PEs: ERR_GEMM_PES_BEYOND_CUBE). */
function gemmPesOf(torch: Torch, t: Tensor, gemmPes: number): number[] {
  return cubePes(t.toDesc(), gemmPes, torch.host.env.machine.pesPerCube).pes;
}


/** Validate options at the edge; every problem is reported at once, each ending with what was received. */
function parseOptions(layer: string, options: unknown): ResolvedOptions {
  const r = ParallelLinearOptionsSchema.safeParse(options, { reportInput: true });
  if (r.success) {
    if (r.data.overlap && !r.data.sequenceParallel) throw new KernbenchError('ERR_OVERLAP_NEEDS_SEQUENCE_PARALLEL', `${layer}: overlap fuses the sequence-parallel all-gather or reduce-scatter with the GEMM, so it needs sequenceParallel: true, got overlap: true, sequenceParallel: false`);
    return r.data;
  }
  const problems = issueProblems(r.error.issues, ParallelLinearOptionsSchema, (path) => ({ file: `${layer} options`, path: dottedPath(path) }));
  throw new KernbenchError('ERR_INVALID_OPTIONS', problems.map(formatConfigProblem).join('; '));
}

/** `value` (a size named `field`) splits evenly over the `ws` tensor-parallel ranks, else ERR_UNEVEN_SPLIT. */
export function requireDivisible(layer: string, field: string, value: number, ws: number): void {
  if (value % ws !== 0) {
    throw new KernbenchError('ERR_UNEVEN_SPLIT', `${layer}: ${field} must be divisible by the tensor model parallel world size (${ws}) to split it evenly, got ${field} = ${value}`);
  }
}

/** Weights go to the SIP torch.ahbm.setDevice chose; the TP rank must own it (RowParallel's all-reduce requires it, ColumnParallel would silently compute elsewhere). */
function requireOwnDevice(layer: string, torch: Torch, rank: number): void {
  const device = torch.ahbm.currentDevice();
  if (device !== rank) throw new KernbenchError('ERR_TENSOR_PLACEMENT', `${layer}: tensor-parallel rank ${rank} must build its layers on its own SIP; call torch.ahbm.setDevice(${rank}) first, got current device ${device}`);
}

/** x must be a device tensor [M, cols] of the layer's dtype, on the PEs that hold the weight. Returns M. */
function checkInput(layer: string, x: Tensor, cols: number, dtype: string, weight: Tensor): number {
  if (!x.desc) throw new KernbenchError('ERR_NEEDS_DEVICE_TENSOR', `${layer}.forward takes a device tensor; copy_ the host tensor into torch.zeros(...) first, got a host tensor of shape [${x.shape.join(', ')}]`);
  if (x.shape.length !== 2 || x.shape[1] !== cols) throw new KernbenchError('ERR_SHAPE_MISMATCH', `${layer}.forward: x must be [M, ${cols}], got shape [${x.shape.join(', ')}]`);
  if (x.dtype !== dtype) throw new KernbenchError('ERR_DTYPE_MISMATCH', `${layer}.forward: x must have the layer's dtype ${dtype}, got ${x.dtype}`);
  const where = (t: Tensor) => (t.desc?.shards ?? []).map((s) => `(sip ${s.sip}, cube ${s.cube}, pe ${s.pe})`).join(' ');
  if (where(x) !== where(weight)) throw new KernbenchError('ERR_TENSOR_PLACEMENT', `${layer}.forward: x must live where the weight does, ${where(weight)} (allocate it after torch.ahbm.setDevice(rank) with the default DPPolicy), got x on ${where(x)}`);
  return x.shape[0];
}

function requireLength(what: string, name: string, full: ArrayLike<number>, shape: number[]): void {
  const n = shape.reduce((a, b) => a * b, 1);
  if (full.length !== n) throw new KernbenchError('ERR_VALUE_COUNT_MISMATCH', `${what}: the full ${name} [${shape.join(', ')}] has ${n} values, got ${full.length}`);
}

function requireBias(layer: string, bias: Tensor | null): Tensor {
  if (!bias) throw new KernbenchError('ERR_NO_BIAS', `${layer}.loadFullBias: the layer was built with bias: false, got a bias to load`);
  return bias;
}

/** Columns [start, start + count) of a row-major [rows, cols] matrix. */
function columnBlock(full: ArrayLike<number>, rows: number, cols: number, start: number, count: number): Float32Array {
  const out = new Float32Array(rows * count);
  for (let r = 0; r < rows; r++) for (let c = 0; c < count; c++) out[r * count + c] = full[r * cols + start + c];
  return out;
}
