// Runs on: main thread (tap). Covers: decision 0238, TurboFan's threshold while a session
// runs on many executor threads: the factor, the flag and its default for this node, and
// that each pool request sets it (a spy on v8.setFlagsFromString, V8's flags being
// process-wide: the effect itself is measured in benches, docs/benchmarks.md).
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import v8 from 'node:v8';
import t from 'tap';
import { setTiering, tieringFactor, tieringFlag } from '../lib/session/thread-flags.js';
import { ThreadResources } from '../lib/session/thread-resources.js';

t.test('the factor is one step for every 8 executors a core, from 1 to 16', async (t) => {
  t.equal(tieringFactor(1, 2), 1);
  t.equal(tieringFactor(2, 2), 1);
  t.equal(tieringFactor(16, 2), 1, "bench barrier_throughput's largest size keeps V8's default");
  t.equal(tieringFactor(31, 2), 1);
  t.equal(tieringFactor(32, 2), 2);
  t.equal(tieringFactor(64, 2), 4);
  t.equal(tieringFactor(256, 2), 16);
  t.equal(tieringFactor(4096, 2), 16);
  t.equal(tieringFactor(64, 64), 1);
  t.equal(tieringFactor(40, 0), 5, 'no core count: one');
});

t.test("the flag's default is this node's (node --v8-options)", async (t) => {
  const flag = tieringFlag();
  t.ok(flag, `V8 ${process.versions.v8} is in the table`);
  if (!flag) return;
  const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
  const m = new RegExp(`default: ${flag.name}=(\\d+)`).exec(options);
  t.ok(m, `${flag.name} is a flag of this V8`);
  t.equal(Number(m?.[1]), flag.base);
  t.same(tieringFlag('11.3.244.8-node.38'), { name: '--interrupt-budget', base: 67584 });
  t.same(tieringFlag('12.4.254.21-node.33'), { name: '--invocation-count-for-turbofan', base: 3000 });
  t.equal(tieringFlag('14.0.1'), undefined, 'an unknown V8 keeps its own tiering');
});

/** Flags V8 was given while `body` ran. */
async function flagsSetDuring(body: () => Promise<void> | void): Promise<string[]> {
  const real = v8.setFlagsFromString;
  const seen: string[] = [];
  v8.setFlagsFromString = (flags: string) => {
    seen.push(flags);
    real(flags);
  };
  try {
    await body();
  } finally {
    v8.setFlagsFromString = real;
  }
  return seen;
}

t.test('setTiering sets the scaled value once, and the default back', async (t) => {
  const { name, base } = tieringFlag()!;
  t.same(await flagsSetDuring(() => setTiering(256, 2)), [`${name}=${base * 16}`]);
  t.same(await flagsSetDuring(() => setTiering(256, 2)), [], 'unchanged: not set again');
  t.same(await flagsSetDuring(() => setTiering(2, 2)), [`${name}=${base}`]);
});

t.test("each session's pool request sets the threshold for its executors", async (t) => {
  const { name, base } = tieringFlag()!;
  setTiering(1024, 1); // far from what a pool of 4 gives, so the request must set it
  const resources = new ThreadResources({ epochGc: false });
  t.teardown(() => resources.close());
  const seen = await flagsSetDuring(() => void resources.executorPool(4));
  t.ok(seen.includes(`${name}=${base * tieringFactor(4, availableParallelism())}`), seen.join(' '));
  t.equal(tieringFactor(4, availableParallelism()), 1, 'four executors keep the default on any machine');
  setTiering(1024, 1);
  const again = await flagsSetDuring(() => void resources.executorPool(1));
  t.ok(again.includes(`${name}=${base}`), `a session of one executor on the same pool gets the default: ${again.join(' ')}`);
});

t.test("a value on node's command line wins, in either spelling; another flag does not count", async (t) => {
  const { name } = tieringFlag()!;
  const probe = `import v8 from 'node:v8'; const { setTiering } = await import(${JSON.stringify(new URL('../lib/session/thread-flags.js', import.meta.url).href)}); const seen = []; const real = v8.setFlagsFromString; v8.setFlagsFromString = (f) => { seen.push(f); real(f); }; setTiering(256, 2); console.log(JSON.stringify(seen));`;
  const run = (flag: string): string[] => JSON.parse(execFileSync(process.execPath, [flag, '--input-type=module', '-e', probe], { encoding: 'utf8' })) as string[];
  t.same(run(`${name}=1000`), [], 'dashes');
  t.same(run(`--${name.slice(2).replace(/-/g, '_')}=1000`), [], 'underscores');
  // V8 11 has a longer flag of the same stem; V8 12 and 13 another flag of the same family.
  const other = name === '--interrupt-budget' ? '--interrupt-budget-for-feedback-allocation=940' : '--invocation-count-for-osr=800';
  t.equal(run(other).length, 1, `${other}: the threshold is still set`);
});
