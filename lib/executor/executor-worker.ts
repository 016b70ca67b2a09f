// Runs on: an executor thread. The piscina task entry: one call is one
// executor's share of one session (see ./executor.ts).
import { runExecutor } from './executor.js';
import type { ExecutorInit, ExecutorReport } from '../sync/messages.js';

export default function executorTask(init: ExecutorInit): Promise<ExecutorReport> {
  return runExecutor(init);
}
