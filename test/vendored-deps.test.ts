// Runs on: main thread (tap). Covers: decision 0272, zod and yaml bundled into
// dist/lib/vendor by the build: no compiled file imports the packages themselves, the
// `z` of kernbench's entry points is the bundle's, and a schema built with the zod
// package (as a user's own dependency would build it) is still a zod schema to
// kernbench, which checks schemas with `instanceof` (lib/config/schema-path.ts,
// lib/config/sets.ts). Which files a run loads: test/isolate-startup.test.ts.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import * as zodPackage from 'zod';
import * as yamlPackage from 'yaml';
import { z as benchZ } from '../lib/public/bench.js';
import { z as kernelZ } from '../lib/public/kernel.js';
import { z as topologyZ } from '../lib/public/topology.js';
import { filesUnder } from './helpers/files.js';

const DIST = fileURLToPath(new URL('../', import.meta.url));
const VENDOR = join(DIST, 'lib', 'vendor');
/** The tests import the packages by name, as a user's code would. */
const TESTS = join(DIST, 'test');

t.test("no compiled file of kernbench's (but the bundles) imports zod or yaml by its package name", async (t) => {
  const bare = /(\bfrom\s*|\bimport\s*\(\s*)(['"])(zod|yaml)(\/[^'"]*)?\2/;
  const offenders: string[] = [];
  let files = 0;
  for (const file of filesUnder(DIST, '.js')) {
    if (file.startsWith(VENDOR) || file.startsWith(TESTS)) continue;
    files++;
    if (bare.test(readFileSync(file, 'utf8'))) offenders.push(relative(DIST, file));
  }
  t.ok(files > 100, `read the compiled tree (${files} files)`);
  t.same(offenders, []);
});

t.test("kernbench's entry points give one zod, the bundle's", async (t) => {
  const vendored = (await import(new URL('../lib/vendor/zod.js', import.meta.url).href)) as typeof zodPackage;
  t.equal(benchZ, vendored.z, 'kernbench/bench');
  t.equal(kernelZ, vendored.z, 'kernbench/kernel');
  t.equal(topologyZ, vendored.z, 'kernbench/topology');
  t.not(vendored.z, zodPackage.z, 'a copy of its own: these tests read the package too');
});

t.test("a schema of the zod package is a zod schema to the bundle's zod (instanceof, parsing, composing)", async (t) => {
  const z = benchZ;
  const theirs = zodPackage.z.object({ n: zodPackage.z.number().int().min(1) });
  t.ok(theirs instanceof z.ZodObject, 'an object schema');
  t.ok(theirs.shape.n instanceof z.ZodNumber, 'its number field');
  t.ok(z.object({ inner: theirs }).safeParse({ inner: { n: 2 } }).success, 'composed into one of ours, it parses');
  t.notOk(z.object({ inner: theirs }).safeParse({ inner: { n: 0 } }).success, 'and refuses what it refuses');
  t.same(z.toJSONSchema(theirs), zodPackage.z.toJSONSchema(theirs), 'its JSON schema, read by either');
});

t.test("the bundle's yaml parses as the package does", async (t) => {
  const vendored = (await import(new URL('../lib/vendor/yaml.js', import.meta.url).href)) as typeof yamlPackage;
  const text = 'system:\n  sips: { count: 4 }\nlinks: [a, b]\n';
  t.same(vendored.parseDocument(text).toJS(), yamlPackage.parseDocument(text).toJS());
  t.same(vendored.parse(text), { system: { sips: { count: 4 } }, links: ['a', 'b'] });
  t.ok(vendored.isMap(vendored.parseDocument(text).contents), 'its node predicates work on its own nodes');
});
