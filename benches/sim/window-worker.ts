// Runs on: executor threads (one call per rank, spawned by ./window-cpu.ts).
// Owns: a rank of bench sim_throughput's ring all-reduce that reads, at the
// bench's timing window (rank 0's all-reduce start, the last rank's end), the
// CPU time of every thread of the process and the thread it runs on.
import { readdirSync, readFileSync } from 'node:fs';
import type { Torch } from '../../lib/host/torch.js';
import { rankSetUp } from '../sim_throughput.js';
import { allEqual } from './model-floor.js';

/** Every thread's CPU time and its time runnable but waiting for a core (ns, /proc/self/task/T/schedstat). */
export interface ThreadCpu {
  ns: Record<string, number>;
  waitNs: Record<string, number>;
  /** Process-wide user + system CPU (us), as sim_throughput reads it. */
  processUs: number;
}

/** The calling thread's id (/proc/thread-self). */
function threadId(): string {
  return readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0];
}

function threadCpu(): ThreadCpu {
  const ns: Record<string, number> = {};
  const waitNs: Record<string, number> = {};
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const [run, wait] = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ');
      ns[t] = Number(run);
      waitNs[t] = Number(wait);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  const u = process.resourceUsage();
  return { ns, waitNs, processUs: u.userCPUTime + u.systemCPUTime };
}

/** As sim_throughput's worker (one all-reduce of `nElem` f32), reading every thread's CPU at the window's two ends. */
export async function windowWorker(rank: number, nElem: number, torch: Torch): Promise<{ ok: boolean; start: ThreadCpu | null; end: ThreadCpu | null; thread: string }> {
  const { t, ws } = await rankSetUp(rank, nElem, torch);
  const start = rank === 0 ? threadCpu() : null;
  await torch.distributed.allReduce(t, { op: 'sum' });
  const end = rank === ws - 1 ? threadCpu() : null;
  await torch.distributed.barrier();
  const out = await t.numpy();
  return { ok: allEqual(out.data, ws), start, end, thread: threadId() };
}
