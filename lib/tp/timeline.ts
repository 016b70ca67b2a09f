// Runs on: a host thread (a spawned rank). Owns: one rank's record of where a
// layer's time goes — every kernel and collective the layers launch, as a
// span of virtual time with its block, kind, bytes and model FLOPs — and the
// breakdown computed from it:
//
//   compute      union of the GEMM, attention and vector kernels' spans
//   comm         union of the collectives' spans
//   exposed      comm minus compute: the part of the rank's timeline where a
//                collective is in flight and no PE computes. Without overlap
//                every collective is exposed; with it, what hides behind a
//                GEMM is not.
//
// Spans are read from the launch handles once they are waited for (their PE
// timings), so recording changes no virtual time.
import type { LaunchHandle } from '../host/host-runtime.js';
import type { DType } from '../dtype/index.js';

export type SpanKind = 'gemm' | 'attention' | 'vector' | 'collective';

export interface Span {
  /** The layer block the launch belongs to (attention, mlp). */
  block: string;
  /** The launch's name (column_parallel_gemm, all_reduce, ...). */
  name: string;
  kind: SpanKind;
  startPs: number;
  endPs: number;
  /** A collective's buffer size in bytes (all-reduce: the tensor; all-gather: the output; reduce-scatter: the input); 0 for kernels. */
  bytes: number;
  /** Model FLOPs of a GEMM or attention kernel (2 per multiply-add of its products); 0 otherwise. */
  flops: number;
}

export class LayerTimeline {
  readonly spans: Span[] = [];
  /** The block the next launches belong to. */
  block = 'layer';

  /** Record a waited-for launch. */
  record(handle: LaunchHandle, kind: SpanKind, extra: { bytes?: number; flops?: number } = {}): void {
    const t = handle.timings;
    if (t.length === 0) return;
    const startPs = Math.min(...t.map((x) => x.startPs));
    const endPs = Math.max(...t.map((x) => x.endPs));
    this.spans.push({ block: this.block, name: handle.name, kind, startPs, endPs, bytes: extra.bytes ?? 0, flops: extra.flops ?? 0 });
  }
}

/** Bytes of one element of a layer dtype. */
export function elementBytes(dtype: DType): number {
  return dtype === 'f32' ? 4 : 2;
}

export interface CollectiveTime {
  block: string;
  name: string;
  ns: number;
  bytes: number;
}

export interface Breakdown {
  /** From the first span's start to the last one's end, in ns. */
  spanNs: number;
  /** Per block: summed kernel times by kind, in ns. */
  blocks: { block: string; gemmNs: number; attentionNs: number; vectorNs: number; commNs: number; exposedCommNs: number }[];
  collectives: CollectiveTime[];
  computeNs: number;
  commNs: number;
  exposedCommNs: number;
  flops: number;
}

/** Where a rank's time went (see the top of this file). */
export function breakdown(spans: readonly Span[]): Breakdown {
  const compute = spans.filter((s) => s.kind !== 'collective');
  const comm = spans.filter((s) => s.kind === 'collective');
  const blocks = [...new Set(spans.map((s) => s.block))].map((block) => {
    const mine = spans.filter((s) => s.block === block);
    const sum = (kind: SpanKind) => mine.filter((s) => s.kind === kind).reduce((a, s) => a + (s.endPs - s.startPs), 0) / 1000;
    const myComm = mine.filter((s) => s.kind === 'collective');
    return { block, gemmNs: sum('gemm'), attentionNs: sum('attention'), vectorNs: sum('vector'), commNs: sum('collective'), exposedCommNs: measure(minus(union(myComm), union(compute))) / 1000 };
  });
  const start = Math.min(...spans.map((s) => s.startPs));
  const end = Math.max(...spans.map((s) => s.endPs));
  return {
    spanNs: spans.length ? (end - start) / 1000 : 0,
    blocks,
    collectives: comm.map((s) => ({ block: s.block, name: s.name, ns: (s.endPs - s.startPs) / 1000, bytes: s.bytes })),
    computeNs: measure(union(compute)) / 1000,
    commNs: measure(union(comm)) / 1000,
    exposedCommNs: measure(minus(union(comm), union(compute))) / 1000,
    flops: spans.reduce((a, s) => a + s.flops, 0),
  };
}

type Interval = [number, number];

/** Disjoint, sorted intervals covering the spans. */
export function union(spans: readonly { startPs: number; endPs: number }[]): Interval[] {
  const xs = spans.map((s): Interval => [s.startPs, s.endPs]).filter(([a, b]) => b > a).sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const out: Interval[] = [];
  for (const [a, b] of xs) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** a minus b, both disjoint and sorted. */
export function minus(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const [s, e] of a) {
    let from = s;
    for (const [bs, be] of b) {
      if (be <= from || bs >= e) continue;
      if (bs > from) out.push([from, bs]);
      from = Math.max(from, be);
      if (from >= e) break;
    }
    if (from < e) out.push([from, e]);
  }
  return out;
}

export function measure(xs: readonly Interval[]): number {
  return xs.reduce((a, [s, e]) => a + (e - s), 0);
}
