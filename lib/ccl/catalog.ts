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
import type { TensorDesc } from '../shm/tensor-desc.js';
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { isAlgorithmMeta, type AlgorithmMeta } from './define-algorithm.js';
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

const ALL_REDUCE_RULE: ExportRule = {
  name: 'allReduce',
  is: 'a kernel made with defineKernel, for an all_reduce module',
  check: isKernel,
};

/** Loaded modules by URL: every allReduce asks, and import() walks the ESM loader each time. */
const loaded = new Map<string, Promise<AlgorithmModule>>();

/**
 * Import the algorithm module at file URL `url` and check its exports: `meta`,
 * and `allReduce` unless meta says the module is point_to_point. A load failure
 * is one of the ERR_MODULE_* codes, a broken contract ERR_MODULE_EXPORT or
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
  const pointToPoint = isAlgorithmMeta(mod.meta) && mod.meta.provides === 'point_to_point';
  checkExports(url, 'CCL algorithm', mod, pointToPoint ? [META_RULE] : [META_RULE, ALL_REDUCE_RULE]);
  const meta = mod.meta as AlgorithmMeta;
  return { url, meta, ...(pointToPoint ? {} : { allReduce: mod.allReduce as AllReduceKernel }) };
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
  return { module: ccl.module, allReduce: mod.allReduce, arrangement: arrangementFor(mod.meta, ccl.module, ccl.topology, ccl.params), params: ccl.params };
}
