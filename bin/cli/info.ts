// Runs on: main. Owns: the commands that run nothing — `kernbench list` (benches
// with their options, topologies, topology kinds, algorithms, ccl.yaml entries)
// and `kernbench validate` (the checks run makes before any thread starts).
import { DEFAULT_CCL_FILE, DEFAULT_TOPOLOGY, listTopologies, topologyPath } from '../../lib/config/paths.js';
import { loadCclFile } from '../../lib/config/load.js';
import { loadTopologyWithKind } from '../../lib/loader/topology-kind.js';
import { algorithmCatalog } from '../../lib/ccl/catalog.js';
import { paramsLine } from '../../lib/ccl/define-algorithm.js';
import { resolveRunCcl } from '../../lib/ccl/resolve.js';
import { optionInfos, optionsHelp } from '../../lib/bench/options.js';
import { listBenches, loadBench } from '../../lib/bench/registry.js';
import { checkSessionMemory, DEFAULT_THREADS } from '../../lib/config/plan.js';
import { benchAlgorithm } from '../../lib/bench/runner.js';
import type { RunConfig } from '../../lib/bench/contract.js';
import { sipKinds } from '../../lib/topology/kind-catalog.js';
import { commandHelp } from './help.js';
import { parseCommand } from './parse.js';

export async function cmdList(args: string[]): Promise<number> {
  if (parseCommand('list', args).values.help === true) {
    process.stdout.write(commandHelp('list'));
    return 0;
  }
  process.stdout.write('benches:\n');
  for (const name of listBenches()) {
    const { bench } = await loadBench(name);
    process.stdout.write(`  ${name.padEnd(20)} ${bench.description}\n`);
    for (const line of optionsHelp(optionInfos(bench.options), ' '.repeat(25))) process.stdout.write(`${line}\n`);
  }
  process.stdout.write('topologies:\n');
  for (const t of listTopologies()) process.stdout.write(`  ${t}\n`);
  process.stdout.write('SIP topology kinds (lib/topology/kinds; system.sips.topology):\n');
  const kinds = sipKinds();
  const kindWidth = Math.max(...kinds.map((k) => k.name.length));
  for (const k of kinds) {
    process.stdout.write(`  ${k.name.padEnd(kindWidth)}  ${k.summary}\n`);
    for (const line of k.diagram ?? []) process.stdout.write(`  ${' '.repeat(kindWidth)}  ${line}\n`);
  }
  process.stdout.write('algorithms (lib/ccl/algorithms; a ccl.yaml module: names one, or a path to your own):\n');
  const catalog = await algorithmCatalog();
  const cells = catalog.map((a) => [a.name, a.meta.provides, a.meta.topologies.join('|'), a.meta.summary, paramsLine(a.meta)]);
  const width = (c: number): number => Math.max(...cells.map((r) => r[c].length));
  for (const r of cells) process.stdout.write(`  ${r[0].padEnd(width(0))}  ${r[1].padEnd(width(1))}  ${r[2].padEnd(width(2))}  ${r[3]}${r[4] ? `; ${r[4]}` : ''}\n`);
  const ccl = loadCclFile(DEFAULT_CCL_FILE);
  process.stdout.write('ccl.yaml entries (topologies/ccl.yaml; --algorithm NAME):\n');
  const entries = Object.entries(ccl.algorithms);
  const nameWidth = Math.max(...entries.map(([a]) => a.length));
  for (const [a, e] of entries) {
    const params = Object.entries(e.params ?? {}).map(([k, x]) => ` ${k}=${String(x)}`).join('');
    const ws = e.world_size === undefined ? '' : ` world_size=${e.world_size}`;
    process.stdout.write(`  ${a.padEnd(nameWidth)}  ${e.module} on ${e.topology}${params}${ws}${a === ccl.defaults.algorithm ? ' (default)' : ''}\n`);
  }
  return 0;
}

/** The checks `run` makes before any thread starts (lib/ccl/resolve.ts), and nothing else. */
export async function cmdValidate(args: string[]): Promise<number> {
  const v = parseCommand('validate', args).values;
  if (v.help === true) {
    process.stdout.write(commandHelp('validate'));
    return 0;
  }
  const sets = (v.set as string[] | undefined) ?? [];
  const name = (v.topology as string | undefined) ?? DEFAULT_TOPOLOGY;
  const t = await loadTopologyWithKind(topologyPath(name), sets);
  const cclFile = (v.ccl as string | undefined) ?? DEFAULT_CCL_FILE;
  let algorithm = v.algorithm as string | undefined;
  if (typeof v.bench === 'string') {
    // With a bench: its default algorithm, and the algorithm it needs (as run checks it).
    const config: RunConfig = { topology: name, ccl: cclFile, threads: DEFAULT_THREADS, sets, algorithm, jitterSeed: null };
    algorithm = (await benchAlgorithm(await loadBench(v.bench), config)).config.algorithm;
  }
  const c = await resolveRunCcl(cclFile, { name, topology: t }, { algorithm, sets });
  checkSessionMemory(t, c);
  const params = Object.entries(c.params).map(([k, x]) => `${k}=${String(x)}`);
  process.stdout.write(`ok: ${t.name} (${t.system.sips.count} SIPs, ${t.system.sips.topology}); algorithm ${c.algorithm} (${c.module}${params.length ? ` ${params.join(' ')}` : ''})\n`);
  return 0;
}
