// Runs on: main thread (tap). Covers: "exits 2" is a property of a code's entry
// in the registry (lib/errors.ts USAGE_ERROR_CODES), which the CLI asks of the
// error (decision 0085): every registered code, fresh and rebuilt after crossing a
// thread, exits as its entry says; the codes that replaced ERR_USAGE,
// ERR_MODULE_LOAD and ERR_MODULE_CONTRACT (and ERR_CONFIG's other conditions)
// all still exit 2; and command lines that meet several of them exit 2 with
// their code, in-process.
import { join } from 'node:path';
import t from 'tap';
import { exitStatusOf } from '../bin/cli.js';
import { ConfigError, ERROR_CODES, KernbenchError, reviveError, serializeError, USAGE_ERROR_CODES, type ErrorCode, type UsageErrorCode } from '../lib/errors.js';
import { assertUsageError, kernbench } from './helpers/cli.js';

/**
 * What each broad code of the old CLI was split into (decision 0085). Every
 * condition of a broad code exited 2, so every code it was split into must too.
 */
const SPLIT: Record<'ERR_USAGE' | 'ERR_CONFIG' | 'ERR_MODULE_LOAD' | 'ERR_MODULE_CONTRACT', UsageErrorCode[]> = {
  ERR_USAGE: [
    'ERR_UNKNOWN_COMMAND',
    'ERR_UNKNOWN_FLAG',
    'ERR_UNEXPECTED_ARGUMENT',
    'ERR_MISSING_ARGUMENT',
    'ERR_INVALID_FLAG_VALUE',
    'ERR_INVALID_THREADS',
    'ERR_INVALID_SET',
    'ERR_CONFLICTING_FLAGS',
    'ERR_INVALID_SWEEP',
    'ERR_UNKNOWN_BENCH',
    'ERR_INVALID_BENCH_OPTION',
    'ERR_BENCH_OPTION_UNFIT',
    'ERR_BENCH_TOPOLOGY',
    'ERR_BENCH_TOO_LARGE',
    'ERR_OPTIONAL_DEPENDENCY',
    'ERR_EXTERNAL_PROGRAM',
    'ERR_UNREADABLE_INPUT',
    'ERR_UNWRITABLE_OUTPUT',
    'ERR_MERGE_INPUT',
    'ERR_MERGE_SHARDS',
  ],
  ERR_CONFIG: ['ERR_CONFIG', 'ERR_CONFIG_TOO_LARGE', 'ERR_WRONG_ALGORITHM', 'ERR_CCL_ARRANGEMENT', 'ERR_UNKNOWN_TOPOLOGY_KIND', 'ERR_INVALID_SIPS'],
  ERR_MODULE_LOAD: ['ERR_MODULE_MISSING', 'ERR_MODULE_FORMAT', 'ERR_MODULE_SYNTAX', 'ERR_MODULE_THREW'],
  ERR_MODULE_CONTRACT: ['ERR_MODULE_EXPORT', 'ERR_MODULE_DEFINITION', 'ERR_BENCH_TABLE_MISSING'],
};

/** The other codes bin/cli.ts listed for exit 2 before the split. */
const EXITED_2_BEFORE: UsageErrorCode[] = ['ERR_UNKNOWN_TOPOLOGY', 'ERR_NO_TABLE', 'ERR_OPTIONAL_DEPENDENCY', 'ERR_REPORT_INPUT'];

const rebuilt = (e: Error): Error => reviveError(serializeError(e));

t.test('the CLI exits 2 for exactly the usage codes and 1 for every other, asking the error (also one rebuilt after crossing a thread)', async (t) => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];
  const status = (e: Error): string => `${(e as KernbenchError).code}: ${exitStatusOf(e)}`;
  const expected = codes.map((c) => `${c}: ${Object.hasOwn(USAGE_ERROR_CODES, c) ? 2 : 1}`);
  t.same(codes.map((c) => status(new KernbenchError(c, 'm'))), expected, 'fresh');
  t.same(codes.map((c) => status(rebuilt(new KernbenchError(c, 'm')))), expected, 'rebuilt');
  t.equal(exitStatusOf(rebuilt(new ConfigError('ERR_CONFIG', [{ file: 'f.yaml', path: 'a', message: 'm' }]))), 2, 'a rebuilt ConfigError');
  t.equal(exitStatusOf(new Error('plain')), 1, "an error that is not kernbench's");
});

t.test('every code the four broad ones were split into, and every other code that exited 2 before, still exits 2', async (t) => {
  const still = [...Object.values(SPLIT).flat(), ...EXITED_2_BEFORE];
  t.same(
    still.filter((c) => exitStatusOf(new KernbenchError(c, 'm')) !== 2),
    [],
  );
  t.same(
    ['ERR_USAGE', 'ERR_MODULE_LOAD', 'ERR_MODULE_CONTRACT'].filter((c) => c in ERROR_CODES),
    [],
    'the broad codes that named several conditions are gone (ERR_CONFIG stays: it now names one)',
  );
});

/** Command lines that meet a usage condition, each refused before any thread starts. */
const SAMPLES: { args: string[]; code: UsageErrorCode }[] = [
  { args: ['bench'], code: 'ERR_UNKNOWN_COMMAND' },
  { args: ['help', 'nope'], code: 'ERR_UNKNOWN_COMMAND' },
  { args: ['list', 'extra'], code: 'ERR_UNEXPECTED_ARGUMENT' },
  { args: ['run'], code: 'ERR_MISSING_ARGUMENT' },
  { args: ['report'], code: 'ERR_MISSING_ARGUMENT' },
  { args: ['run', '--bench', 'ccl_allreduce', '--topology'], code: 'ERR_INVALID_FLAG_VALUE' },
  { args: ['run', '--bench', 'ccl_allreduce', '--set', 'system.sips.count'], code: 'ERR_INVALID_SET' },
  { args: ['run', '--bench', 'ccl_allreduce', '--algorithm', 'ring_allreduce', '--set', 'ccl.algorithm=mesh_allreduce'], code: 'ERR_CONFLICTING_FLAGS' },
  { args: ['run', '--bench', 'nope'], code: 'ERR_UNKNOWN_BENCH' },
  { args: ['run', '--bench', './no-such-bench.ts'], code: 'ERR_MODULE_MISSING' },
  { args: ['run', '--bench', './package.json'], code: 'ERR_MODULE_FORMAT' },
  { args: ['merge', join('no-such-folder', 'shard.csv')], code: 'ERR_UNREADABLE_INPUT' },
  { args: ['sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem=8,16', '--shard', '0/2'], code: 'ERR_INVALID_SWEEP' },
];

for (const s of SAMPLES) {
  t.test(`kernbench ${s.args.join(' ')} exits 2 with ${s.code}`, async (t) => {
    assertUsageError(t, await kernbench(s.args), s.code);
  });
}
