// Runs on: main thread (tap). Covers: the README's TypeScript snippets run as
// written, for a TypeScript user (main.ts beside workers.ts, run with tsx) and
// for a JavaScript one (main.js beside workers.js, run with node). Each ```ts
// block of README.md is copied verbatim into a fresh project that has kernbench
// as a dependency; nothing of the snippet is retyped here.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { ROOT } from './helpers/cli.js';

/** The ```ts blocks of a markdown text, in order. */
export function tsSnippets(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

const snippets = tsSnippets(readFileSync(join(ROOT, 'README.md'), 'utf8'));
const DIR = mkdtempSync(join(tmpdir(), 'kernbench-readme-'));
t.teardown(() => rmSync(DIR, { recursive: true, force: true }));

/** A user's project: kernbench installed (a link to this checkout), ES modules. */
function project(name: string): string {
  const dir = join(DIR, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module' }));
  symlinkSync(ROOT, join(dir, 'node_modules', 'kernbench'), 'dir');
  return dir;
}

// The spawn target the withTorch snippet imports: each rank returns its rank and n.
const WORKER_TS = `import type { Torch } from 'kernbench';\nexport async function worker(rank: number, n: number, torch: Torch): Promise<number[]> {\n  void torch;\n  return [rank, n];\n}\n`;
const WORKER_JS = `export async function worker(rank, n) {\n  return [rank, n];\n}\n`;

t.test('the README has the withTorch snippet', async (t) => {
  t.ok(snippets.some((s) => s.includes('withTorch')), `${snippets.length} ts snippet(s), one with withTorch`);
});

for (const [i, snippet] of snippets.entries()) {
  for (const lang of ['ts', 'js'] as const) {
    t.test(`README ts snippet ${i + 1} runs as written from main.${lang} beside workers.${lang}`, async (t) => {
      const dir = project(`snippet-${i + 1}-${lang}`);
      writeFileSync(join(dir, `workers.${lang}`), lang === 'ts' ? WORKER_TS : WORKER_JS);
      writeFileSync(join(dir, `main.${lang}`), snippet);
      const r = lang === 'ts' ? await execa(join(ROOT, 'node_modules', '.bin', 'tsx'), ['main.ts'], { cwd: dir, reject: false }) : await execa('node', ['main.js'], { cwd: dir, reject: false });
      t.equal(r.exitCode, 0, `exits 0 (stderr: ${String(r.stderr)})`);
      if (snippet.includes('withTorch')) t.match(String(r.stdout), /^\[ \[ 0, 1024 \], \[ 1, 1024 \] \] (none|[0-9a-f]{16})$/, 'prints what each rank returned and the session digest');
    });
  }
}
