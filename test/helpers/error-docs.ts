// Runs on: main thread (tap, or by hand). Owns: docs/errors.md's table of error
// codes, rendered from the registry (lib/error-codes.ts ERROR_CODES) so the doc
// cannot drift from it. test/error-codes.test.ts compares the doc with this;
// after changing the registry, rewrite the doc with
//   npm run build && node dist/test/helpers/error-docs.js --write
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, isUsageCode } from '../../lib/errors.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const ERRORS_DOC = join(ROOT, 'docs', 'errors.md');

/** The markers between which docs/errors.md holds the generated table. */
export const BEGIN = '<!-- error codes: generated from lib/error-codes.ts by test/helpers/error-docs.ts -->';
export const END = '<!-- end of error codes -->';

/** The table, one row per code in registry order, with the CLI's exit status for it (2: a usage error). */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, what]) => `| \`${code}\` | ${what.replace(/\|/g, '\\|')} | ${isUsageCode(code) ? 2 : 1} |`);
  return ['| code | condition | CLI exit |', '|---|---|---|', ...rows].join('\n');
}

/** The doc's text between the markers, or null when a marker is missing. */
export function tableInDoc(text: string): string | null {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return null;
  return text.slice(a + BEGIN.length, b).trim();
}

function write(): void {
  const text = readFileSync(ERRORS_DOC, 'utf8');
  if (tableInDoc(text) === null) throw new Error(`${ERRORS_DOC}: the markers ${BEGIN} and ${END} are missing`);
  const a = text.indexOf(BEGIN) + BEGIN.length;
  writeFileSync(ERRORS_DOC, `${text.slice(0, a)}\n${errorCodeTable()}\n${text.slice(text.indexOf(END))}`);
  console.log(`wrote ${ERRORS_DOC}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) write();
