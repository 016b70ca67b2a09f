// Runs on: main (run) and executor threads (moeWorker, one call per rank).
// Expert-parallel MoE dispatch and combine, written as a PyTorch script: spawn
// one rank per SIP -> initProcessGroup -> route tokens -> all-to-all the counts
// -> all-to-all the tokens to their experts (dispatch) -> experts -> all-to-all
// the results back (combine). Every all-to-all is allToAllSingle with uneven
// splits, so the run needs peer channels (ccl.peer_ranks >= the world size: the
// pairwise exchange, docs/algorithms/all_to_all.md).
//
//   router   each rank's `tokens` tokens pick their top-k experts by a seeded
//            logit: a per-(rank, token, expert) draw plus a per-expert bias drawn
//            once per seed (some experts are popular: uneven splits). Ties go to
//            the lower expert.
//   experts  E experts in contiguous blocks over the ranks: expert e on rank
//            floor(e ws / E). A rank's send buffer holds one row of `hidden`
//            elements per (token, choice), ordered by expert (so by rank), then
//            token, then choice.
//   counts   allToAllSingle of the per-expert row counts (E elements a rank, the
//            block for rank d holding d's experts): each rank learns how many rows
//            each source sends each of its experts, as MoE layers do.
//   expert e adds e mod 32 to each element of its rows (host code, outside virtual
//            time: the bench times communication), so every returned row names the
//            expert that saw it.
//   check    after combine, each rank's row for (token t, choice j) must be token
//            t's row plus its j-th expert's mark (not with --no-data).
//
// Reported: the dispatch and combine all-to-all times (max over ranks of each
// rank's Work.critNs), their busbw as nccl-tests defines it for all-to-all
// (algbw = S / t, busbw = algbw (n - 1) / n, S the send buffer of a rank: here the
// mean over ranks, since the splits are uneven; decision 0056), and the load
// imbalance: max / mean rows per expert and per rank.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { bytesPerElement } from '../lib/dtype/index.js';
import { KernbenchError } from '../lib/errors.js';
import type { Torch } from '../lib/host/torch.js';

const options = (z: Zod) => z.object({
  tokens: z.number().int().positive().default(256).describe('tokens per rank'),
  hidden: z.number().int().positive().default(512).describe('hidden size: elements of a token row'),
  experts: z.number().int().positive().default(16).describe('experts in all, in contiguous blocks over the ranks (at least one a rank)'),
  topK: z.number().int().positive().default(2).describe('experts each token is routed to'),
  seed: z.number().int().min(0).default(1).describe("the router's seed"),
  dtype: z.enum(['f16', 'bf16', 'f32']).default('bf16').describe('element type of the token rows'),
});
type Options = OptionsOf<typeof options>;

export default defineBench({
  description: 'expert-parallel MoE dispatch and combine (allToAllSingle with uneven splits from a seeded top-k router): all-to-all times, busbw, load imbalance, checked data',
  options,
  run,
});

/** A small seeded generator (mulberry32): floats in [0, 1). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The rank that holds expert e of E over ws ranks. */
export const expertRank = (e: number, E: number, ws: number): number => Math.floor((e * ws) / E);

/** Element h of token t's row on rank r: small integers, exact in every dtype with an expert's mark added. */
export const tokenValue = (r: number, t: number, h: number): number => 1 + ((3 * r + 5 * t + h) % 8);

/** What expert e adds to each element of a row. */
export const expertMark = (e: number): number => e % 32;

/** Rank r's routing: for each token, its top-k experts (best first). */
export function route(o: Pick<Options, 'tokens' | 'experts' | 'topK' | 'seed'>, r: number): number[][] {
  const biasRng = generator(o.seed * 7919 + 17);
  const bias = Array.from({ length: o.experts }, () => 0.5 * biasRng());
  const rng = generator(o.seed * 1_000_003 + r * 7_919 + 1);
  const chosen: number[][] = [];
  for (let t = 0; t < o.tokens; t++) {
    const logit = bias.map((b) => b + rng());
    const order = Array.from({ length: o.experts }, (_, e) => e).sort((a, b) => logit[b] - logit[a] || a - b);
    chosen.push(order.slice(0, o.topK));
  }
  return chosen;
}

/** One row of a rank's send buffer: token t's choice j, to expert e. */
interface Row {
  t: number;
  j: number;
  e: number;
}

export interface MoePlan extends Options {
  noData: boolean;
}

