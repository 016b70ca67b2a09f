// Runs on: any thread. Owns: the SIP topology kinds this thread has loaded, and
// looking one up synchronously — the shipped kinds (the module files of
// lib/topology/kinds/, each named by its file name; compiled:
// dist/lib/topology/kinds/) and a user's kind module named by path — with no
// top-level await, so a thread that builds a Machine of one kind loads that kind
// alone. ./kind-catalog.ts loads every shipped kind into it while it loads
// (main, the CCL worlds, `kernbench list`); the coordinator imports only this and
// loads its session's kind first (lib/loader/topology-kind.ts), so it never loads
// the other kinds, nor zod, which one of them imports (decision 0205).
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../errors.js';
import { isSipTopology, type SipTopology, type SipTopologyKind } from './define-kind.js';

const KINDS_DIR = new URL('./kinds/', import.meta.url);

/** Sources run as .ts (tsx), the build as .js: list the files of this module's own kind. */
const MODULE_EXT = extname(fileURLToPath(import.meta.url));

/** Names of the shipped kinds, sorted: the file names (without extension) of the kinds folder. No kind is loaded to list them. */
export function shippedKindNames(): SipTopologyKind[] {
  return (shippedNames ??= readdirSync(KINDS_DIR)
    .filter((f) => extname(f) === MODULE_EXT && !f.endsWith(`.d${MODULE_EXT}`))
    .map((f) => f.slice(0, -MODULE_EXT.length) as SipTopologyKind)
    .sort());
}
let shippedNames: SipTopologyKind[] | undefined;

/**
 * The SIP topology kinds a topology file or a CCL algorithm may name: the modules
 * of lib/topology/kinds/. The topology schema (./schema.ts) re-exports it; an
 * algorithm's definition (lib/ccl/define-algorithm.ts) reads it here, so an
 * executor does not build the topology file's schema to know the names.
 */
export const SIP_TOPOLOGIES: readonly SipTopologyKind[] = Object.freeze([...shippedKindNames()]);

/** A user's kind module is keyed by its file URL, so two users' kinds of one name cannot meet. */
export type KindModuleUrl = `file:${string}`;
const SHIPPED = new Map<string, SipTopology>();
const USER_KINDS = new Map<string, SipTopology>();
const loadingShipped = new Map<string, Promise<SipTopology>>();

/** The file URL of shipped kind `name`'s module, or undefined when no shipped kind has that name. */
export function shippedKindUrl(name: string): KindModuleUrl | undefined {
  return shippedKindNames().includes(name as SipTopologyKind) ? (new URL(`${name}${MODULE_EXT}`, KINDS_DIR).href as KindModuleUrl) : undefined;
}

/** The shipped kind whose module is at `url`, or undefined when `url` is not one of lib/topology/kinds/. */
export function shippedKindAt(url: string): SipTopologyKind | undefined {
  return shippedKindNames().find((name) => shippedKindUrl(name) === url);
}

/** Import, check and register shipped kind `name` on this thread (once, however many ask). */
export function loadShippedKind(name: SipTopologyKind): Promise<SipTopology> {
  let p = loadingShipped.get(name);
  if (p === undefined) {
    p = importShippedKind(name);
    loadingShipped.set(name, p);
  }
  return p;
}

async function importShippedKind(file: SipTopologyKind): Promise<SipTopology> {
  const url = new URL(`${file}${MODULE_EXT}`, KINDS_DIR);
  const mod = (await import(url.href)) as Record<string, unknown>;
  const path = fileURLToPath(url);
  if (!isSipTopology(mod.kind)) {
    const found = Object.keys(mod).sort();
    throw new KernbenchError('ERR_MODULE_EXPORT', `${path} is not a SIP topology kind module: kind: missing or not made with defineSipTopology. Expected exports: kind (defineSipTopology({name, summary, grid, hops, neighbour})); found: ${found.length ? found.join(', ') : 'none'}`);
  }
  if (mod.kind.name !== file) {
    throw new KernbenchError('ERR_MODULE_DEFINITION', `${path}: a kind is named after its file, expected name '${file}', got '${mod.kind.name}'`);
  }
  SHIPPED.set(file, mod.kind);
  return mod.kind;
}

/** A kind named by path rather than by name: a relative or absolute file path or URL, or a module file name. */
export function isKindModulePath(name: string): boolean {
  return /[\\/]|\.(?:m?ts|m?js)$/.test(name);
}

/** Record the kind of the user's module at file URL `url` on this thread (the loader calls this once it checked the module). */
export function registerSipKind(url: KindModuleUrl, kind: SipTopology): void {
  USER_KINDS.set(url, kind);
}

/** Kind `name` (a shipped name, or the URL of a user's kind module) if this thread has loaded it, else undefined. */
export function findSipKind(name: string): SipTopology | undefined {
  return SHIPPED.get(name) ?? USER_KINDS.get(name);
}

/** Kind `name`; ERR_UNKNOWN_TOPOLOGY_KIND when this thread has not loaded it (listing the known kinds when there is none of that name). */
export function sipKind(name: string): SipTopology {
  const k = findSipKind(name);
  if (k !== undefined) return k;
  if (name.startsWith('file:') || shippedKindUrl(name) !== undefined) {
    const what = name.startsWith('file:') ? `module ${fileURLToPath(name)}` : `'${name}'`;
    throw new KernbenchError('ERR_UNKNOWN_TOPOLOGY_KIND', `the SIP topology kind ${what} is not loaded on this thread (lib/loader/topology-kind.ts loads it; lib/topology/kind-catalog.ts loads every shipped kind), got '${name}'`);
  }
  throw new KernbenchError('ERR_UNKNOWN_TOPOLOGY_KIND', `unknown SIP topology kind; expected one of ${shippedKindNames().join('|')}, got '${name}'`);
}
