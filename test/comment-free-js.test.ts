// Runs on: main thread (tap). Covers: decision 0241, the runtime's JavaScript is built
// without comments (tsconfig.json) and its declarations with them (tsconfig.types.json,
// `npm run build`). Every isolate keeps the source text of each module it loads; the
// comments were a third of it, and a file with one non-ASCII character in a comment is
// kept in two bytes a character.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/cli.js';
import { filesUnder as files } from './helpers/files.js';

t.test("the runtime's JavaScript carries no comments", async (t) => {
  const js = files(join(ROOT, 'dist', 'lib'), '.js');
  t.ok(js.length > 100, `${js.length} files`);
  // The report page's script is a string the runtime writes into the page, comments and all.
  const commented = js.filter((f) => !f.endsWith(join('bench', 'report-script.js'))).filter((f) => {
    const text = readFileSync(f, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
    return /^\s*\/\/|\/\*\*|^\s*\/\*/m.test(text);
  });
  t.same(commented, [], 'no file keeps a line or block comment');
});

t.test('the declarations keep their documentation', async (t) => {
  const text = readFileSync(join(ROOT, 'dist', 'lib', 'kernel', 'context.d.ts'), 'utf8');
  t.match(text, /\/\*\*[\s\S]*?\*\/\s*\n\s*(abstract )?send[<(]/, "tl.send's doc comment is declared with it");
});
