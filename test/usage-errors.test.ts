// Runs on: main thread (tap). Covers: "exits 2" is a property of a code's entry
// in the registry (lib/errors.ts USAGE_ERROR_CODES), which the CLI asks of the
// error: every registered code, fresh and rebuilt after crossing a thread, exits
// as its entry says.
import t from 'tap';
import { exitStatusOf } from '../bin/cli.js';
import { ConfigError, ERROR_CODES, KernbenchError, reviveError, serializeError, USAGE_ERROR_CODES, type ErrorCode } from '../lib/errors.js';

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
