// Runs on: main thread (tap). Covers: process groups made by newGroup run
// their collectives on channels of their own (issue 13.5;
// docs/decisions/0020-a-channel-set-per-process-group.md). A subgroup's
// all-reduce used to share IPCQ rings with the world's: ranks that moved on to
// the next world collective while a subgroup all-reduced met its messages
// (ERR_IPCQ_WIRING) or hung. The scenarios run in one child process with a
// guard timeout, so a hang fails the assertions instead of stalling the file;
// the public API only (test/fixtures/groups.ts, groups-run.ts). Layouts: the
// reference (--threads 1) and one thread per rank, which on the ideal
// topology (one PE per SIP) is also one thread per PE.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import './helpers/cli.js'; // the node processes started here run without tap's NODE_OPTIONS hooks
import t, { type Test } from 'tap';
import { expectedSums } from './fixtures/groups.js';

const RUNNER = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'groups-run.js');

type Plan = { group: number | null; k: number }[][];
interface Scenario {
  ws: number;
  sets?: string[];
  groups: number[][];
  plan: Plan;
}
type Threads = 1 | 'rank';
interface Outcome {
  value?: { k: number; values: number[] }[][];
  digest?: string;
  error?: { code: string; ranks: Record<string, string>; message: string };
}

/** Run `scenarios` in turn in one child process: one outcome each (a missing one: the child hung or died before it). */
async function runAll(scenarios: (Scenario & { threads: Threads })[]): Promise<Outcome[]> {
  const r = await execa('node', [RUNNER, JSON.stringify(scenarios)], { reject: false, timeout: 90_000 });
  const lines = String(r.stdout).split('\n').filter((l) => l.startsWith('{'));
  const why = r.timedOut ? 'hung (guard timeout)' : `exited ${r.exitCode}: ${String(r.stderr).slice(0, 500)}`;
  return scenarios.map((_, i) => (i < lines.length ? (JSON.parse(lines[i]) as Outcome) : { error: { code: 'NO_ANSWER', ranks: {}, message: why } }));
}

// Ranks 0 and 1 all-reduce on newGroup([0, 1]) while ranks 2 and 3 go straight to
// the world all-reduce (#1); then everyone all-reduces on the world again (#2).
const SUBGROUP_THEN_WORLD: Scenario = {
  ws: 4,
  groups: [[0, 1]],
  plan: [
    [{ group: 0, k: 0 }, { group: null, k: 1 }, { group: null, k: 2 }],
    [{ group: 0, k: 0 }, { group: null, k: 1 }, { group: null, k: 2 }],
    [{ group: null, k: 1 }, { group: null, k: 2 }],
    [{ group: null, k: 1 }, { group: null, k: 2 }],
  ],
};

// Overlap: [0, 1] all-reduce while [2, 3] run the world's first; [2, 3] then run
// their own group while [0, 1] run the world's; finally [1, 2], a group that
// overlaps both, all-reduces. Every collective is issued with asyncOp at once.
const OVERLAPPING: Scenario = {
  ws: 4,
  groups: [
    [0, 1],
    [2, 3],
    [1, 2],
  ],
  plan: [
    [{ group: 0, k: 0 }, { group: null, k: 1 }],
    [{ group: 0, k: 0 }, { group: null, k: 1 }, { group: 2, k: 3 }],
    [{ group: null, k: 1 }, { group: 1, k: 2 }, { group: 2, k: 3 }],
    [{ group: null, k: 1 }, { group: 1, k: 2 }],
  ],
};

// OVERLAPPING's [1, 2] needs channel set 2 ([0, 1] and [2, 3] share set 1): 2 sets are too few.
const TOO_FEW_SETS: Scenario = { ...OVERLAPPING, sets: ['ccl.channel_sets=2'] };

const LAYOUTS: Threads[] = [1, 'rank'];
const CHECKED = [SUBGROUP_THEN_WORLD, OVERLAPPING];
const outcomes = await runAll([...LAYOUTS.flatMap((threads) => CHECKED.map((s) => ({ ...s, threads }))), { ...TOO_FEW_SETS, threads: 1 }]);

/** Scenario `i` of CHECKED under every layout: the expected sums each time, and one digest. */
function checkEverywhere(t: Test, i: number): void {
  const s = CHECKED[i];
  const expected = JSON.stringify(expectedSums(s.ws, s.groups, s.plan));
  const got = LAYOUTS.map((_, l) => outcomes[l * CHECKED.length + i]);
  t.same(
    got.map((o, l) => ({ threads: LAYOUTS[l], error: o.error?.message, right: JSON.stringify(o.value) === expected })),
    LAYOUTS.map((threads) => ({ threads, error: undefined, right: true })),
  );
  const digests = got.map((o) => o.digest);
  t.ok(digests[0] !== undefined && digests.every((d) => d === digests[0]), 'one digest across --threads 1 and rank');
}

t.test('a subgroup all-reduce beside a world all-reduce on the other ranks gives every sum, the same under every thread layout', async (t) => {
  checkEverywhere(t, 0);
});

t.test('collectives on overlapping groups and the world, issued at once, give every sum, the same under every thread layout', async (t) => {
  checkEverywhere(t, 1);
});

t.test('a group that needs more channel sets than ccl.channel_sets is refused with ERR_CHANNEL_SETS_EXHAUSTED on its members, not a hang', async (t) => {
  const o = outcomes[LAYOUTS.length * CHECKED.length];
  t.same({ code: o?.error?.code, ranks: o?.error?.ranks }, { code: 'ERR_SPAWN', ranks: { 1: 'ERR_CHANNEL_SETS_EXHAUSTED', 2: 'ERR_CHANNEL_SETS_EXHAUSTED' } });
});
