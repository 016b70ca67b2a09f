// Runs on: main thread (tap). Shared plumbing for the tests that run the README's
// transcripts (test/readme.test.ts, test/readme-runs.test.ts): find each
// `$ node bin/kernbench.js ...` in a Markdown text's code blocks with the lines quoted
// after it, and compare a run's output with them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { kernbench, ROOT } from './cli.js';

export const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The command drops its stderr (`... 2>/dev/null`): its quote is stdout alone. */
export const quiet = (tr: Transcript): boolean => tr.stderrDropped === true;

export interface Transcript {
  /** The command ends with `2>/dev/null`. */
  stderrDropped?: boolean;
  /** README line of the `$ ` command. */
  line: number;
  env: Record<string, string>;
  args: string[];
  /** The lines quoted after it (a line `...` stands for any number of lines). */
  expected: string[];
}

/** The `$ node bin/kernbench.js ...` transcripts of a Markdown text's code blocks. */
export function transcripts(text: string): Transcript[] {
  const out: Transcript[] = [];
  const lines = text.split('\n');
  let inBlock = false;
  let current: Transcript | undefined;
  const close = (): void => {
    if (current === undefined) return;
    while (current.expected.length > 0 && current.expected[current.expected.length - 1] === '') current.expected.pop();
    out.push(current);
    current = undefined;
  };
  lines.forEach((l, i) => {
    if (l.startsWith('```')) {
      close();
      inBlock = !inBlock;
      return;
    }
    if (!inBlock) return;
    const m = /^\$ ((?:\w+=\S+ )*)node bin\/kernbench\.js (.*)$/.exec(l);
    if (m) {
      close();
      const env = Object.fromEntries(m[1].trim().split(' ').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
      const args = m[2].trim().split(/\s+/);
      const stderrDropped = args[args.length - 1] === '2>/dev/null';
      current = { line: i + 1, env, args: stderrDropped ? args.slice(0, -1) : args, expected: [], ...(stderrDropped ? { stderrDropped } : {}) };
    } else if (l.startsWith('$ ')) close();
    else current?.expected.push(l);
  });
  return out;
}

/** Whether `actual` reads as `expected`, where an expected line `...` (indented or not) matches any run of lines. */
export function matches(expected: string[], actual: string[]): boolean {
  if (expected.length === 0) return actual.length === 0;
  const [first, ...rest] = expected;
  if (first.trim() === '...') return actual.some((_, k) => matches(rest, actual.slice(k))) || matches(rest, []);
  return actual.length > 0 && actual[0] === first && matches(rest, actual.slice(1));
}

/**
 * Whether a transcript starts threads (a run or a stress that gets past its options);
 * the others (--help, list, validate, a usage or configuration error) answer before.
 */
export function startsThreads(tr: Transcript): boolean {
  return (tr.args[0] === 'run' || tr.args[0] === 'stress') && !tr.args.includes('--help') && !(tr.expected[0] ?? '').startsWith('kernbench: ');
}

// The README writes the checkout as /path/to/kernbench/ and a scratch file as /tmp/NAME.
// Scratch paths first: the checkout itself may live under /tmp (a CI clone).
const here = (s: string, tmp: string): string => s.replaceAll('/tmp/', `${tmp}/`).replaceAll('/path/to/kernbench/', ROOT);

/** Run each transcript (in-process) and check that it prints the lines quoted. */
export async function checkTranscripts(t: Test, list: Transcript[]): Promise<void> {
  const tmp = t.testdir();
  for (const tr of list) {
    const r = await kernbench(
      tr.args.map((a) => here(a, tmp)),
      { env: tr.env },
    );
    // A command quoted with `2>/dev/null` shows its stdout alone.
    const printed = (quiet(tr) ? r.stdout : r.stdout + r.stderr).replace(/\n$/, '').split('\n');
    const expected = tr.expected.map((l) => here(l, tmp));
    t.ok(matches(expected, printed), `README.md:${tr.line}: ${tr.args.join(' ')}`, { expected: expected.join('\n'), printed: printed.join('\n') });
  }
}
