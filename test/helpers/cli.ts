// Runs on: main thread (tap). Shared plumbing for the CLI tests: run
// bin/kernbench.js through execa as a user does, and the shape every usage or
// configuration error must have (exit 2, one message, no stack).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';
import type { Test } from 'tap';

// tap runs each test file with NODE_OPTIONS=--import @tapjs/processinfo (process
// tracking for coverage, which is off here). Every `node` these tests start would
// load it too, which nearly doubles a short CLI run's CPU time (measured on the
// packaging tests: 43 s -> 25 s without it). A user's shell does not have it, so
// the processes started from a test file that uses these helpers do not either.
delete process.env.NODE_OPTIONS;

// The tests run compiled, from dist/test/: the project root is two levels up from dist/test/helpers/.
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'kernbench.js');

export interface Run {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  /** The run was killed by its guard timeout (a hang, not an answer). */
  timedOut: boolean;
}

/**
 * Run `kernbench ...args` (from the project root unless `opts.cwd`); never throws on a
 * non-zero exit. A guard timeout (60 s) turns a hang into a failed assertion instead
 * of a stuck test file.
 */
export async function kernbench(args: string[], opts: Options = {}): Promise<Run> {
  const r = await execa('node', [BIN, ...args], { reject: false, cwd: ROOT, stripFinalNewline: false, timeout: 60_000, ...opts });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), timedOut: r.timedOut === true };
}

/** A usage or configuration error: exit 2, nothing on stdout, one `kernbench:` message, no stack trace, no raw control bytes. */
export function assertUsageError(t: Test, r: Run): void {
  t.equal(r.timedOut, false, 'answers instead of hanging');
  t.equal(r.exitCode, 2, 'exits 2');
  t.equal(r.stdout, '', 'prints nothing on stdout');
  t.match(r.stderr, /^kernbench: /, 'stderr starts with kernbench:');
  t.notMatch(r.stderr, '    at ', 'stderr has no stack trace');
  t.notMatch(r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f]/, 'stderr has no control characters but newlines');
}
