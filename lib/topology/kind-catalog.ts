// Runs on: any thread. Owns: which SIP topology kinds exist — the module files
// of lib/topology/kinds/ (compiled: dist/lib/topology/kinds/), each named by its
// file name — and looking one up. There is no list to keep: adding a kind is
// adding a file (lib/topology/define-kind.ts says what it exports).
//
// Topology files are loaded synchronously (lib/config/load.ts loadTopology), and
// the schema, Machine and the CCL worlds ask a kind synchronously. So this
// module imports every file of the folder once, with a top-level await, while
// it loads: every module that imports it (statically) runs after the kinds are
// in. Decision 0018 weighs the alternatives.
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../errors.js';
import { isSipTopology, type SipTopology, type SipTopologyKind } from './define-kind.js';

const KINDS_DIR = new URL('./kinds/', import.meta.url);

/** Sources run as .ts (tsx), the build as .js: list the files of this module's own kind. */
const MODULE_EXT = extname(fileURLToPath(import.meta.url));

/** File names (without extension) of the kinds folder, sorted. */
function kindFileNames(): string[] {
  return readdirSync(KINDS_DIR)
    .filter((f) => extname(f) === MODULE_EXT && !f.endsWith(`.d${MODULE_EXT}`))
    .map((f) => f.slice(0, -MODULE_EXT.length))
    .sort();
}

async function loadKind(file: string): Promise<SipTopology> {
  const url = new URL(`${file}${MODULE_EXT}`, KINDS_DIR);
  const mod = (await import(url.href)) as Record<string, unknown>;
  const path = fileURLToPath(url);
  if (!isSipTopology(mod.kind)) {
    const found = Object.keys(mod).sort();
    throw new KernbenchError('ERR_MODULE_CONTRACT', `${path} is not a SIP topology kind module: kind: missing or not made with defineSipTopology. Expected exports: kind (defineSipTopology({name, summary, grid, hops, neighbour})); found: ${found.length ? found.join(', ') : 'none'}`);
  }
  if (mod.kind.name !== file) {
    throw new KernbenchError('ERR_MODULE_CONTRACT', `${path}: a kind is named after its file, expected name '${file}', got '${mod.kind.name}'`);
  }
  return mod.kind;
}

const KINDS: ReadonlyMap<string, SipTopology> = new Map((await Promise.all(kindFileNames().map(loadKind))).map((k) => [k.name, k]));

/** Names of the shipped kinds, sorted (the file names of lib/topology/kinds/). */
export function sipKindNames(): SipTopologyKind[] {
  return [...KINDS.keys()] as SipTopologyKind[];
}

/** Every shipped kind, in name order. */
export function sipKinds(): SipTopology[] {
  return [...KINDS.values()];
}

/** Kind `name`, or undefined when there is none. */
export function findSipKind(name: string): SipTopology | undefined {
  return KINDS.get(name);
}

/** Kind `name`; ERR_CONFIG listing the known kinds when there is none. */
export function sipKind(name: string): SipTopology {
  const k = KINDS.get(name);
  if (k === undefined) throw new KernbenchError('ERR_CONFIG', `unknown SIP topology kind; expected one of ${sipKindNames().join('|')}, got '${name}'`);
  return k;
}
