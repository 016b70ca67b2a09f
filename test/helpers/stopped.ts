// Runs on: main thread (tap). Shared by the test files of runs that are stopped before
// they end (test/watchdog-*.test.ts; decision 0095): the stuck fixtures' paths, the
// JSON line a stopped `run --json` prints, and the check that a report names a running kernel.
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import type { ActorStateReport } from '../../lib/errors.js';

export const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));
export const KERNELS = fixture('stuck-kernels');
export const KERNELS_URL = new URL('../fixtures/stuck-kernels.js', import.meta.url).href;
export const PE0 = { sip: 0, cube: 0, pe: 0 };

interface StoppedJson {
  error: { name: string; code: string; summary: string[]; actors: ActorStateReport[] };
}

/** The JSON line a stopped `run --json` prints last on stdout. */
export function stoppedJson(stdout: string): StoppedJson['error'] {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return (JSON.parse(last) as StoppedJson).error;
}

export function assertKernelRunning(t: Test, actors: ActorStateReport[], kernel: string): ActorStateReport | undefined {
  const k = actors.find((a) => a.kernel === kernel && a.who.endsWith('kernel'));
  t.ok(k, `an actor runs kernel '${kernel}': ${JSON.stringify(actors)}`);
  t.equal(k?.state, 'running');
  t.same(k?.pe, PE0, 'on the PE rank 0 launched it on');
  return k;
}

