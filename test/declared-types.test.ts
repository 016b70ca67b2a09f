// Runs on: main thread (tap). Covers: the declared types a package user sees hide
// tl's internals (stripInternal, members marked @internal): a kernel author's
// editor offers tl's operations, not the runtime's bookkeeping.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/cli.js';

t.test("tl's declared type (dist/lib/kernel/context.d.ts) has no runtime internals, and keeps its operations", async (t) => {
  const text = readFileSync(join(ROOT, 'dist', 'lib', 'kernel', 'context.d.ts'), 'utf8');
  const tl = /export declare class KernelContext \{([\s\S]*?)\n\}/.exec(text)?.[1] ?? '';
  t.not(tl, '', 'the class is declared');
  for (const internal of ['advance', 'drain', 'settledNow', 'waitSend', 'waitSendNow', 'scratchBytes']) t.notMatch(tl, new RegExp(`^    (async )?${internal}\\b`, 'm'), `${internal} is not declared`);
  for (const op of ['load', 'store', 'send', 'recv', 'recvAsync', 'wait', 'parallel', 'add', 'error']) t.match(tl, new RegExp(`^    ${op}[<(]`, 'm'), `${op} is declared`);
});
