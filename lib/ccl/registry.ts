// Runs on: host threads. Owns: which collective algorithm modules exist (the
// `module:` names a ccl.yaml entry may use), how each arranges its ranks, and
// loading one.
//
// Every all-reduce module exports `allReduce(tl, t, op, shape)`: one small
// interface, so a ccl.yaml entry can swap them (STYLE 14). `arrangement` tells
// Distributed.launchCollective which world to build (lib/ccl/placement.ts):
//   logical       from the entry's `topology`: ring_1d -> a ring of the ranks,
//                 torus_2d / mesh_2d_no_wrap -> the topology file's SIP grid
//   tree          a binary tree of the ranks in rank order
//   hierarchical  every shard PE of every rank, wired per SIP (lib/ccl/hierarchy.ts)
import type { SipTopologyKind } from '../config/topology-schema.js';
import { KernbenchError } from '../errors.js';
import { isKernel, type Kernel } from '../kernel/define.js';
import type { TensorDesc } from '../shm/tensor-desc.js';
import type { HierarchyRoot } from './hierarchy.js';
import type { ReduceOp } from './reduce-op.js';
import type { WorldShape } from './world.js';

/** How a collective's ranks are arranged into a world. */
export type Arrangement = { kind: 'logical'; topology: SipTopologyKind } | { kind: 'tree' } | { kind: 'hierarchical'; root: HierarchyRoot } | { kind: 'ring' };

interface ModuleInfo {
  /** File under lib/ccl, relative to this module. */
  file: string;
  /** `all_reduce` modules export allReduce; `point_to_point` ones are smoke tests with their own kernel. */
  provides: 'all_reduce' | 'point_to_point';
  arrangement: 'logical' | 'tree' | 'hierarchical_corner' | 'hierarchical_center';
  /** The ccl.yaml `topology` values the module accepts. */
  topologies: readonly SipTopologyKind[];
  /** One line for docs and errors. */
  summary: string;
}

/** Module name (as written in ccl.yaml) -> what it is. */
export const ALGORITHM_MODULES = {
  ring_allreduce: {
    file: './algorithms/ring_allreduce.js',
    provides: 'all_reduce',
    arrangement: 'logical',
    topologies: ['ring_1d'],
    summary: 'ring reduce-scatter + all-gather (docs/algorithms/ring_allreduce.md)',
  },
  mesh_allreduce: {
    file: './algorithms/mesh_allreduce.js',
    provides: 'all_reduce',
    arrangement: 'logical',
    topologies: ['torus_2d', 'mesh_2d_no_wrap'],
    summary: '2-D: rows then columns (docs/algorithms/mesh_allreduce.md)',
  },
  tree_allreduce: {
    file: './algorithms/tree_allreduce.js',
    provides: 'all_reduce',
    arrangement: 'tree',
    topologies: ['ring_1d'],
    summary: 'binary tree reduce + broadcast (docs/algorithms/tree_allreduce.md)',
  },
  hierarchical_allreduce: {
    file: './algorithms/hierarchical_allreduce.js',
    provides: 'all_reduce',
    arrangement: 'hierarchical_corner',
    topologies: ['ring_1d'],
    summary: 'PE -> cube -> SIP, rooted at the first cube (docs/algorithms/hierarchical_allreduce.md)',
  },
  hierarchical_allreduce_center: {
    file: './algorithms/hierarchical_allreduce.js',
    provides: 'all_reduce',
    arrangement: 'hierarchical_center',
    topologies: ['ring_1d'],
    summary: 'PE -> cube -> SIP, rooted at the centre cube (docs/algorithms/hierarchical_allreduce.md)',
  },
  hello_send: {
    file: './algorithms/hello_send.js',
    provides: 'point_to_point',
    arrangement: 'logical',
    topologies: ['ring_1d'],
    summary: 'point-to-point smoke test: rank 0 sends a tile to rank 1 (docs/algorithms/hello_send.md)',
  },
} as const satisfies Record<string, ModuleInfo>;

export type AlgorithmModule = keyof typeof ALGORITHM_MODULES;

export interface AllReduceAlgorithm {
  module: AlgorithmModule;
  allReduce: Kernel<[TensorDesc, ReduceOp, WorldShape]>;
  /** The world this algorithm runs on when the CCL entry names `topology`. */
  arrangement: Arrangement;
}

function infoOf(module: string): ModuleInfo & { name: AlgorithmModule } {
  if (!Object.hasOwn(ALGORITHM_MODULES, module)) {
    throw new KernbenchError('ERR_CONFIG', `unknown CCL algorithm module; known: ${Object.keys(ALGORITHM_MODULES).join(', ')}, got '${module}'`);
  }
  return { ...(ALGORITHM_MODULES[module as AlgorithmModule] as ModuleInfo), name: module as AlgorithmModule };
}

/** The arrangement of `module` for a CCL entry whose `topology` is `topology`. */
export function arrangementOf(module: string, topology: SipTopologyKind): Arrangement {
  const info = infoOf(module);
  if (!info.topologies.includes(topology)) {
    throw new KernbenchError('ERR_CONFIG', `CCL module '${module}' arranges ranks as ${info.topologies.join(' or ')} (ccl.yaml topology), got '${topology}'`);
  }
  switch (info.arrangement) {
    case 'logical':
      return { kind: 'logical', topology };
    case 'tree':
      return { kind: 'tree' };
    case 'hierarchical_corner':
      return { kind: 'hierarchical', root: 'corner' };
    case 'hierarchical_center':
      return { kind: 'hierarchical', root: 'center' };
    default: {
      const never: never = info.arrangement;
      throw new Error(`unknown arrangement ${String(never)}`);
    }
  }
}

/** Loaded algorithms by module and topology: every allReduce asks, and import() walks the ESM loader each time. */
const loaded = new Map<string, AllReduceAlgorithm>();

/** Load the all-reduce of `module` (ERR_CONFIG for unknown modules and for modules that are not all-reduces). */
export async function loadAlgorithm(module: string, topology: SipTopologyKind): Promise<AllReduceAlgorithm> {
  const key = `${module} ${topology}`;
  let algo = loaded.get(key);
  if (!algo) {
    algo = await importAlgorithm(module, topology);
    loaded.set(key, algo);
  }
  return algo;
}

async function importAlgorithm(module: string, topology: SipTopologyKind): Promise<AllReduceAlgorithm> {
  const info = infoOf(module);
  if (info.provides !== 'all_reduce') {
    throw new KernbenchError('ERR_CONFIG', `CCL module '${module}' is not an all-reduce (${info.summary}); choose one of ${allReduceModules().join(', ')}, got '${module}'`);
  }
  const arrangement = arrangementOf(module, topology);
  const mod = (await import(info.file)) as Record<string, unknown>;
  if (!isKernel(mod.allReduce)) throw new KernbenchError('ERR_INTERNAL', `CCL module '${module}' exports no allReduce kernel`);
  return { module: info.name, allReduce: mod.allReduce as Kernel<[TensorDesc, ReduceOp, WorldShape]>, arrangement };
}

/** Names of the modules that provide an all-reduce. */
export function allReduceModules(): AlgorithmModule[] {
  return (Object.keys(ALGORITHM_MODULES) as AlgorithmModule[]).filter((m) => ALGORITHM_MODULES[m].provides === 'all_reduce');
}
