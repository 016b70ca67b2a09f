// Runs on: executor threads (one call per rank, spawned by ./allocations.ts).
// Owns: a rank of the counted ring all-reduce (or all-to-all), with V8's sampling heap profiler
// on its thread around the all-reduces when it is rank 0, to give the bytes the
// thread allocated there: every object, those the collections freed included.
import { Session } from 'node:inspector';
import type { Torch } from '../../lib/host/torch.js';

/** The collective counted: the ring all-reduce, or the all-to-all (allToAllSingle). */
export type Collective = 'allreduce' | 'alltoall';

/** What rank 0 measured: the sampled bytes by the function that allocated them (V8's estimate of the whole), and their sum. */
export interface AllocSample {
  bytes: number;
  /** Bytes by allocating function, `name file:line`, biggest first. */
  sites: [string, number][];
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Sum the profile's self sizes by the allocating frame. */
function bySite(node: ProfileNode, into: Map<string, number>): void {
  if (node.selfSize > 0) {
    const f = node.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/dist\//, '')}:${f.lineNumber + 1}`;
    into.set(site, (into.get(site) ?? 0) + node.selfSize);
  }
  for (const c of node.children) bySite(c, into);
}

/**
 * Post `method` to this thread's own inspector session and give its answer. A session
 * connected to its own thread answers before post returns; when the answer is too large
 * for the inspector to hand over (a profile of very many samples) it gives none at all, and
 * an await of it would wait forever: this fails instead, naming the way out.
 */
export function postNow<T = unknown>(session: Session, method: string, params?: object): T {
  let answer: { error: Error | null; result: unknown } | undefined;
  session.post(method, params, (error, result) => (answer = { error, result }));
  if (answer === undefined) throw new Error(`allocations: the inspector gave no answer to ${method}: the profile is too large to hand over (too many samples); give a larger sampling interval`);
  if (answer.error !== null) throw answer.error;
  return answer.result as T;
}

/**
 * One all-reduce (or all-to-all) to warm the code up, then `rounds` of them of `nElem` f32
 * per rank between two barriers, rank 0 sampling every `intervalBytes` on
 * average from before the first barrier to after the second. With every rank
 * on one thread (--threads 1) that is the whole thread's allocation: two runs
 * of different `rounds` differ by the all-reduces alone.
 */
export async function allocWorker(rank: number, nElem: number, rounds: number, intervalBytes: number, collective: Collective, torch: Torch): Promise<AllocSample | null> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([nElem], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(nElem).fill(1)));
  const out = collective === 'alltoall' ? torch.zeros([nElem], { dtype: 'f32' }) : t;
  const once = async (): Promise<unknown> => (collective === 'alltoall' ? torch.distributed.allToAllSingle(out, t) : torch.distributed.allReduce(t, { op: 'sum' }));
  await once();
  const session = rank === 0 ? new Session() : null;
  if (session) {
    session.connect();
    postNow(session, 'HeapProfiler.enable');
    postNow(session, 'HeapProfiler.startSampling', { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  await torch.distributed.barrier();
  for (let i = 0; i < rounds; i++) await once();
  await torch.distributed.barrier();
  if (!session) return null;
  const { profile } = postNow<{ profile: { head: ProfileNode } }>(session, 'HeapProfiler.stopSampling');
  session.disconnect();
  const sites = new Map<string, number>();
  bySite(profile.head, sites);
  let bytes = 0;
  for (const b of sites.values()) bytes += b;
  return { bytes, sites: [...sites].sort((a, b) => b[1] - a[1]) };
}
