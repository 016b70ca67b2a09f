#!/usr/bin/env node
// Runs on: main of the build (`npm run build`, after tsc). Owns: loading the
// runtime a thread starts with as a few files instead of a hundred (decision 0245).
//
// A thread that loads the runtime through Node's ES module loader pays for every
// file: a module record, a loader job, a URL, a namespace, each kept for the
// isolate's life, and under `--threads rank` there is a thread a rank. So the
// modules the threads' entry points import statically (the executor's, the
// coordinator's, the watchdog's; an entry itself is left out: its top level
// starts its thread) are bundled by esbuild into dist/lib/runtime/*.js, and each
// of their files in dist/lib is replaced by a one-line module that re-exports its
// bindings from its bundle. Every importer (main, a thread, a bench, a user's
// kernel through `kernbench/kernel`, a test) reaches the same module instance
// through the same paths as before; no file moves. A module imported only by
// `import()` stays its own file, loaded when asked for.
//
// Which modules share a bundle: those with one signature, the set of threads
// (and of the shipped kinds) whose imports reach the module, and of modules
// awaiting at their top level that reach it or that it waits for. So
//   - a thread loads only bundles of modules it imported before (the coordinator
//     loads no kind, an executor no coordinator-only module);
//   - a bundle imports only bundles with larger signatures: no cycle between
//     bundles, none through a module left apart;
//   - a module awaiting at its top level (lib/topology/kind-catalog.ts, which
//     imports the shipped kinds) stays its own file; the kinds' imports are in
//     bundles evaluated before it, and a module that waited for no top-level
//     await as its own file waits for none in its bundle. Node 20 (V8 11.3) can
//     leave a dynamic import unsettled, or evaluate a module before its imports,
//     when a graph meets a module that became async only by sharing a bundle with
//     one that waits (seen as a test group that stopped mid-run).
// Each bundle's modules and the modules left apart are listed in
// dist/lib/runtime/manifest.json (test/runtime-bundles.test.ts reads it).
//
// `import.meta.url` in a bundled module is rewritten to the module's own file
// URL (its defineKernel identity, the folders it lists, its createRequire), so a
// module means the same file inside the bundle as outside it.
//
//   node scripts/bundle-runtime.mjs            (run by `npm run build`)
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIB = join(ROOT, 'dist', 'lib');
const KINDS = join(LIB, 'topology', 'kinds');
/** Each thread's entry point (dist/lib-relative): what it imports statically is bundled; the entry itself is not (its top level starts the thread). */
const THREADS = {
  executor: ['executor/executor-worker.js'],
  coordinator: ['coordinator/coordinator-worker.js'],
  watchdog: ['session/watchdog-thread.js'],
};

/**
 * Packages bundled with the modules that import them rather than loaded as their
 * files: used by the runtime alone (no object of theirs crosses into a user's code,
 * so a user importing them too loses nothing by a second copy).
 */
const INLINED = ['@petamoriken/float16'];

/**
 * The static import graph of dist/lib from `entries`: each file (absolute path)
 * to the files of dist/lib it imports with an import statement, in esbuild's
 * order. A module imported only by `import()` is not followed: it is loaded when
 * asked for, as its own file, as before.
 */
async function importGraph(entries) {
  const r = await esbuild.build({ entryPoints: entries, bundle: true, format: 'esm', platform: 'node', packages: 'external', write: false, metafile: true, outdir: '/nowhere', logLevel: 'silent' });
  const graph = new Map();
  for (const [path, input] of Object.entries(r.metafile.inputs)) {
    const file = resolve(ROOT, path);
    if (!file.startsWith(LIB + '/')) continue;
    graph.set(file, input.imports.filter((i) => i.kind === 'import-statement' && !i.external).map((i) => resolve(ROOT, i.path)).filter((f) => f.startsWith(LIB + '/')));
  }
  return graph;
}

/** The files static imports reach from `from` (itself included). */
function reach(graph, from) {
  const seen = new Set(from);
  const todo = [...from];
  while (todo.length > 0) {
    for (const f of graph.get(todo.pop()) ?? []) {
      if (!seen.has(f)) {
        seen.add(f);
        todo.push(f);
      }
    }
  }
  return seen;
}

