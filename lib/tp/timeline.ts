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
// An overlapped span (a fused collective-matmul kernel) is a GEMM with its
// collective in flight the whole time: it counts in comm over its whole span,
// in compute (and gemm) minus the time it reported waiting, and that wait is
// its exposed communication (the kernel measures it, collective-matmul.ts).
//
// Spans are read from the launch handles once they are waited for (their PE
// timings), so recording changes no virtual time.
import type { LaunchHandle } from '../host/host-runtime.js';
import type { DType } from '../dtype/index.js';
import { KernbenchError } from '../errors.js';

/** 'overlapped': a fused collective-matmul kernel, a GEMM with its collective in flight (collective-matmul.ts). */
export type SpanKind = 'gemm' | 'attention' | 'vector' | 'collective' | 'overlapped';

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
  /** An overlapped kernel's reported wait on communication (its exposed communication; the most over its PEs); 0 otherwise. */
  waitPs: number;
  /** The PEs the launch ran on (more than one for a GEMM split over a cube's PEs, decision 0116). */
  pes: number;
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
    const waitPs = Math.max(...t.map((x) => x.waitPs));
    this.spans.push({ block: this.block, name: handle.name, kind, startPs, endPs, bytes: extra.bytes ?? 0, flops: extra.flops ?? 0, waitPs, pes: t.length });
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
  const kernels = spans.filter((s) => s.kind !== 'collective');
  const inFlight = spans.filter((s) => s.kind === 'collective' || s.kind === 'overlapped');
  const waitPs = (xs: readonly Span[]) => xs.reduce((a, s) => a + s.waitPs, 0);
  // Exposed: collectives outside every kernel, plus what the fused kernels waited.
  const exposedPs = (xs: readonly Span[]) => measure(minus(union(xs.filter((s) => s.kind === 'collective')), union(kernels))) + waitPs(xs);
  const blocks = [...new Set(spans.map((s) => s.block))].map((block) => {
    const mine = spans.filter((s) => s.block === block);
    const sum = (...kinds: SpanKind[]) => mine.filter((s) => kinds.includes(s.kind)).reduce((a, s) => a + (s.endPs - s.startPs), 0);
    return { block, gemmNs: (sum('gemm', 'overlapped') - waitPs(mine)) / 1000, attentionNs: sum('attention') / 1000, vectorNs: sum('vector') / 1000, commNs: sum('collective', 'overlapped') / 1000, exposedCommNs: exposedPs(mine) / 1000 };
  });
  const start = Math.min(...spans.map((s) => s.startPs));
  const end = Math.max(...spans.map((s) => s.endPs));
  return {
    spanNs: spans.length ? (end - start) / 1000 : 0,
    blocks,
    collectives: inFlight.map((s) => ({ block: s.block, name: s.name, ns: (s.endPs - s.startPs) / 1000, bytes: s.bytes })),
    computeNs: (measure(union(kernels)) - waitPs(spans)) / 1000,
    commNs: measure(union(inFlight)) / 1000,
    exposedCommNs: exposedPs(spans) / 1000,
    flops: spans.reduce((a, s) => a + s.flops, 0),
  };
}

/** The collectives a layer issues, by what they do (a fused kernel counts as its collective). */
export const COLLECTIVE_KINDS = ['all_reduce', 'all_gather', 'reduce_scatter'] as const;
export type CollectiveKind = (typeof COLLECTIVE_KINDS)[number];

/**
 * Each collective kind's summed time in flight and bytes. Launch names say the
 * kind: all_reduce, all_gather, reduce_scatter, and the fused all_gather_gemm
 * and gemm_reduce_scatter (collective-matmul.ts).
 */
export function byCollectiveKind(b: Breakdown): Record<CollectiveKind, { ns: number; bytes: number }> {
  const out = Object.fromEntries(COLLECTIVE_KINDS.map((k) => [k, { ns: 0, bytes: 0 }])) as Record<CollectiveKind, { ns: number; bytes: number }>;
  for (const c of b.collectives) {
    const kind = COLLECTIVE_KINDS.find((k) => c.name.includes(k));
    if (kind === undefined) throw new KernbenchError('ERR_INTERNAL', `timeline: a collective span named ${c.name} is none of ${COLLECTIVE_KINDS.join(', ')}`);
    out[kind].ns += c.ns;
    out[kind].bytes += c.bytes;
  }
  return out;
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
