// Runs on: any thread. Owns: the closed table of messages that cross threads
// through MessagePorts. Messages are for setup, teardown and errors only
// (DESIGN §3); steady-state traffic is Atomics on SharedArrayBuffers.
import type { MessagePort } from 'node:worker_threads';
import type { SerializedError } from '../errors.js';
import type { LayoutDims } from '../shm/layout.js';
import type { SharedBuffers } from '../shm/shared-state.js';
import type { SessionPlan } from '../config/plan.js';
import type { ThreadTraceData } from '../trace/recorder.js';
import type { RaceLogData } from '../race/log.js';
import type { LinkPieces } from './thread-env.js';

/** main -> executor, on the session's port. */
export type ToExecutor =
  /** `startPs`: main's host clock at the spawn; every rank's host clock starts there. */
  | { type: 'spawn-rank'; rank: number; nprocs: number; module: string; exportName: string; args: unknown[]; barrierBase: number; startPs: number }
  | { type: 'end' };

/** executor -> main. */
export type FromExecutor =
  | { type: 'ready'; executor: number }
  | { type: 'rank-done'; rank: number; value: unknown; clockPs: number }
  | { type: 'rank-failed'; rank: number; error: SerializedError };

/** main -> coordinator. */
/** `timerMs`: the coordinator's pass interval when nothing rings (ThreadResources' coordinatorTimerMs). */
export type ToCoordinator = { type: 'session'; plan: SessionPlan; buffers: SharedBuffers; timerMs?: number } | { type: 'shutdown' };

/** coordinator -> main. */
export type FromCoordinator = { type: 'session-done'; passes: number; deadlock: boolean; unrungGrants: number; linkSnapshotsFailed: number } | { type: 'fatal'; error: SerializedError };

/** What an executor session task is started with (piscina task argument). */
export interface ExecutorInit {
  executor: number;
  plan: SessionPlan;
  dims: LayoutDims;
  buffers: SharedBuffers;
  port: MessagePort;
  /** Collect the young generation when idle after a kernel epoch (./young-gc.ts). */
  epochGc: boolean;
}

/** What an executor session task returns at session end. */
export interface ExecutorReport {
  executor: number;
  messages: number;
  /** How its pieces of shared links were timed. */
  linkPieces: LinkPieces;
  /** Young-generation collections when idle after a kernel epoch. */
  epochGcs: number;
  /** What the thread recorded, when the run is traced. */
  trace: ThreadTraceData | null;
  /** What the thread recorded for the race check (--check-races), else null. */
  races: RaceLogData | null;
}

export function unreachable(x: never): never {
  throw new Error(`unhandled message ${JSON.stringify(x)}`);
}