export interface MoeRankResult {
  dispatchNs: number;
  combineNs: number;
  countsNs: number;
  /** Rows this rank sends (= receives back) and receives for its experts. */
  sentRows: number;
  recvRows: number;
  /** Rows this rank routed to each expert. */
  perExpert: number[];
  /** Rows that came back wrong (0 with --no-data: nothing checked). */
  wrong: number;
  /** The combined rows (the digest's output; empty with --no-data). */
  out: Float32Array;
}

export async function moeWorker(rank: number, plan: MoePlan, torch: Torch): Promise<MoeRankResult> {
  torch.ahbm.setDevice(rank);
  const dist = torch.distributed;
  await dist.initProcessGroup({ backend: 'ahbm' });
  const ws = dist.getWorldSize();
  const { hidden: H, experts: E, dtype, noData } = plan;
  const chosen = route(plan, rank);
  const rows: Row[] = chosen.flatMap((es, t) => es.map((e, j) => ({ t, j, e })));
  rows.sort((a, b) => a.e - b.e || a.t - b.t || a.j - b.j);
  const perExpert = new Array<number>(E).fill(0);
  for (const row of rows) perExpert[row.e]++;
  // Experts of each rank: [first[d], first[d + 1]).
  const first = Array.from({ length: ws + 1 }, (_, d) => (d === ws ? E : Math.ceil((d * E) / ws)));
  const mine = first[rank + 1] - first[rank];

  // Counts: block d of the E counts is rank d's experts.
  const expertSplits = Array.from({ length: ws }, (_, d) => first[d + 1] - first[d]);
  const sendCounts = torch.zeros([E], { dtype: 'f32', name: 'counts' });
  await sendCounts.copy_(torch.fromArray(perExpert, { dtype: 'f32' }));
  const recvCounts = torch.zeros([ws * mine], { dtype: 'f32', name: 'counts_in' });
  const wCounts = await dist.allToAllSingle(recvCounts, sendCounts, { inputSplitSizes: expertSplits, outputSplitSizes: Array.from({ length: ws }, () => mine) });
  // fromSrc[s][l]: rows source s sends to this rank's l-th expert.
  const counts = Array.from((await recvCounts.numpy()).data);
  const fromSrc = Array.from({ length: ws }, (_, s) => counts.slice(s * mine, (s + 1) * mine));
  const inRows = Array.from({ length: ws }, (_, d) => rows.filter((row) => expertRank(row.e, E, ws) === d).length);
  const outRows = fromSrc.map((c) => c.reduce((a, b) => a + b, 0));
  const recvTotal = outRows.reduce((a, b) => a + b, 0);
  if (recvTotal === 0) throw unfit(`moe_dispatch: rank ${rank}'s experts received no token; raise --tokens or lower --experts, got ${plan.tokens} tokens over ${E} experts`);

  // Dispatch.
  const send = torch.zeros([rows.length * H], { dtype, name: 'dispatch_in' });
  if (!noData) {
    const x = new Float32Array(rows.length * H);
    rows.forEach((row, i) => {
      for (let h = 0; h < H; h++) x[i * H + h] = tokenValue(rank, row.t, h);
    });
    await send.copy_(torch.fromArray(x, { dtype }));
  }
  const recv = torch.zeros([recvTotal * H], { dtype, name: 'dispatch_out' });
  const dispatchIn = inRows.map((n) => n * H);
  const dispatchOut = outRows.map((n) => n * H);
  const wDispatch = await dist.allToAllSingle(recv, send, { inputSplitSizes: dispatchIn, outputSplitSizes: dispatchOut });

  // Experts: rows from each source come ordered by expert; expert first[rank] + l gets fromSrc[s][l] of them.
  let expertOut = recv;
  if (!noData) {
    const data = Float32Array.from((await recv.numpy()).data);
    let at = 0;
    for (let s = 0; s < ws; s++) {
      for (let l = 0; l < mine; l++) {
        const mark = expertMark(first[rank] + l);
        for (let k = 0; k < fromSrc[s][l] * H; k++) data[at++] += mark;
      }
    }
    expertOut = torch.zeros([recvTotal * H], { dtype, name: 'expert_out' });
    await expertOut.copy_(torch.fromArray(data, { dtype }));
  }

  // Combine: the reverse exchange.
  const back = torch.zeros([rows.length * H], { dtype, name: 'combine_out' });
  const wCombine = await dist.allToAllSingle(back, expertOut, { inputSplitSizes: dispatchOut, outputSplitSizes: dispatchIn });
  let wrong = 0;
  let out = new Float32Array(0);
  if (!noData) {
    out = Float32Array.from((await back.numpy()).data);
    rows.forEach((row, i) => {
      for (let h = 0; h < H; h++) if (out[i * H + h] !== tokenValue(rank, row.t, h) + expertMark(row.e)) wrong++;
    });
  }
  return { dispatchNs: wDispatch.critNs, combineNs: wCombine.critNs, countsNs: wCounts.critNs, sentRows: rows.length, recvRows: recvTotal, perExpert, wrong, out };
}

