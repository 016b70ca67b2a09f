// Runs on: main thread. Owns: loading the configuration of a run: a topology
// file (with `--set` overrides) and a CCL file resolved to one algorithm.
//
// Every loader collects all problems of its input (YAML syntax errors, every
// schema issue, every bad `--set`) and throws them as ONE ConfigError; each
// problem names the file as given, `line:col`, the dotted path and ends with
// what was received. What comes back is a plain object validated by the zod
// schema; its type is the schema's `z.infer`.
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigError, KernbenchError, type ConfigProblem } from '../errors.js';
import { CclFileSchema, ResolvedCclSchema, TUNABLES, type CclFile, type MergedCcl } from './ccl-schema.js';
import { DEFAULT_CCL_FILE } from './paths.js';
import { issueProblems, sortProblems, type Locator } from './problems.js';
import { dottedPath, type PathKey } from './schema-path.js';
import { applySets, parseSet, setCovering, SET_SOURCE, splitSets, CCL_SET_PREFIX } from './sets.js';
import { TopologySchema, type Topology } from './topology-schema.js';
import { locate, readYamlSource, type YamlSource } from './yaml-source.js';
import { isKindModulePath } from '../topology/kind-catalog.js';

export { applySets, splitSets } from './sets.js';

/** Options of `resolveCcl` / `loadCcl`. */
export interface CclOptions {
  /** Algorithm entry to run (a CLI flag); default: a `ccl.algorithm=` set, else `defaults.algorithm`. */
  algorithm?: string;
  /** All `--set` overrides of the run; only the `ccl.`-prefixed ones are used here. */
  sets?: readonly string[];
  /** The run's topology: its `ccl:` section (if any) replaces the file's defaults. */
  topology?: Topology;
}

function fail(problems: ConfigProblem[]): never {
  throw new ConfigError('ERR_CONFIG', sortProblems(problems));
}

/** Point at `path` in `source` (or only name the file when there is no document). */
function fileLocator(file: string, source: YamlSource | undefined): Locator {
  return (path, at) => ({ file, path: dottedPath(path), ...(source ? locate(source, path, at) : {}) });
}

/**
 * Read `file`, apply `sets` (topology sets only: `ccl.` ones are left to the CCL
 * loader), validate, and return the value or throw one ConfigError with every problem.
 */
function loadYaml<S extends z.ZodType>(file: string, schema: S, sets: readonly string[], prepare?: Prepare): { value: z.infer<S>; source: YamlSource } {
  const { source, problems } = readYamlSource(file);
  if (source === undefined) fail(problems);
  const parsedSets = sets.map(parseSet);
  problems.push(...applySets(source.doc, sets, schema));
  const inFile = fileLocator(file, source);
  const locator: Locator = (path, at) =>
    setCovering(parsedSets, path) ? { file: SET_SOURCE, path: dottedPath(path) } : inFile(path, at);
  const js: unknown = source.doc.toJS({ maxAliasCount: 100 });
  if (prepare) problems.push(...prepare(js, (path) => setCovering(parsedSets, path) !== undefined, locator));
  const result = schema.safeParse(js, { reportInput: true });
  if (!result.success) problems.push(...issueProblems(result.error.issues, schema, locator));
  if (problems.length > 0 || !result.success) fail(problems);
  return { value: result.data, source };
}

/** Rewrites a file's parsed value before validation (`bySet`: was this path given by a `--set`?); returns problems. */
type Prepare = (value: unknown, bySet: (path: readonly PathKey[]) => boolean, locator: Locator) => ConfigProblem[];

/**
 * Load a topology file. `sets` may be the run's whole `--set` list: `ccl.` sets
 * are skipped here (resolveCcl takes them); every other set must name a topology
 * field. A kind named by path comes back as its module's file URL; until that
 * module is loaded on this thread its rules are not checked
 * (lib/loader/topology-kind.ts loadTopologyWithKind loads it, then checks).
 */
export function loadTopology(file: string, sets: readonly string[] = []): Topology {
  return loadYaml(file, TopologySchema, splitSets(sets).topology, (v, bySet, locator) => kindPathToUrl(v, file, bySet, locator)).value;
}

/**
 * `system.sips.topology: ./my_kind.ts` -> the module's file URL, resolved from the
 * topology file's folder (from the working directory when a `--set` gave it).
 */
function kindPathToUrl(value: unknown, file: string, bySet: (path: readonly PathKey[]) => boolean, locator: Locator): ConfigProblem[] {
  const sips = (value as { system?: { sips?: { topology?: unknown } } } | null)?.system?.sips;
  const name = sips?.topology;
  if (typeof name !== 'string' || name.startsWith('file:') || !isKindModulePath(name)) return [];
  const path = ['system', 'sips', 'topology'];
  const abs = isAbsolute(name) ? name : resolve(bySet(path) ? process.cwd() : dirname(resolve(file)), name);
  if (!existsSync(abs) || !statSync(abs).isFile()) return [{ ...locator(path, 'value'), message: `no such SIP topology kind module ${abs}, got '${name}'` }];
  (sips as { topology: string }).topology = pathToFileURL(abs).href;
  return [];
}

/**
 * Where each CclFile came from, so that resolveCcl can point problems of the
 * merged configuration back at the `line:col` of the entry or default that
 * supplied the bad value. Files built in memory have no entry; their problems
 * name the file and path without a line.
 */
const cclSources = new WeakMap<CclFile, YamlSource>();

