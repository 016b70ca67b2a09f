// Runs on: main thread (tap). Covers decision 0245 against the build's output: the
// runtime's bundles (dist/lib/runtime/, listed with the modules left apart in its
// manifest.json) and the files they replace. Each bundled module's file is a
// one-line re-export, so no isolate loads a module's code twice; no two bundles
// import each other, directly or through a module left apart; and a bundle mixes no
// module that waits for a top-level await (kind-catalog's) with one that does not,
// reading that from lib/'s own imports: Node 20 can leave an import unsettled when
// a module becomes async only by sharing a bundle with one that waits.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');
const LIB = join(ROOT, 'lib');
const RUNTIME = join(ROOT, 'dist', 'lib', 'runtime');

interface Manifest {
  bundles: Record<string, string[]>;
  apart: string[];
}
const manifest = JSON.parse(readFileSync(join(RUNTIME, 'manifest.json'), 'utf8')) as Manifest;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : f.endsWith('.ts') && !f.endsWith('.d.ts') ? [p] : [];
  });
}

/** lib-relative .js path of each lib/ module to those it imports statically for a value (type-only imports and exports left out). */
const graph = new Map<string, string[]>();
for (const file of tsFiles(LIB)) {
  const src = readFileSync(file, 'utf8');
  const targets = [...src.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'(\.[^']+)'/gm)].map((m) => relative(LIB, resolve(dirname(file), m[1])));
  graph.set(relative(LIB, file).replace(/\.ts$/, '.js'), targets);
}

function reaches(from: string, to: string): boolean {
  const seen = new Set([from]);
  const todo = [from];
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (f === to) return true;
    for (const g of graph.get(f) ?? []) {
      if (!seen.has(g)) {
        seen.add(g);
        todo.push(g);
      }
    }
  }
  return false;
}

const bundled = Object.values(manifest.bundles).flat();

t.test('the build bundled the runtime, and left apart the module that awaits at its top level', async (t) => {
  t.ok(bundled.length > 50, `${bundled.length} modules in ${Object.keys(manifest.bundles).length} bundles`);
  t.ok(bundled.includes('kernel/context.js') && bundled.includes('host/torch.js'), 'the executor side and the host side are in');
  t.same(manifest.apart, ['topology/kind-catalog.js'], 'the kind catalog (its top-level await loads the kinds) is its own file');
  t.equal(new Set(bundled).size, bundled.length, 'each module in one bundle');
});

t.test("each bundled module's file only re-exports from its bundle", async (t) => {
  const longer: string[] = [];
  for (const [bundle, modules] of Object.entries(manifest.bundles)) {
    for (const m of modules) {
      const text = readFileSync(join(ROOT, 'dist', 'lib', m), 'utf8');
      const to = relative(join(ROOT, 'dist', 'lib', dirname(m)), join(RUNTIME, bundle));
      if (!/^(?:export \{[^}]*\} from|import) "[^"]+";\n$/.test(text) || !text.includes(`"${to.startsWith('.') ? to : './' + to}"`)) longer.push(m);
    }
  }
  t.same(longer, []);
});

t.test('no cycle between bundles, nor through a module left apart', async (t) => {
  const imports = new Map<string, string[]>();
  for (const bundle of Object.keys(manifest.bundles)) {
    const text = readFileSync(join(RUNTIME, bundle), 'utf8');
    const to = [...text.matchAll(/^import [^"]*"(\.[^"]+)";$/gm)].map((m) => relative(join(ROOT, 'dist', 'lib'), resolve(RUNTIME, m[1])));
    imports.set(`runtime/${bundle}`, to);
  }
  const owner = new Map(Object.entries(manifest.bundles).flatMap(([b, ms]) => ms.map((m): [string, string] => [m, `runtime/${b}`])));
  // A module left apart imports its modules' bundles (through their files).
  for (const a of manifest.apart) imports.set(a, (graph.get(a) ?? []).map((m) => owner.get(m) ?? m));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (n: string, path: string[]): void => {
    if (state.get(n) === 'done') return;
    if (state.get(n) === 'open') {
      cycles.push([...path.slice(path.indexOf(n)), n].join(' -> '));
      return;
    }
    state.set(n, 'open');
    for (const m of imports.get(n) ?? []) visit(m, [...path, n]);
    state.set(n, 'done');
  };
  for (const n of imports.keys()) visit(n, []);
  t.same(cycles, []);
});

t.test('a bundle holds modules that all wait, or all do not, for each module awaiting at its top level', async (t) => {
  const mixed: string[] = [];
  for (const [bundle, modules] of Object.entries(manifest.bundles)) {
    for (const a of manifest.apart) {
      const waiting = modules.filter((m) => reaches(m, a));
      if (waiting.length > 0 && waiting.length < modules.length) mixed.push(`${bundle}: ${waiting.length} of ${modules.length} wait for ${a} (${waiting.slice(0, 3).join(', ')})`);
    }
  }
  t.same(mixed, []);
});

// Decision 0287: the bundles are built without esbuild's keepNames, whose wrapper made every
// function expression bound to a name (a class field, a const arrow) an Object.defineProperty
// on each creation. keepNames kept `.name` for a function or class esbuild renamed on a
// collision; the second test checks that no top-level one is renamed, so none needs it.
t.test('no bundle wraps a function it makes in a naming call (decision 0287)', async (t) => {
  const wrapped = Object.keys(manifest.bundles).filter((b) => readFileSync(join(RUNTIME, b), 'utf8').includes('__name('));
  t.same(wrapped, []);
});

t.test("every top-level function and class of a bundle has its source's name (decision 0287)", async (t) => {
  const FLOAT16 = join(ROOT, 'node_modules', '@petamoriken', 'float16', 'src');
  const sources = (dir: string, ext: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? sources(p, ext) : f.endsWith(ext) && !f.endsWith('.d.ts') ? [p] : [];
    });
  const declared = new Set<string>();
  for (const f of [...sources(LIB, '.ts'), ...sources(FLOAT16, '.mjs')]) for (const m of readFileSync(f, 'utf8').matchAll(/(?:function\*?|class)\s+([A-Za-z_$][\w$]*)/g)) declared.add(m[1]);
  const renamed: string[] = [];
  let seen = 0;
  for (const bundle of Object.keys(manifest.bundles)) {
    const text = readFileSync(join(RUNTIME, bundle), 'utf8');
    for (const m of text.matchAll(/^(?:async )?(?:function\*? |class )([A-Za-z_$][\w$]*)|^(?:var|let|const) ([A-Za-z_$][\w$]*) = class\b/gm)) {
      seen++;
      const name = m[1] ?? m[2];
      if (!declared.has(name)) renamed.push(`${bundle}: ${name}`);
    }
  }
  t.ok(seen > 100, `${seen} top-level functions and classes read`);
  t.same(renamed, []);
});
