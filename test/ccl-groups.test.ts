// Runs on: main thread (tap). Covers: process groups made by newGroup run
// their collectives on channels of their own (issue 13.5;
// docs/decisions/0020-a-channel-set-per-process-group.md). A subgroup's
// all-reduce used to share IPCQ rings with the world's: ranks that moved on to
// the next world collective while a subgroup all-reduced met its messages
// (ERR_IPCQ_WIRING) or hung. Each scenario runs in a child process with a
// guard timeout, so a hang fails the assertion instead of stalling the file;
// the public API only (test/fixtures/groups.ts, groups-run.ts).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import t, { type Test } from 'tap';
import { expectedSums } from './fixtures/groups.js';

const RUNNER = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'groups-run.js');

type Plan = { group: number | null; k: number }[][];
interface Scenario {
  ws: number;
  threads: 'rank' | 'pe' | number;
  sets?: string[];
  groups: number[][];
  plan: Plan;
}
interface Outcome {
  timedOut: boolean;
  exitCode: number | undefined;
  value?: { k: number; values: number[] }[][];
  digest?: string;
  error?: { code: string; ranks: Record<string, string>; message: string };
}

async function run(s: Scenario): Promise<Outcome> {
  const r = await execa('node', [RUNNER, JSON.stringify(s)], { reject: false, timeout: 20_000 });
  const line = String(r.stdout).trim().split('\n').pop() ?? '';
  let parsed: Partial<Outcome> = {};
  try {
    parsed = JSON.parse(line) as Partial<Outcome>;
  } catch {
    parsed = { error: { code: 'NO_OUTPUT', ranks: {}, message: `${String(r.stdout)}\n${String(r.stderr)}` } };
  }
  return { ...parsed, timedOut: r.timedOut === true, exitCode: r.exitCode };
}

const LAYOUTS = [1, 'rank', 'pe'] as const;

/** Run `s` under every thread layout: each must give the expected sums, and all the same digest. */
async function worksEverywhere(t: Test, s: Omit<Scenario, 'threads'>): Promise<void> {
  const expected = expectedSums(s.ws, s.groups, s.plan);
  const seen = [];
  const digests = new Set<string>();
  for (const threads of LAYOUTS) {
    const o = await run({ ...s, threads });
    seen.push({ threads, timedOut: o.timedOut, exitCode: o.exitCode, error: o.error?.message, right: JSON.stringify(o.value) === JSON.stringify(expected) });
    if (o.digest) digests.add(o.digest);
  }
  t.same(
    seen,
    LAYOUTS.map((threads) => ({ threads, timedOut: false, exitCode: 0, error: undefined, right: true })),
  );
  t.equal(digests.size, 1, 'one digest across --threads 1, rank and pe');
}

// Ranks 0 and 1 all-reduce on newGroup([0, 1]) while ranks 2 and 3 go straight to
// the world all-reduce (#1); then everyone all-reduces on the world again (#2).
const SUBGROUP_THEN_WORLD: Omit<Scenario, 'threads'> = {
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
// overlaps both, all-reduces.
const OVERLAPPING: Omit<Scenario, 'threads'> = {
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

t.test('a subgroup all-reduce beside a world all-reduce on the other ranks gives every sum, the same under every thread layout', async (t) => {
  await worksEverywhere(t, SUBGROUP_THEN_WORLD);
});

t.test('collectives on overlapping groups and the world, issued at once, give every sum, the same under every thread layout', async (t) => {
  await worksEverywhere(t, OVERLAPPING);
});

t.test('a group that needs more channel sets than ccl.channel_sets is refused with ERR_INVALID_ARG, not a hang', async (t) => {
  const o = await run({ ...OVERLAPPING, threads: 1, sets: ['ccl.channel_sets=2'] });
  t.same(
    { timedOut: o.timedOut, exitCode: o.exitCode, code: o.error?.code, ranks: o.error?.ranks },
    { timedOut: false, exitCode: 1, code: 'ERR_SPAWN', ranks: { 1: 'ERR_INVALID_ARG', 2: 'ERR_INVALID_ARG' } },
  );
});