/**
 * Where a path of `file` (a CclFile from loadCclFile) is written: `fileName`
 * and, when the file was read from disk, `line:col`. For checks made after
 * loading (lib/ccl/resolve.ts: modules, params).
 */
export function cclFileLocator(file: CclFile, fileName: string): Locator {
  return fileLocator(fileName, cclSources.get(file));
}

/** Load and validate a CCL file (`topologies/ccl.yaml`) without choosing an algorithm. */
export function loadCclFile(file: string): CclFile {
  const { value, source } = loadYaml(file, CclFileSchema, []);
  cclSources.set(value, source);
  return value;
}

/**
 * Choose an algorithm of `file` and merge its configuration with precedence
 * `--set ccl.<field>` > algorithm entry > the topology's `ccl:` section >
 * defaults, then validate the result.
 * The algorithm is `opts.algorithm`, else a `ccl.algorithm=` set, else
 * `defaults.algorithm`; naming one that is not in `algorithms` is a
 * ConfigError that lists the known ones. `fileName` names the file in problems.
 */
export function resolveCcl(file: CclFile, fileName: string, opts: CclOptions = {}): MergedCcl {
  return resolveCclLocated(file, fileName, opts).ccl;
}

/**
 * resolveCcl, plus where each field of the result came from: a Locator for
 * paths of the merged configuration (`world_size`, `params.root`) that points
 * at the `--set` that gave the value, else at the entry's or the defaults' line.
 */
export function resolveCclLocated(file: CclFile, fileName: string, opts: CclOptions = {}): { ccl: MergedCcl; name: string; locate: Locator } {
  const inFile = cclFileLocator(file, fileName);
  const sets = splitSets(opts.sets ?? []).ccl;
  const parsedSets = sets.map(parseSet);

  const algorithmSet = setCovering(parsedSets, ['algorithm']);
  if (opts.algorithm !== undefined && algorithmSet !== undefined && algorithmSet.value !== opts.algorithm) {
    throw new KernbenchError('ERR_CONFLICTING_FLAGS', `choose the algorithm once, got '${opts.algorithm}' and --set ${CCL_SET_PREFIX}${algorithmSet.text}`);
  }
  const known = Object.keys(file.algorithms);
  const [name, chosenBy]: [unknown, Omit<ConfigProblem, 'message'>] =
    opts.algorithm !== undefined
      ? [opts.algorithm, inFile(['algorithms'], 'key')]
      : algorithmSet !== undefined
        ? [algorithmSet.value, { file: SET_SOURCE, path: `${CCL_SET_PREFIX}algorithm` }]
        : [file.defaults.algorithm, inFile(['defaults', 'algorithm'], 'value')];
  if (typeof name !== 'string' || !Object.hasOwn(file.algorithms, name)) {
    fail([{ ...chosenBy, message: `unknown algorithm; expected one of ${known.join('|')}, got ${typeof name === 'string' ? `'${name}'` : String(name)}` }]);
  }
  const entry = file.algorithms[name];

  // Merge field by field, remembering which fields still hold a default, so a
  // problem points at the line that supplied the value (a `--set` is found by setCovering).
  const { algorithm: _defaultAlgorithm, ...defaults } = file.defaults;
  // A tunable the file leaves out takes kernbench's own default (topologies/ccl.yaml).
  const builtIn = TUNABLES.filter((k) => defaults[k] === undefined);
  const shipped = builtIn.length > 0 ? loadCclFile(DEFAULT_CCL_FILE).defaults : undefined;
  const merged: Record<string, unknown> = { algorithm: name, ...Object.fromEntries(builtIn.map((k) => [k, shipped?.[k]])), ...defaults };
  const fromDefaults = new Set(Object.keys(merged).filter((k) => k !== 'algorithm'));
  const fromTopology = new Set<string>();
  for (const [k, v] of Object.entries(opts.topology?.ccl ?? {})) {
    if (v === undefined) continue;
    merged[k] = v;
    fromDefaults.delete(k);
    fromTopology.add(k);
  }
  for (const [k, v] of Object.entries(entry)) {
    if (v === undefined) continue;
    fromTopology.delete(k);
    merged[k] = structuredClone(v); // sets write into it (params); the loaded file stays as read
    fromDefaults.delete(k);
  }
  const problems = applySets(merged, sets.filter((_, i) => parsedSets[i].path[0] !== 'algorithm'), ResolvedCclSchema, CCL_SET_PREFIX);

  const locator: Locator = (path: readonly PathKey[], at) => {
    if (setCovering(parsedSets, path)) return { file: SET_SOURCE, path: CCL_SET_PREFIX + dottedPath(path) };
    if (fromTopology.has(String(path[0]))) return { file: `topology ${opts.topology?.name}`, path: CCL_SET_PREFIX + dottedPath(path) };
    return fromDefaults.has(String(path[0])) ? inFile(['defaults', ...path], at) : inFile(['algorithms', name, ...path], at);
  };
  const result = ResolvedCclSchema.safeParse(merged, { reportInput: true });
  if (!result.success) problems.push(...issueProblems(result.error.issues, ResolvedCclSchema, locator));
  if (problems.length > 0 || !result.success) fail(problems);
  return { ccl: result.data, name, locate: locator };
}

/** loadCclFile + resolveCcl (no module checks: lib/ccl/resolve.ts does those). */
export function loadCcl(file: string, opts: CclOptions = {}): MergedCcl {
  return resolveCcl(loadCclFile(file), file, opts);
}
