// A kernel's arguments are the host's values through JSON, whichever thread the host is
// on (decision 0283): main's launches travel as bytes to an executor; a spawned rank's
// launch onto its own thread's PE is handed over in memory, and must give the same copy
// and the same refusal of arguments too large for a command slot.
import t from 'tap';
import { KernbenchError, SpawnError } from '../lib/errors.js';
import { NOT_PLAIN, commandBytesBound, jsonBytesBound, plainCopy, type LaunchCommand } from '../lib/pe/commands.js';
import { CMD_SLOT_BYTES } from '../lib/shm/layout.js';
import { TestRuntime } from './helpers/run.js';
import { FLAGS, LAUNCH_ARGS, PLAIN_FLAGS, launchPlain, launchPlainRank, launchProbe, launchProbeRank } from './fixtures/launch-args.js';

const rt = new TestRuntime({ modules: [LAUNCH_ARGS] });
t.teardown(() => rt.close());

/** The flags and the string length a launch of probe(bigChars) reports, from main or from a spawned rank (one thread: the rank's PE is its own thread's). */
async function seen(from: 'main' | 'rank', bigChars: number): Promise<number[]> {
  const config = { topology: 'ideal', threads: 1 as const, sets: ['system.sips.count=2'] };
  if (from === 'main') return (await rt.session(config, (torch) => launchProbe(torch, bigChars))).value as number[];
  return ((await rt.session(config, (torch) => torch.multiprocessing.spawn(launchProbeRank, { args: [bigChars], nprocs: 2 }))).value as number[][])[1];
}

for (const from of ['main', 'rank'] as const) {
  t.test(`a launch from ${from} gives the kernel JSON's copy of its argument, as it was at the launch`, async (t) => {
    for (const chars of [10, 15000]) {
      const got = await seen(from, chars);
      FLAGS.forEach((what, i) => t.equal(got[i], 1, `${chars}-character string: ${what}`));
      t.equal(got[FLAGS.length], chars, `the ${chars}-character string arrives whole`);
    }
  });

  t.test(`a launch from ${from} gives the kernel a copy of plain data, as it was at the launch`, async (t) => {
    const config = { topology: 'ideal', threads: 1 as const, sets: ['system.sips.count=2'] };
    const got =
      from === 'main'
        ? ((await rt.session(config, (torch) => launchPlain(torch))).value as number[])
        : ((await rt.session(config, (torch) => torch.multiprocessing.spawn(launchPlainRank, { args: [], nprocs: 2 }))).value as number[][])[1];
    PLAIN_FLAGS.forEach((what, i) => t.equal(got[i], 1, what));
  });

  t.test(`a launch from ${from} whose argument does not fit a command slot is refused`, async (t) => {
    const e = await seen(from, CMD_SLOT_BYTES).catch((x: unknown) => x);
    // A spawned rank's error reaches main inside the spawn's, one a rank.
    const errors = e instanceof SpawnError ? [...e.errors.values()] : [e];
    t.equal(errors.length, from === 'main' ? 1 : 2, 'every launch failed');
    for (const x of errors) t.ok(x instanceof KernbenchError && x.code === 'ERR_LAUNCH_ARGS_TOO_LARGE', `ERR_LAUNCH_ARGS_TOO_LARGE, got ${String(x)}`);
  });
}

t.test("the bound on a command's JSON is never below its length", async (t) => {
  const enc = new TextEncoder();
  const values: unknown[] = [0, -0, -2.2250738585072014e-308, 1e21, -1234567.891, true, null, '', 'ascii', 'é', '€', '😀', '\u0001\n"\\', '\ud800', [1, undefined, 'x'], { a: [{ b: 'c' }], u: undefined }];
  for (const v of values) {
    const json = JSON.stringify(v) ?? '';
    t.ok(jsonBytesBound(v) >= enc.encode(json).length, `${json}: bound ${jsonBytesBound(v)}, ${enc.encode(json).length} bytes`);
  }
  t.equal(jsonBytesBound(new Date(0)), Infinity, 'a class with toJSON: not bounded');
  t.equal(jsonBytesBound(10n), Infinity, 'a bigint: not bounded');
  const cmd = { type: 'launch', pe: 3, seq: 12, ordered: false, host: 3, hostExecutor: 0, kernel: { module: 'file:///k.js', exportName: 'k' }, name: 'késsel', args: [{ s: '€'.repeat(9) }, 2], ports: { size: 4, set: 0, send: [{ pe: 1, dir: 0 }, { code: 'ERR_NO_NEIGHBOUR' }], recv: [], why: { rank: 3, world: 'ring_1d world of 4x1' } }, rank: 3, startPs: 1.5e12, tag: -1 } as unknown as LaunchCommand;
  const whole = enc.encode(JSON.stringify(cmd)).length;
  t.ok(commandBytesBound(cmd, enc.encode(JSON.stringify(cmd.args)).length) >= whole, `a command: bound at least its ${whole} bytes`);
  t.ok(whole + 4 <= CMD_SLOT_BYTES, 'it fits a slot');
});

t.test('plainCopy gives what JSON gives back, as a copy, or says the value is not plain', async (t) => {
  const plain: unknown[] = [0, 1.5, -2e300, 'é€😀', '\u0001\n"\\', true, null, [], {}, [1, [2, { a: 'b' }]], { '2': 1, '1': 2, z: [null], nested: { deep: [true] } }, [{ kind: 'ring', shards: [{ cube: 0, pe: 3 }], dtype: 'f32' }, 'sum', [16384], {}]];
  for (const v of plain) {
    const c = plainCopy(v);
    t.same(c, JSON.parse(JSON.stringify(v)), `${JSON.stringify(v)}: JSON's value`);
    t.equal(JSON.stringify(c), JSON.stringify(v), `${JSON.stringify(v)}: the same text, key order included`);
    if (typeof v === 'object' && v !== null) t.not(c, v, `${JSON.stringify(v)}: a copy, not the value`);
    // postCommand takes the slot's bound from the copy's walk (decision 0289).
    const bound = { bytes: 0 };
    plainCopy(v, bound);
    t.equal(bound.bytes, jsonBytesBound(v), `${JSON.stringify(v)}: the bound made on the way is jsonBytesBound's`);
  }
  const nested = { inner: { x: 1 } };
  t.not((plainCopy(nested) as typeof nested).inner, nested.inner, 'nested objects are copied too');
  const inherited = Object.create({ up: 1 }) as Record<string, unknown>;
  inherited.own = 1;
  const notPlain: [string, unknown][] = [
    ['-0', -0],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['undefined', undefined],
    ['an array holding undefined', [1, undefined]],
    ['an array with a hole', [1, , 3]],
    ['an object holding undefined', { u: undefined }],
    ['a Date', new Date(0)],
    ['a typed array', new Float32Array(2)],
    ['a Map', new Map()],
    ['an object with toJSON', { toJSON: () => 1 }],
    ['a "__proto__" key', JSON.parse('{"__proto__": 1}')],
    ['an object of another prototype', inherited],
    ['a bigint', 1n],
  ];
  for (const [what, v] of notPlain) t.equal(plainCopy(v), NOT_PLAIN, `${what}: not plain`);
});
