// Runs on: main thread (tap). Shared plumbing for the CLI tests: run a kernbench
// command line — in this process through bin/cli.ts's answerCli (the same code the
// binary runs, without a node start-up per case), or through bin/kernbench.js as
// a user does where the process boundary is what is tested — and the shape every
// usage error must have (exit 2, one message, no stack, its code).
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';
import type { Test } from 'tap';
import type { UsageErrorCode } from '../../lib/errors.js';
import type { ThreadResources } from '../../lib/session/thread-resources.js';

// tap runs each test file with NODE_OPTIONS=--import @tapjs/processinfo (process
// tracking for coverage, which is off here). Every `node` these tests start would
// load it too, which nearly doubles a short CLI run's CPU time (measured on the
// packaging tests: 43 s -> 25 s without it). A user's shell does not have it, so
// the processes started from a test file that uses these helpers do not either.
delete process.env.NODE_OPTIONS;

// The tests run compiled, from dist/test/: the project root is two levels up from dist/test/helpers/.
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'kernbench.js');

/**
 * A user's project in a temporary folder, removed when `t` ends: its own package.json
 * (ES modules: tsx compiles .ts as ESM) and kernbench installed as a dependency (a
 * link to this checkout, as `npm link` makes). Returns the folder.
 */
export function userProject(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `kernbench-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module' }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'kernbench'), 'dir');
  return dir;
}

export interface Run {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  /** The run was stopped by its guard timeout (a hang, not an answer). */
  timedOut: boolean;
  /**
   * The code of the error the run ended with; undefined when it ended without one,
   * or ran as a process (an exit-2 message does not print its code).
   */
  errorCode: string | undefined;
}

export interface RunOptions {
  /** The working directory of the run (default: the project root). */
  cwd?: string;
  /** Environment variables set for the run (KERNBENCH_JITTER, ...). */
  env?: Record<string, string>;
}

/** A hang becomes a failed assertion instead of a stuck test file. */
const GUARD_MS = 60_000;

// --- In-process runs -------------------------------------------------------
// runCli writes to process.stdout and process.stderr, as the binary does. While
// a run is in flight, its writes go to that run's capture, found through the
// async context the run started in; tap's own output, written from the tests'
// context, passes through untouched, and so does anything written in a finished
// run's context (a worker thread's late output). stderr reads as not a TTY during
// a run, as it is for a process whose output is piped (no progress lines).
//
// The runs share the process's threads (executor pool, coordinator: ./threads.ts)
// with every other file of the group, as a sweep's points do: starting them is
// most of a small run's cost (32 executors for --threads pe: about 10 s of CPU),
// the simulation a fraction of a second. A fresh set replaces them after a run
// that did not answer.

interface Capture {
  stdout: string;
  stderr: string;
  open: boolean;
}

const capture = new AsyncLocalStorage<Capture>();

function divert(stream: NodeJS.WriteStream, key: 'stdout' | 'stderr'): void {
  const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
  stream.write = function divertedWrite(chunk: unknown, ...rest: unknown[]): boolean {
    const c = capture.getStore();
    if (c === undefined || !c.open) return write(chunk, ...rest);
    const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8';
    c[key] += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(encoding);
    const done = rest.find((x) => typeof x === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  } as typeof stream.write;
  const isTTY = stream.isTTY;
  Object.defineProperty(stream, 'isTTY', { configurable: true, get: () => (capture.getStore()?.open === true ? false : isTTY) });
}
divert(process.stdout, 'stdout');
divert(process.stderr, 'stderr');

// One in-process run at a time (the shared threads' queue): the working directory
// and the environment are the process's, so a run that sets them must not overlap
// another, nor a run of TestRuntime's on the same threads.

/**
 * Run `kernbench ...args` in this process (from the project root unless `opts.cwd`)
 * and return what the binary would have exited with and printed; never throws on
 * a failing run.
 */
export async function kernbench(args: string[], opts: RunOptions = {}): Promise<Run> {
  // Loaded on the first run: files that import this helper only for ROOT or for the
  // NODE_OPTIONS line above do not load the CLI and the library.
  const { exclusive, sharedThreads, dropSharedThreads } = await import('./threads.js');
  return exclusive(() => inProcess(args, opts, sharedThreads, dropSharedThreads));
}

async function inProcess(args: string[], opts: RunOptions, sharedThreads: () => ThreadResources, drop: (r: ThreadResources) => void): Promise<Run> {
  const { answerCli } = await import('../../bin/cli.js');
  const cwd = process.cwd();
  const saved = Object.keys(opts.env ?? {}).map((k) => [k, process.env[k]] as const);
  process.chdir(opts.cwd ?? ROOT);
  Object.assign(process.env, opts.env);
  const out: Capture = { stdout: '', stderr: '', open: true };
  const shared = sharedThreads();
  let timer: NodeJS.Timeout | undefined;
  try {
    const guard = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), GUARD_MS)));
    const answer = await Promise.race([capture.run(out, () => answerCli(args, shared)), guard]);
    if (answer === 'timeout') {
      drop(shared);
      return { exitCode: undefined, stdout: out.stdout, stderr: out.stderr, timedOut: true, errorCode: undefined };
    }
    const code = (answer.error as { code?: unknown } | undefined)?.code;
    return { exitCode: answer.status, stdout: out.stdout, stderr: out.stderr, timedOut: false, errorCode: typeof code === 'string' ? code : undefined };
  } finally {
    out.open = false;
    clearTimeout(timer);
    process.chdir(cwd);
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

// --- Out-of-process runs ---------------------------------------------------

/**
 * Run `node [nodeFlags] bin/kernbench.js ...args` as a user does (from the project
 * root unless `opts.cwd`); never throws on a non-zero exit. For what only the real
 * process shows: its exit code, node's own flags, the environment it starts with.
 */
export async function kernbenchProcess(args: string[], opts: Options & { nodeFlags?: string[] } = {}): Promise<Run> {
  const { nodeFlags = [], ...rest } = opts;
  const r = await execa('node', [...nodeFlags, BIN, ...args], { reject: false, cwd: ROOT, stripFinalNewline: false, timeout: GUARD_MS, ...rest });
  // A process that never ran or never exited (a spawn refused: ENOMEM forking a large test process,
  // once in CI) has no exit code: its stderr then says why, so that the failing assertion shows it.
  const stderr = r.exitCode === undefined ? `${r.stderr ?? ''}(no exit code: ${r.shortMessage})` : String(r.stderr);
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr, timedOut: r.timedOut === true, errorCode: undefined };
}

/**
 * A usage error as a process shows it: exit 2, nothing on stdout, one
 * `kernbench:` message, no stack trace, no raw control bytes. For runs through the
 * binary, whose exit-2 message does not print the code; in-process runs use
 * assertUsageError, which checks the code as well.
 */
export function assertUsageExit(t: Test, r: Run): void {
  t.equal(r.timedOut, false, 'answers instead of hanging');
  t.equal(r.exitCode, 2, 'exits 2');
  t.equal(r.stdout, '', 'prints nothing on stdout');
  t.match(r.stderr, /^kernbench: /, 'stderr starts with kernbench:');
  t.notMatch(r.stderr, '    at ', 'stderr has no stack trace');
  t.notMatch(r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f]/, 'stderr has no control characters but newlines');
}

/** A usage error of an in-process run (kernbench()): the shape assertUsageExit checks, and its code. */
export function assertUsageError(t: Test, r: Run, code: UsageErrorCode): void {
  assertUsageExit(t, r);
  t.equal(r.errorCode, code, `the error's code is ${code}`);
}
