// Runs on: main thread (tap). Covers: lib/README.md's layering rule — every
// relative import under lib/ goes to a lower layer or stays in its folder, so
// there is no import cycle between folders; every folder is in the table, every
// row names a folder that exists, and the files a row says its folder owns exist;
// and no file under lib/ is longer than about 450 lines.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

t.test("every folder and file in lib/README.md's table exists in lib/", async (t) => {
  t.same([...table.keys()].filter((u) => !existsSync(join(LIB, u))), [], 'rows naming what is gone');
});

/** The files and folders (`name.ts`, `name/`) each row's "owns" cell names, as paths under lib/. */
function owned(): string[] {
  const out: string[] = [];
  for (const line of readFileSync(join(LIB, 'README.md'), 'utf8').split('\n')) {
    const cells = line.split(' | ');
    const folder = /^\| \d+$/.test(cells[0]) ? /`([^`]+?)\/`/.exec(cells[1])?.[1] : undefined;
    if (folder === undefined || cells.length < 4) continue;
    for (const m of cells[3].matchAll(/`([\w.-]+(?:\.ts|\/))`/g)) out.push(`${folder}/${m[1]}`);
  }
  return out;
}

t.test("every file and folder a row of lib/README.md says its folder owns exists there", async (t) => {
  const names = owned();
  t.ok(names.length > 0, `the table names files (${names.join(', ')})`);
  // `topology/` in config/'s row is another row's folder, not one of config/'s.
  t.same(names.filter((p) => !existsSync(join(LIB, p)) && !table.has(p.slice(p.indexOf('/') + 1, -1))), []);
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

/** Most lines a file under lib/ may have (STYLE.md: one concept per module; past ~400 lines, split). */
const MAX_LINES = 450;

/** Each file of `paths` longer than MAX_LINES, as `path (n lines)`. */
function overLong(paths: string[]): string[] {
  return paths.flatMap((f) => {
    const n = readFileSync(f, 'utf8').split('\n').length - 1;
    return n > MAX_LINES ? [`${relative(ROOT, f)} (${n} lines)`] : [];
  });
}

t.test(`no file under lib/ is longer than ${MAX_LINES} lines`, async (t) => {
  t.same(overLong(files), []);
});
