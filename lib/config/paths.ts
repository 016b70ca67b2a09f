// Runs on: any thread (main in practice). Owns: where kernbench's own files are
// (the project root, shipped topologies, the CCL file, the JSON Schemas) and how
// a topology named on the command line becomes a file path.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../errors.js';

const PACKAGE_NAME = 'kernbench';

/**
 * The directory holding kernbench's package.json. Found by walking up from this
 * module, because the same code runs from `lib/config/` (sources) and from
 * `dist/lib/config/` (compiled), at different depths.
 */
function findProjectRoot(start: string): string {
  let dir = start;
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === PACKAGE_NAME) return dir;
    } catch (e) {
      // No (readable) package.json here: keep walking up. Anything else is a real failure.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new KernbenchError('ERR_INTERNAL', `no package.json named '${PACKAGE_NAME}' above this module, got none above '${start}'`);
    }
    dir = parent;
  }
}

export const PROJECT_ROOT: string = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** kernbench's version, from its package.json: `--version`, and recorded in JSON, CSV and trace output. */
export const VERSION: string = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Shipped topologies and the CCL file. */
export const TOPOLOGIES_DIR = join(PROJECT_ROOT, 'topologies');

/** The CCL file used when none is given. It lives beside the topologies but is not one. */
export const DEFAULT_CCL_FILE = join(TOPOLOGIES_DIR, 'ccl.yaml');

/** Generated JSON Schemas (see write-json-schemas.ts), referenced from the YAML files' first line. */
export const SCHEMAS_DIR = join(PROJECT_ROOT, 'schemas');

/** The topology used when none is given. */
export const DEFAULT_TOPOLOGY = 'default';

const YAML_SUFFIX = /\.ya?ml$/;

/**
 * A bare name (`ideal`) is a shipped topology: `<root>/topologies/ideal.yaml`;
 * a bare name that is not one is ERR_UNKNOWN_TOPOLOGY, listing the shipped ones.
 * Anything with a path separator or a `.yaml`/`.yml` suffix is a path and is
 * returned as given, so problems name it the way the user typed it.
 */
export function topologyPath(nameOrPath: string): string {
  if (nameOrPath.includes('/') || nameOrPath.includes('\\') || YAML_SUFFIX.test(nameOrPath)) return nameOrPath;
  const known = listTopologies();
  if (!known.includes(nameOrPath)) {
    throw new KernbenchError('ERR_UNKNOWN_TOPOLOGY', `unknown topology (or give a path to a topology file, F.yaml or ./F); known: ${known.join(', ')}, got '${nameOrPath}'`);
  }
  return join(TOPOLOGIES_DIR, `${nameOrPath}.yaml`);
}

/** Names of the shipped topologies (`default`, `ideal`, ...), sorted; the CCL file is not one. */
export function listTopologies(): string[] {
  return readdirSync(TOPOLOGIES_DIR)
    .filter((f) => f.endsWith('.yaml') && join(TOPOLOGIES_DIR, f) !== DEFAULT_CCL_FILE)
    .map((f) => f.replace(YAML_SUFFIX, ''))
    .sort();
}