/** Each module's export names, as esbuild resolves them (`export *` expanded). */
async function exportsOf(files) {
  const r = await esbuild.build({ entryPoints: files, bundle: true, splitting: true, format: 'esm', platform: 'node', packages: 'external', write: false, metafile: true, outdir: join(ROOT, 'dist', '.exports'), outbase: LIB, logLevel: 'silent' });
  const names = new Map();
  for (const out of Object.values(r.metafile.outputs)) {
    if (out.entryPoint !== undefined) names.set(resolve(ROOT, out.entryPoint), out.exports);
  }
  return names;
}

/**
 * A plugin: bundled modules keep their own file URL; a module of another bundle
 * is imported from that bundle itself, under its bundle name (not through its
 * file, which would be one more module for the isolate); a module of no bundle
 * (awaiting at its top level, or loaded by `import()` only) stays an import of
 * its own file.
 */
function ownUrls(bundleDir, group, links) {
  return {
    name: 'own-urls',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(args.resolveDir, args.path);
        if (group.has(target) || args.kind === 'entry-point' || !target.startsWith(LIB + '/')) return undefined;
        if (links.has(target)) return { path: rel(target), namespace: 'link', pluginData: target };
        return { path: './' + slashed(bundleDir, target), external: true };
      });
      build.onResolve({ filter: /^[^./]/ }, (args) => (INLINED.some((p) => args.path === p || args.path.startsWith(p + '/')) ? undefined : { path: args.path, external: true }));
      build.onLoad({ filter: /.*/, namespace: 'link' }, (args) => ({ contents: links.get(args.pluginData), loader: 'js', resolveDir: bundleDir }));
      // An inlined package's source keeps its comments; esbuild's whitespace minifier drops them (decision 0241).
      build.onLoad({ filter: /\.m?js$/, namespace: 'file' }, async (args) => {
        if (!args.path.startsWith(LIB + '/')) return { contents: (await esbuild.transform(readFileSync(args.path, 'utf8'), { loader: 'js', format: 'esm', minifyWhitespace: true, legalComments: 'none' })).code, loader: 'js', resolveDir: dirname(args.path) };
        const own = './' + slashed(bundleDir, args.path);
        const source = readFileSync(args.path, 'utf8');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Whether a module awaits at its top level (esbuild refuses to write it as CommonJS). */
async function awaitsAtTop(file) {
  try {
    await esbuild.transform(readFileSync(file, 'utf8'), { format: 'cjs', logLevel: 'silent' });
    return false;
  } catch {
    return true;
  }
}

/** `file` relative to `dir`, with forward slashes, as an import names it. */
const slashed = (dir, file) => relative(dir, file).split('\\').join('/');
const rel = (file) => slashed(LIB, file);
/** A module's name in a bundle's signature: topology/kind-catalog.js is topology.kind-catalog. */
const label = (file) => rel(file).replace(/\.js$/, '').replaceAll('/', '.');
const kindFiles = readdirSync(KINDS).filter((f) => f.endsWith('.js')).map((f) => join(KINDS, f));
const threadEntries = Object.values(THREADS).flat().map((e) => join(LIB, e));
const graph = await importGraph([...threadEntries, ...kindFiles]);
const reachedBy = new Map(Object.entries(THREADS).map(([label, entries]) => [label, reach(graph, entries.map((e) => join(LIB, e)))]));
const entrySet = new Set(threadEntries);
const reached = [...graph.keys()].filter((f) => !entrySet.has(f) && [...reachedBy.values()].some((r) => r.has(f)));
const awaiting = [];
for (const f of reached) if (await awaitsAtTop(f)) awaiting.push(f);
reachedBy.set('kinds', reach(graph, kindFiles));
for (const f of awaiting) reachedBy.set(label(f), reach(graph, [f]));
const awaitingSet = new Set(awaiting);
const bundled = reached.filter((f) => !awaitingSet.has(f));

/**
 * A module's signature: which threads, kinds and awaiting modules reach it, and
 * which awaiting modules it waits for. Modules of one signature make one bundle.
 * So a bundle imports only bundles reached by all that reach it (no cycle between
 * bundles, nor through an awaiting module), and a module that waited for no
 * top-level await as its own file waits for none in its bundle: a bundle is an
 * async module only where each of its modules was one.
 */
const groups = new Map();
for (const f of bundled) {
  const by = [...reachedBy.entries()].filter(([, r]) => r.has(f)).map(([label]) => label);
  const reaches = reach(graph, [f]);
  const waits = awaiting.filter((a) => reaches.has(a)).map((a) => 'after-' + label(a));
  const sig = [...by.sort(), ...waits.sort()].join('+');
  if (!groups.has(sig)) groups.set(sig, []);
  groups.get(sig).push(f);
}

const exportNames = await exportsOf(bundled);
const RUNTIME = join(LIB, 'runtime');
/** Each bundled module: its bundle, and its exports there (each under a name of its own: `m<bundle>_<module>$<export>`). */
const shims = new Map();
const links = new Map();
const entries = new Map();
for (const [g, [sig, files]] of [...groups].entries()) {
  const lines = [];
  for (const [i, file] of files.entries()) {
    const names = exportNames.get(file);
    if (names === undefined) throw new Error(`bundle-runtime: no exports listed for ${file}`);
    const prefix = `m${g}_${i}$`;
    lines.push(names.length === 0 ? `import ${JSON.stringify('./' + rel(file))};` : `export { ${names.map((n) => `${n} as ${prefix}${n}`).join(', ')} } from ${JSON.stringify('./' + rel(file))};`);
    const reexport = (to) => (names.length === 0 ? `import ${JSON.stringify(to)};\n` : `export { ${names.map((n) => `${prefix}${n} as ${n}`).join(', ')} } from ${JSON.stringify(to)};\n`);
    const back = posix.relative(posix.dirname(rel(file)), `runtime/${sig}.js`);
    shims.set(file, reexport(back.startsWith('.') ? back : './' + back));
    links.set(file, reexport(`./${sig}.js`));
  }
  entries.set(sig, lines.join('\n') + '\n');
}
for (const [sig, files] of groups) {
  const bundle = join(RUNTIME, `${sig}.js`);
  const r = await esbuild.build({
    stdin: { contents: entries.get(sig), resolveDir: LIB, sourcefile: `${sig}-entry.js`, loader: 'js' },
    bundle: true, format: 'esm', platform: 'node', target: 'es2022', legalComments: 'none', sourcemap: 'linked', sourcesContent: false, write: false, outfile: bundle,
    plugins: [ownUrls(RUNTIME, new Set(files), links)], logLevel: 'warning',
  });
  // esbuild names each module's source file in a line comment; the runtime's JavaScript carries none (decision 0241).
  // Emptied, not removed, so that the bundle's source map (to lib's TypeScript, through tsc's maps) keeps its lines.
  const js = r.outputFiles.find((f) => f.path === bundle);
  const map = r.outputFiles.find((f) => f.path === bundle + '.map');
  const text = js.text.split('\n').map((line) => (/^\/\/ \S+$/.test(line) ? '' : line)).join('\n');
  mkdirSync(RUNTIME, { recursive: true });
  if (map !== undefined) writeFileSync(bundle + '.map', map.text);
  writeFileSync(bundle, text);
}
writeFileSync(join(RUNTIME, 'manifest.json'), JSON.stringify({ bundles: Object.fromEntries([...groups].map(([sig, files]) => [`${sig}.js`, files.map(rel)])), apart: awaiting.map(rel) }, null, 2) + '\n');
for (const [file, text] of shims) {
  writeFileSync(file, text);
  if (existsSync(file + '.map')) rmSync(file + '.map');
}
console.log(`bundle-runtime: ${bundled.length} modules of dist/lib in ${groups.size} files: ${[...groups].map(([sig, files]) => `${sig} (${files.length})`).join(', ')}; left alone, awaiting at their top level: ${awaiting.map(rel).join(', ')}`);
