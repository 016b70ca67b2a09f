// Runs on: main thread. Owns: the one step that turns a CCL file, the run's
// topology and its flags into the CCL configuration of a run, before any
// thread starts. `kernbench run` (lib/bench/runner.ts) and `kernbench validate`
// share it, so validate finds everything run would refuse.
//
// Checked, in this order (each stage reports all of its problems at once):
//   1. the file's schema and the chosen entry (lib/config/load.ts)
//   2. every entry's `module:` (and a `--set ccl.module=`) names a shipped
//      algorithm or an existing .ts/.mts/.js/.mjs file (paths in the file are
//      relative to the file's folder; a --set path to the working directory)
//   3. each module loads and exports what its kind requires
//      (an ERR_MODULE_* code: the file, and for a broken contract the exports
//      expected and found)
//   4. each module accepts its entry's `topology` (a `collectives:` module:
//      provides that collective), and its `params` fit the module's params schema
//   5. the chosen configuration fits the topology: world_size <= SIP count,
//      and a logical arrangement fits its kind's grid rule (a 2-D kind needs the
//      topology's w x h grid: lib/ccl/placement.ts logicalGrid)
// Problems of stages 1, 2, 4 and 5 are one ConfigError (ERR_CONFIG) whose
// problems point at file:line:col or at the `--set` flag.
// A module the run names (its all-reduce, or a `collectives:` one) whose meta
// says it addresses peers gets peer channels for the whole world:
// ccl.peer_ranks rises to the world size when it is lower (decision 0105).
import { dirname, resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { cclFileLocator, loadCclFile, resolveCclLocated, type CclOptions } from '../config/load.js';
import { formatReceived, issueProblems, sortProblems, type Locator } from '../config/problems.js';
import type { PathKey } from '../config/schema-path.js';
import { SET_SOURCE } from '../config/sets.js';
import type { SipTopologyKind, Topology } from '../config/topology-schema.js';
import { ConfigError, formatConfigProblem, KernbenchError, type ConfigProblem } from '../errors.js';
import { isPathLike, userModuleUrl } from '../loader/user-module.js';
import { Machine } from '../topology/machine.js';
import { loadAlgorithmModule, shippedAlgorithmNames, shippedAlgorithmUrl, type AlgorithmModule } from './catalog.js';
import { COLLECTIVES, type AlgorithmMeta, type CollectiveName, type ParamsSchema } from './define-algorithm.js';
import { arrangementFor, logicalGrid } from './placement.js';

/** One use of a module: a ccl.yaml entry, or the merged configuration of the run. */
interface ModuleUse {
  module: string;
  topology: SipTopologyKind;
  params: Record<string, unknown>;
  /** A `collectives:` choice: the collective its module must provide (its topology is not checked). */
  collective?: CollectiveName;
  /** Where a path of this use is written. */
  at: (path: readonly PathKey[], how?: 'value' | 'key') => Omit<ConfigProblem, 'message'>;
}

/** The topology of the run, as the resolve step needs it. */
export interface RunTopology {
  /** How the topology was named (`default`, a path): for messages. */
  name: string;
  topology: Topology;
}

function fail(problems: ConfigProblem[]): never {
  // The run's merged configuration repeats its entry: say each problem once.
  const unique = new Map(problems.map((p) => [formatConfigProblem(p), p]));
  throw new ConfigError('ERR_CONFIG', sortProblems([...unique.values()]));
}

/**
 * The CCL configuration of a run on `topo`: entry `opts.algorithm` (else a
 * `ccl.algorithm=` set, else `defaults.algorithm`) of `cclFile`, merged with
 * the `ccl.` sets, its module loaded and checked and its params parsed. Every
 * entry of the file is checked (stages 2-4), so a broken entry is found
 * whichever one runs.
 */
export async function resolveRunCcl(cclFile: string, topo: RunTopology, opts: CclOptions = {}): Promise<ResolvedCcl> {
  const file = loadCclFile(cclFile);
  const { ccl, locate } = resolveCclLocated(file, cclFile, { topology: topo.topology, ...opts });
  const inFile = cclFileLocator(file, cclFile);
  const fileDir = dirname(resolvePath(cclFile));

  const run: ModuleUse = { module: ccl.module, topology: ccl.topology, params: ccl.params, at: (p, how = 'value') => locate(p, how) };
  const uses: ModuleUse[] = [
    ...Object.entries(file.algorithms).map(([name, e]): ModuleUse => ({
      module: e.module,
      topology: e.topology,
      params: e.params ?? {},
      at: (p, how = 'value') => inFile(['algorithms', name, ...p], how),
    })),
    run,
  ];
  // The `collectives:` choices: the defaults', each entry's and the run's.
  type Choices = NonNullable<typeof ccl.collectives>;
  const choiceUses = (choices: Choices | undefined, at: ModuleUse['at']): ModuleUse[] =>
    COLLECTIVES.flatMap((name) => {
      const c = choices?.[name];
      return c === undefined ? [] : [{ module: c.module, topology: ccl.topology, params: c.params ?? {}, collective: name, at: (p, how = 'value') => at(['collectives', name, ...p], how) }];
    });
  uses.push(...choiceUses(file.defaults.collectives, (p, how = 'value') => inFile(['defaults', ...p], how)));
  for (const [name, e] of Object.entries(file.algorithms)) uses.push(...choiceUses(e.collectives, (p, how = 'value') => inFile(['algorithms', name, ...p], how)));
  const runChoices = choiceUses(ccl.collectives, run.at);
  uses.push(...runChoices);

  // 2. names and paths
  const problems: ConfigProblem[] = [];
  const urls = new Map<ModuleUse, string>();
  for (const use of uses) {
    const where = use.at(['module']);
    const base = where.file === SET_SOURCE ? process.cwd() : fileDir;
    const url = moduleUrl(use.module, base, problems, where);
    if (url !== undefined) urls.set(use, url);
  }
  if (problems.length > 0) fail(problems);

  // 3. load and check each module once, in file order
  const modules = new Map<string, AlgorithmModule>();
  for (const use of uses) {
    const url = urls.get(use) as string;
    if (modules.has(url)) continue;
    try {
      modules.set(url, await loadAlgorithmModule(url));
    } catch (e) {
      // A module that cannot be used (an ERR_MODULE_* usage error): say which line of ccl.yaml names it.
      if (e instanceof KernbenchError && e.isUsage) {
        throw new KernbenchError(e.code, `${formatConfigProblem({ ...use.at(['module']), message: e.message })}`);
      }
      throw e;
    }
  }

  // 4. topology and params of every use
  const parsed = new Map<ModuleUse, Record<string, unknown>>();
  for (const use of uses) {
    const { meta } = modules.get(urls.get(use) as string) as AlgorithmModule;
    if (use.collective !== undefined) {
      if (meta.provides !== use.collective) {
        problems.push({ ...use.at(['module']), message: `module '${use.module}' provides ${meta.provides}, not ${use.collective} (${meta.summary}), got '${use.module}'` });
        continue;
      }
      const params = parseParams(meta, use, problems);
      if (params !== undefined) parsed.set(use, params);
      continue;
    }
    if (!meta.topologies.includes(use.topology)) {
      problems.push({ ...use.at(['topology']), message: `module '${use.module}' accepts topology ${meta.topologies.join('|')}, got '${use.topology}'` });
      continue;
    }
    const params = parseParams(meta, use, problems);
    if (params === undefined) continue;
    try {
      arrangementFor(meta, use.module, use.topology, params);
      parsed.set(use, params);
    } catch (e) {
      if (!(e instanceof KernbenchError) || e.code !== 'ERR_CCL_ARRANGEMENT') throw e;
      problems.push({ ...use.at(['params']), message: e.message });
    }
  }
  if (problems.length > 0) fail(problems);

  // 5. the run's configuration on this topology
  const url = urls.get(run) as string;
  const { meta } = modules.get(url) as AlgorithmModule;
  const sips = topo.topology.system.sips.count;
  const worldSize = ccl.world_size ?? sips;
  if (worldSize > sips) {
    problems.push({ ...run.at(['world_size']), message: `expected at most the SIP count of topology '${topo.name}' (system.sips.count = ${sips}), got ${worldSize}` });
  } else if (meta.arrangement === 'logical') {
    const grid = logicalGrid(new Machine(topo.topology), ccl.topology, worldSize);
    if ('problem' in grid) {
      const at = grid.at === 'topology' || ccl.world_size === undefined ? run.at(['topology']) : run.at(['world_size']);
      problems.push({ ...at, message: `module '${ccl.module}' on topology '${topo.name}': ${grid.problem}` });
    }
  }
  if (problems.length > 0) fail(problems);
  const chosen = [run, ...runChoices];
  const peers = chosen.some((use) => modules.get(urls.get(use) as string)?.meta.peers === true);
  const collectiveModules = Object.fromEntries(runChoices.map((use) => [use.collective, { module: use.module, module_url: urls.get(use) as string, params: parsed.get(use) as Record<string, unknown> }]));
  return {
    ...ccl,
    params: parsed.get(run) as Record<string, unknown>,
    module_url: url,
    ...(peers && (ccl.peer_ranks ?? 0) < worldSize ? { peer_ranks: worldSize } : {}),
    ...(runChoices.length > 0 ? { collective_modules: collectiveModules } : {}),
  };
}

/** The file URL `module` names (a shipped name or a path from `base`), or undefined after pushing a problem. */
function moduleUrl(module: string, base: string, problems: ConfigProblem[], where: Omit<ConfigProblem, 'message'>): string | undefined {
  if (isPathLike(module)) {
    try {
      return userModuleUrl(module, base, 'module');
    } catch (e) {
      if (!(e instanceof KernbenchError) || (e.code !== 'ERR_MODULE_MISSING' && e.code !== 'ERR_MODULE_FORMAT')) throw e;
      problems.push({ ...where, message: e.message.replace(/^module: /, '') });
      return undefined;
    }
  }
  const url = shippedAlgorithmUrl(module);
  if (url === undefined) {
    problems.push({ ...where, message: `unknown algorithm module; expected one of ${shippedAlgorithmNames().join('|')} or a path to a .ts, .mts, .js or .mjs file, got ${formatReceived(module)}` });
  }
  return url;
}

/** `use.params` parsed by the module's schema (defaults filled in), or undefined after pushing problems. */
function parseParams(meta: AlgorithmMeta, use: ModuleUse, problems: ConfigProblem[]): Record<string, unknown> | undefined {
  const schema = meta.params;
  if (schema === undefined) {
    const keys = Object.keys(use.params);
    for (const k of keys) problems.push({ ...use.at(['params', k], 'key'), message: `module '${use.module}' takes no params, got unknown key '${k}'` });
    return keys.length > 0 ? undefined : {};
  }
  // Unknown keys are mistakes (a misspelt `root` would silently mean the default).
  const strict = (typeof schema.strict === 'function' ? schema.strict() : schema) as ParamsSchema;
  const result = strict.safeParse(use.params, { reportInput: true });
  if (result.success) return result.data as Record<string, unknown>;
  const locate: Locator = (path, how) => use.at(['params', ...path], how);
  problems.push(...issueProblems(result.error.issues, strict as z.ZodType, locate));
  return undefined;
}
