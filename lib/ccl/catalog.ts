// Runs on: any thread (main resolves ccl.yaml against it; each rank's host
// thread loads the algorithm it runs). Owns: which algorithm modules exist and
// loading one — a shipped one by name or a user's file by URL — with the
// contract check of its exports.
//
// The shipped catalog is the algorithms folder itself: every module file in
// lib/ccl/algorithms/ (compiled: dist/lib/ccl/algorithms/) is an algorithm,
// named by its file name. There is no list to keep; what a module is comes
// from its `meta` (lib/ccl/define-algorithm.ts).
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../errors.js';
import { isKernel, type Kernel } from '../kernel/define.js';
import { checkExports, importModule, type ExportRule } from '../loader/user-module.js';
import { DIRECTIONS } from '../shm/layout.js';
import type { TensorDesc } from '../shm/tensor-desc.js';
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { isAlgorithmMeta, KERNEL_EXPORTS, type AlgorithmMeta, type CollectiveName } from './define-algorithm.js';
import { arrangementFor, type Arrangement } from './placement.js';
import type { ReduceOp } from './reduce-op.js';
import type { WorldShape } from './world.js';

/** An all-reduce kernel: (tl, tensor, op, world shape, the entry's parsed params). */
export type AllReduceKernel = Kernel<[TensorDesc, ReduceOp, WorldShape, Record<string, unknown>]>;

/** A loaded, checked algorithm module. */
export interface AlgorithmModule {
  /** The file URL it was imported from (what every thread imports). */
  url: string;
  meta: AlgorithmMeta;
  /** Present when meta.provides is 'all_reduce'. */
  allReduce?: AllReduceKernel;
  /** The kernel of what it provides (export KERNEL_EXPORTS[provides]); absent for point_to_point. */
  kernel?: Kernel<never[]>;
}

/** A shipped algorithm: its name (the file name) and its module. */
export interface CatalogEntry extends AlgorithmModule {
  name: string;
}

const ALGORITHMS_DIR = new URL('./algorithms/', import.meta.url);

/** Sources run as .ts (tsx), the build as .js: list the files of this module's own kind. */
const MODULE_EXT = extname(fileURLToPath(import.meta.url));

/** Names of the shipped algorithms, sorted: the module files of the algorithms folder. */
export function shippedAlgorithmNames(): string[] {
  return readdirSync(ALGORITHMS_DIR)
    .filter((f) => extname(f) === MODULE_EXT && !f.endsWith(`.d${MODULE_EXT}`))
    .map((f) => f.slice(0, -MODULE_EXT.length))
    .sort();
}

/** The file URL of shipped algorithm `name`, or undefined when there is none. */
export function shippedAlgorithmUrl(name: string): string | undefined {
  return shippedAlgorithmNames().includes(name) ? new URL(`${name}${MODULE_EXT}`, ALGORITHMS_DIR).href : undefined;
}

const META_RULE: ExportRule = {
  name: 'meta',
  is: 'algorithm metadata made with defineAlgorithm',
  check: isAlgorithmMeta,
};

/** The kernel export a module providing `provides` must have. */
function kernelRule(provides: keyof typeof KERNEL_EXPORTS): ExportRule {
  return { name: KERNEL_EXPORTS[provides], is: `a kernel made with defineKernel, for an ${provides} module`, check: isKernel };
}

/** Loaded modules by URL: every allReduce asks, and import() walks the ESM loader each time. */
const loaded = new Map<string, Promise<AlgorithmModule>>();

/**
 * Import the algorithm module at file URL `url` and check its exports: `meta`,
 * and the kernel of what it provides (KERNEL_EXPORTS: `allReduce` for an
 * all_reduce module), none for point_to_point. A load failure is one of the
 * ERR_MODULE_* codes, a broken contract ERR_MODULE_EXPORT or
 * ERR_MODULE_DEFINITION (path, expected and
 * found exports).
 */
export function loadAlgorithmModule(url: string): Promise<AlgorithmModule> {
  let p = loaded.get(url);
  if (!p) {
    p = importAlgorithm(url);
    loaded.set(url, p);
    // A failed load is not cached: the file may be fixed and loaded again (tests do).
    p.catch(() => loaded.delete(url));
  }
  return p;
}

