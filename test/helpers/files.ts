// Runs on: main thread (tap). Owns: listing a folder's files for the tests that read the build.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir` (at any depth) whose name ends with `ext`, as paths. */
export function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ext))
    .map((f) => join(dir, f));
}
