// Runs on: main thread (tap). Covers: lib/README.md's layering rule — every
// relative import under lib/ goes to a lower layer or stays in its folder, so
// there is no import cycle between folders; every folder is in the table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');
const LIB = join(ROOT, 'lib');

/** Layer of each folder (or top-level file) from the table in lib/README.md. */
function layers(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(join(LIB, 'README.md'), 'utf8').split('\n')) {
    const m = /^\| (\d+) \| ([^|]+) \|/.exec(line);
    if (!m) continue;
    for (const name of m[2].matchAll(/`([^`]+?)\/?`/g)) out.set(name[1], Number(m[1]));
  }
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** The lib/ unit a file belongs to: its top folder, or the file itself at the top. */
function unitOf(file: string): string {
  const rel = relative(LIB, file).split('/');
  return rel.length === 1 ? rel[0] : rel[0];
}

function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  return [...src.matchAll(/^\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gm)].map((m) => resolve(dirname(file), m[1]).replace(/\.js$/, '.ts'));
}

const table = layers();
const files = sources(LIB);

t.test('every folder and top-level file of lib/ has a layer in lib/README.md', async (t) => {
  const units = [...new Set(files.map(unitOf))].sort();
  t.same(units.filter((u) => !table.has(u)), [], 'units without a layer');
});

/** Each import edge that breaks the rule, as a sentence. */
function violations(edges: [string, string][]): string[] {
  const bad: string[] = [];
  for (const [f, target] of edges) {
    if (!target.startsWith(LIB)) continue;
    const from = unitOf(f);
    const to = unitOf(target);
    if (to === from) continue;
    const lf = table.get(from) ?? -1;
    const lt = table.get(to) ?? Infinity;
    if (lt >= lf) bad.push(`${relative(ROOT, f)} (layer ${lf}) imports ${relative(ROOT, target)} (layer ${lt})`);
  }
  return bad;
}

t.test('no import under lib/ goes up a layer or sideways to another folder of the same layer', async (t) => {
  t.same(violations(files.flatMap((f) => importsOf(f).map((target): [string, string] => [f, target]))), []);
});

t.test('the rule flags an upward import and a sideways one', async (t) => {
  // kernel/ (layer 7) importing ccl/ (layer 9) is what the port table removed;
  // ipcq/ and coordinator/ share layer 6.
  const up: [string, string] = [join(LIB, 'kernel/context.ts'), join(LIB, 'ccl/world.ts')];
  const side: [string, string] = [join(LIB, 'ipcq/channel.ts'), join(LIB, 'coordinator/arbiter.ts')];
  const down: [string, string] = [join(LIB, 'ccl/world.ts'), join(LIB, 'kernel/ports.ts')];
  t.equal(violations([up, side, down]).length, 2);
});
