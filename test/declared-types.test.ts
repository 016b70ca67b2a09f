// Runs on: main thread (tap). Covers: the declared types a package user sees hide
// tl's internals (stripInternal, members marked @internal): a kernel author's
// editor offers tl's operations, not the runtime's bookkeeping.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/cli.js';

t.test("tl's declared type (KernelContext and the MemoryOps and TileOps halves it extends) has no runtime internals, and keeps its operations", async (t) => {
  // Since the engine split (decision 0036) tl's math half is a class it extends, and since
  // decision 0081 its memory half (load, store, scratch) is the class between them.
  const body = (file: string, cls: string): string => {
    const text = readFileSync(join(ROOT, 'dist', 'lib', 'kernel', file), 'utf8');
    return new RegExp(`export declare (?:abstract )?class ${cls}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? '';
  };
  const face = body('context.d.ts', 'KernelContext');
  const memory = body('memory-ops.d.ts', 'MemoryOps');
  const math = body('tile-ops.d.ts', 'TileOps');
  t.not(face, '', 'the class is declared');
  t.not(memory, '', 'its memory half is declared');
  t.not(math, '', 'its math half is declared');
  const tl = `${face}\n${memory}\n${math}`;
  for (const internal of ['advance', 'drain', 'settledNow', 'waitSend', 'waitSendNow', 'scratchBytes']) t.notMatch(tl, new RegExp(`^    (abstract )?(async )?${internal}\\b`, 'm'), `${internal} is not declared`);
  for (const op of ['load', 'store', 'send', 'recv', 'recvAsync', 'wait', 'parallel', 'add', 'error']) t.match(tl, new RegExp(`^    (abstract )?${op}[<(]`, 'm'), `${op} is declared`);
});
