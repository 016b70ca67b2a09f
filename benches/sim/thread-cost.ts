// Runs on: main of its own process (`node dist/benches/sim/thread-cost.js N [bare|executor|FILE]`),
// and the N Workers it starts. Owns: what one thread costs to start, counted
// rather than timed — N threads that each import the executor's entry point
// (lib/executor/executor-worker.ts, what every executor of a session loads) or
// nothing (a bare Worker), or a module FILE (say, the entry point bundled into one
// file, decision 0244), all kept alive, then the process's CPU and resident
// memory growth over N. Under --threads rank a run pays this once a rank
// (decision 0130, docs/benchmarks.md "What a thread costs to start").
//
// Prints one JSON line: n, what each thread loaded, the CPU ms a thread and the
// RSS MiB a thread (after a full GC on main, so main's garbage is not counted).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { threadEnv, threadExecArgv } from '../../lib/session/thread-flags.js';

const ENTRY = new URL('../../lib/executor/executor-worker.js', import.meta.url).href;

export interface ThreadCost {
  n: number;
  /** 'bare', 'executor', or the module file each thread imported. */
  loads: string;
  cpuMsPerThread: number;
  rssMiBPerThread: number;
}

/** Start n threads that each load `loads` ('bare': nothing; 'executor': its entry point; else a module file), keep them alive, and count what they cost. */
export async function threadCost(n: number, loads: string): Promise<ThreadCost> {
  const entry = loads === 'executor' ? ENTRY : loads === 'bare' ? null : pathToFileURL(resolve(loads)).href;
  // A pending timer keeps each thread alive until it is terminated, so its memory is still held when it is read.
  const body = entry !== null ? `import(${JSON.stringify(entry)}).then(ready, (e) => parentPort.postMessage({ failed: String(e) }))` : 'ready()';
  const code = `const { parentPort } = require('node:worker_threads'); setInterval(() => undefined, 1 << 30); const ready = () => parentPort.postMessage('ready'); ${body};`;
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: n }, () => {
        const w = new Worker(code, { eval: true, execArgv: threadExecArgv(), env: threadEnv() });
        workers.push(w);
        return new Promise<void>((resolve, reject) => {
          w.once('error', reject);
          w.once('message', (m: unknown) => (m === 'ready' ? resolve() : reject(new Error(`a thread could not load ${entry}: ${JSON.stringify(m)}`))));
        });
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    (globalThis as { gc?: () => void }).gc?.();
    return { n, loads, cpuMsPerThread: Math.round((cpu.user + cpu.system) / 1000 / n), rssMiBPerThread: Math.round(((process.memoryUsage().rss - rss0) / 2 ** 20 / n) * 100) / 100 };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 32);
  const loads = process.argv[3] ?? 'executor';
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`usage: thread-cost.js N [bare|executor|FILE] (N >= 1), got ${process.argv.slice(2).join(' ')}`);
  process.stdout.write(`${JSON.stringify(await threadCost(n, loads))}\n`);
}

if (process.argv[1] !== undefined && new URL(import.meta.url).pathname === process.argv[1]) await main();