async function importAlgorithm(url: string): Promise<AlgorithmModule> {
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(url);
  } catch (e) {
    // defineAlgorithm runs while the module loads and cannot know its path: add it.
    if (e instanceof KernbenchError && e.code === 'ERR_MODULE_DEFINITION' && e.message.startsWith('defineAlgorithm:')) {
      throw new KernbenchError(e.code, `${fileURLToPath(url)}: ${e.message}`);
    }
    throw e;
  }
  const provides = isAlgorithmMeta(mod.meta) ? mod.meta.provides : 'all_reduce';
  checkExports(url, 'CCL algorithm', mod, provides === 'point_to_point' ? [META_RULE] : [META_RULE, kernelRule(provides)]);
  const meta = mod.meta as AlgorithmMeta;
  if (provides === 'point_to_point') return { url, meta };
  const kernel = mod[KERNEL_EXPORTS[provides]] as Kernel<never[]>;
  return { url, meta, kernel, ...(provides === 'all_reduce' ? { allReduce: kernel as unknown as AllReduceKernel } : {}) };
}

/** Every shipped algorithm, loaded, in name order. */
export async function algorithmCatalog(): Promise<CatalogEntry[]> {
  const names = shippedAlgorithmNames();
  return Promise.all(names.map(async (name) => ({ name, ...(await loadAlgorithmModule(shippedAlgorithmUrl(name) as string)) })));
}

/** What a rank needs to run the configured all-reduce. */
export interface AllReduceAlgorithm {
  /** The ccl.yaml `module:` as written (for messages). */
  module: string;
  allReduce: AllReduceKernel;
  /** The world it runs on (lib/ccl/placement.ts). */
  arrangement: Arrangement;
  /** The entry's parsed params: the kernel's last argument. */
  params: Readonly<Record<string, unknown>>;
  /** The directions its kernel sends on (DIRECTIONS indices), when its module declares them (meta.sends). */
  sends?: readonly number[];
}

/**
 * Load the all-reduce of a resolved CCL configuration (lib/ccl/resolve.ts
 * checked it before the run) on this thread. A point_to_point module is
 * ERR_WRONG_ALGORITHM: the configuration names something that is not an all-reduce.
 */
export async function loadAllReduce(ccl: Pick<ResolvedCcl, 'module' | 'module_url' | 'topology' | 'params'>): Promise<AllReduceAlgorithm> {
  const mod = await loadAlgorithmModule(ccl.module_url);
  if (mod.allReduce === undefined) {
    const choices = (await algorithmCatalog()).filter((a) => a.meta.provides === 'all_reduce').map((a) => a.name);
    throw new KernbenchError('ERR_WRONG_ALGORITHM', `CCL module '${ccl.module}' is not an all-reduce (${mod.meta.summary}); choose one of ${choices.join(', ')}, got '${ccl.module}'`);
  }
  const sends = mod.meta.sends?.map((d) => DIRECTIONS.indexOf(d));
  return { module: ccl.module, allReduce: mod.allReduce, arrangement: arrangementFor(mod.meta, ccl.module, ccl.topology, ccl.params), params: ccl.params, sends };
}

/** What a rank needs to run a collective other than all-reduce with a module (ccl.yaml `collectives:`, or the default). */
export interface CollectiveAlgorithm {
  /** The module as configured (a shipped name or a path), for messages. */
  module: string;
  meta: AlgorithmMeta;
  kernel: Kernel<never[]>;
  /** The module's parsed params: the kernel's last argument. */
  params: Readonly<Record<string, unknown>>;
}

/**
 * The module of collective `name` on this thread: the one ccl.yaml's
 * `collectives:` names (lib/ccl/resolve.ts checked it), else shipped module
 * `fallback`. A module that provides something else is ERR_CONFIG (resolve
 * refuses it before a run; this is the guard for a configuration made by hand).
 */
export async function loadCollective(ccl: Pick<ResolvedCcl, 'collective_modules'>, name: CollectiveName, fallback: string): Promise<CollectiveAlgorithm> {
  const chosen = ccl.collective_modules?.[name];
  const module = chosen?.module ?? fallback;
  const url = chosen?.module_url ?? shippedAlgorithmUrl(fallback);
  if (url === undefined) throw new KernbenchError('ERR_INTERNAL', `no shipped algorithm '${fallback}' for ${name}, got none in ${ALGORITHMS_DIR.href}`);
  const mod = await loadAlgorithmModule(url);
  if (mod.meta.provides !== name || mod.kernel === undefined) {
    throw new KernbenchError('ERR_CONFIG', `CCL module '${module}' for ${name} provides ${mod.meta.provides} (${mod.meta.summary}), got '${module}'`);
  }
  return { module, meta: mod.meta, kernel: mod.kernel, params: chosen?.params ?? {} };
}