async function run(torch: Torch, ctx: BenchContext<Options>): Promise<BenchResult[]> {
  const o = ctx.options;
  const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
  if (o.experts < ws) throw unfit(`moe_dispatch: every rank holds at least one expert: --experts must be at least the world size ${ws}, got ${o.experts}`);
  if (o.topK > o.experts) throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `moe_dispatch: --top-k must not exceed --experts (${o.experts}), got ${o.topK}`);
  if (ws > 1 && (ctx.ccl.peer_ranks ?? 0) < ws) {
    throw unfit(`moe_dispatch: the uneven all-to-alls need peer channels for ${ws} ranks; add --set ccl.peer_ranks=${ws}, got ccl.peer_ranks = ${ctx.ccl.peer_ranks ?? 0}`);
  }
  const noData = ctx.config.noData ?? false;
  const ranks = await torch.multiprocessing.spawn(moeWorker, { args: [{ ...o, noData } satisfies MoePlan], nprocs: ws });
  const bpe = bytesPerElement(o.dtype);
  const dispatchNs = Math.max(...ranks.map((r) => r.dispatchNs));
  const combineNs = Math.max(...ranks.map((r) => r.combineNs));
  const countsNs = Math.max(...ranks.map((r) => r.countsNs));
  // nccl-tests' all-to-all: S = a rank's send buffer (here the mean over ranks), algbw = S / t, busbw = algbw (n - 1) / n.
  const meanBytes = (ranks.reduce((a, r) => a + r.sentRows, 0) / ws) * o.hidden * bpe;
  const busbw = (ns: number): number => (meanBytes / ns) * ((ws - 1) / ws);
  const perExpert = Array.from({ length: o.experts }, (_, e) => ranks.reduce((a, r) => a + r.perExpert[e], 0));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const expertImbalance = Math.max(...perExpert) / mean(perExpert);
  const recvRows = ranks.map((r) => r.recvRows);
  const rankImbalance = Math.max(...recvRows) / mean(recvRows);
  const wrong = ranks.reduce((a, r) => a + r.wrong, 0);
  const fmt = (x: number, d = 3): string => x.toFixed(d);
  const lines = [
    `moe_dispatch on ${torch.topologyName}: ${ws} ranks, ${o.tokens} tokens a rank, hidden ${o.hidden}, ${o.experts} experts, top-${o.topK}, seed ${o.seed}, ${o.dtype}`,
    `rows per expert: min ${Math.min(...perExpert)} max ${Math.max(...perExpert)} mean ${fmt(mean(perExpert), 1)}; imbalance (max/mean) experts ${fmt(expertImbalance)}, ranks ${fmt(rankImbalance)}`,
    `counts all-to-all ${fmt(countsNs)} ns`,
    `dispatch ${fmt(dispatchNs)} ns, busbw ${fmt(busbw(dispatchNs))} GB/s; combine ${fmt(combineNs)} ns, busbw ${fmt(busbw(combineNs))} GB/s (send buffer ${fmt(meanBytes, 0)} B a rank, mean)`,
    noData ? 'data: not checked (--no-data)' : `data: ${wrong} wrong elements after combine(dispatch(x))`,
  ];
  return [
    {
      bench: ctx.bench,
      algorithm: 'pairwise_all_to_all',
      topology: torch.topologyName,
      worldSize: ws,
      nElem: o.tokens * o.hidden,
      dtype: o.dtype,
      ok: wrong === 0,
      critNs: dispatchNs + combineNs,
      lines,
      outputs: noData ? [] : ranks.map((r) => r.out),
      extra: { dispatch_ns: dispatchNs, combine_ns: combineNs, counts_ns: countsNs, dispatch_busbw_gb_s: busbw(dispatchNs), combine_busbw_gb_s: busbw(combineNs), expert_imbalance: expertImbalance, rank_imbalance: rankImbalance, wrong },
    },
  ];
}

/** The options do not fit this world: one site for the bench's three such refusals. */
function unfit(message: string): KernbenchError {
  return new KernbenchError('ERR_BENCH_OPTION_UNFIT', message);
}
