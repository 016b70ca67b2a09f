// Runs on: main thread (tap). Covers: tap runs the group files of test/groups/
// (package.json's tap.include), each importing some of the topic files of test/;
// a topic file that no group imports would never run in CI, and one imported by
// two groups would run twice (decision 0028).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Runs compiled, from dist/test/: the sources are two levels up, in test/.
const TEST = fileURLToPath(new URL('../../test', import.meta.url));
const GROUPS = join(TEST, 'groups');

const topics = readdirSync(TEST).filter((f) => f.endsWith('.test.ts')).map((f) => f.replace(/\.ts$/, ''));
const imported = readdirSync(GROUPS)
  .filter((f) => f.endsWith('.test.ts'))
  .flatMap((group) => [...readFileSync(join(GROUPS, group), 'utf8').matchAll(/^await import\('\.\.\/(.+)\.js'\);$/gm)].map((m) => ({ group, topic: m[1] })));

t.test('every topic test file is imported by exactly one group, and every import names a topic file', async (t) => {
  const count = (topic: string) => imported.filter((i) => i.topic === topic).length;
  t.same(topics.filter((topic) => count(topic) !== 1), [], 'topics imported by no group or by several');
  t.same(imported.filter((i) => !topics.includes(i.topic)), [], 'imports of no topic file');
  t.ok(topics.length > 60, `found the topic files (${topics.length})`);
});

t.test('tap runs the group files and nothing else', async (t) => {
  const pkg = JSON.parse(readFileSync(join(TEST, '..', 'package.json'), 'utf8')) as { tap: { include: string[] } };
  t.same(pkg.tap.include, ['dist/test/groups/*.test.js']);
});
