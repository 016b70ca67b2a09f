// Runs on: main. Owns: the main-thread handle of one ipcq_throughput worker
// thread (./ipcq-worker.ts) — starting it, sending it a command, and awaiting
// its replies in order. A worker failure rejects the pending reply with the
// worker's error, revived with its class and code.
import { Worker, type TransferListItem } from 'node:worker_threads';
import { reviveError } from '../../lib/errors.js';
import { threadExecArgv } from '../../lib/session/thread-flags.js';
import type { FromBenchWorker, ToBenchWorker } from './messages.js';

type Reply = Exclude<FromBenchWorker, { type: 'failed' }>;

export class BenchWorker {
  private readonly worker: Worker;
  private readonly inbox: Reply[] = [];
  private readonly waiters: { resolve: (m: Reply) => void; reject: (e: Error) => void }[] = [];
  private broken: Error | undefined;

  constructor(readonly name: string) {
    this.worker = new Worker(new URL('./ipcq-worker.js', import.meta.url), { name, execArgv: threadExecArgv() });
    this.worker.on('message', (m: FromBenchWorker) => {
      if (m.type === 'failed') this.break(reviveError(m.error));
      else {
        const w = this.waiters.shift();
        if (w) w.resolve(m);
        else this.inbox.push(m);
      }
    });
    this.worker.on('error', (e) => this.break(e));
    this.worker.on('exit', (code) => this.break(new Error(`ipcq bench worker ${name} exited, got exit code ${code}`)));
  }

  send(m: ToBenchWorker, transfer: TransferListItem[] = []): void {
    this.worker.postMessage(m, transfer);
  }

  /** The next reply of the given type (replies arrive in command order). */
  async next<T extends Reply['type']>(type: T): Promise<Extract<Reply, { type: T }>> {
    const m = this.inbox.shift() ?? (await this.receive());
    if (m.type !== type) throw new Error(`ipcq bench worker ${this.name}: expected a '${type}' reply, got '${m.type}'`);
    return m as Extract<Reply, { type: T }>;
  }

  async terminate(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private receive(): Promise<Reply> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private break(e: Error): void {
    this.broken ??= e;
    for (const w of this.waiters.splice(0)) w.reject(e);
  }
}
