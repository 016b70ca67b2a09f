#!/usr/bin/env node
// Runs on: main of the build (`npm run build`, last). Owns: loading zod and yaml as
// one file each (decision 0272).
//
// Every run's main thread imports zod (its checks of topologies, CCL files and
// options) and yaml (the files themselves) before any other thread starts, so
// their load is on every run's critical path. Loaded from node_modules they are
// 95 and 72 files; bundled by esbuild into dist/lib/vendor/zod.js and yaml.js,
// each one file, and every `'zod'` and `'yaml'` specifier of the compiled
// JavaScript under dist/ (lib, bin, benches; the runtime bundles have none) is
// rewritten to its file. The tests (dist/test) keep the packages' names: they
// import them as a user's code would. Every importer of kernbench, a user's module through
// `kernbench/bench`, `kernbench/kernel` or `kernbench/topology` included, gets the
// same zod. The type declarations keep `'zod'`: the bundle is the same version as
// the package they name (a dependency of ours, which the build reads), and zod 4
// recognises its classes across copies (`instanceof` reads a schema's traits), so
// a schema a user builds with a zod of their own is still one to kernbench.
//
//   node scripts/vendor-deps.mjs            (run by `npm run build`)
import * as esbuild from 'esbuild';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const VENDOR = join(DIST, 'lib', 'vendor');
const TESTS = join(DIST, 'test');
/** The packages bundled, each into VENDOR/<name>.js. */
const VENDORED = ['zod', 'yaml'];

for (const name of VENDORED) {
  await esbuild.build({
    stdin: { contents: reexports(name), resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: join(VENDOR, `${name}.js`),
    // A CommonJS package's require() of Node's own modules, kept working in the ES module esbuild writes.
    banner: { js: `import { createRequire as __vendorRequire } from 'node:module';\nconst require = __vendorRequire(import.meta.url);` },
    // The compiled JavaScript carries no comments (decision 0241; test/comment-free-js.test.ts): whitespace minified, names kept.
    legalComments: 'none',
    minifyWhitespace: true,
    logLevel: 'warning',
  });
}

/**
 * The bundle's source: every named export of the package. An ES module's are
 * re-exported as they are; a CommonJS one's (yaml's Node build) are its exports
 * object's keys, which esbuild cannot see through `export *`, read here.
 */
function reexports(name) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  if (pkg.type === 'module') return `export * from '${name}';\n`;
  const names = Object.keys(createRequire(join(ROOT, 'package.json'))(name)).filter((k) => k !== 'default' && /^[A-Za-z_$][\w$]*$/.test(k));
  return `import m from '${name}';\nexport const { ${names.join(', ')} } = m;\nexport default m;\n`;
}

/** A static import or re-export's `from 'x'`, a dynamic `import('x')`, either quote. */
const SPECIFIER = new RegExp(String.raw`(\bfrom\s*|\bimport\s*\(\s*)(['"])(${VENDORED.join('|')})\2`, 'g');

let files = 0;
let rewritten = 0;
for (const file of readdirSync(DIST, { recursive: true, encoding: 'utf8' }).map((f) => join(DIST, f))) {
  if (!file.endsWith('.js') || file.startsWith(VENDOR + '/') || file.startsWith(TESTS + '/')) continue;
  files++;
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPECIFIER, (_m, lead, quote, name) => {
    let rel = relative(dirname(file), join(VENDOR, `${name}.js`)).split('\\').join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `${lead}${quote}${rel}${quote}`;
  });
  if (out !== text) {
    writeFileSync(file, out);
    rewritten++;
  }
}
process.stdout.write(`vendor-deps: ${VENDORED.join(', ')} bundled into dist/lib/vendor; ${rewritten} of ${files} files import them there\n`);
