// Runs on: main. Owns: running one bench under one configuration — loading the
// files, opening sessions on the shared threads, computing each result's digest.
import { topologyPath, DEFAULT_CCL_FILE } from '../config/paths.js';
import { loadCcl, loadTopology } from '../config/load.js';
import type { Torch } from '../host/torch.js';
import { buildPlan } from '../sync/plan.js';
import { Session, ThreadResources } from '../session/session.js';
import type { BenchContext, BenchResult, RunConfig, SessionRun } from './contract.js';
import { runDigest } from './digest.js';
import { writeChromeTrace } from '../trace/chrome.js';
import { Machine } from '../topology/machine.js';
import { benchUrl, loadBench } from './registry.js';

export interface RunOutcome {
  results: (BenchResult & { digest: string })[];
}

export function resolveCclFor(config: RunConfig, topology = loadTopology(topologyPath(config.topology), config.sets)) {
  return loadCcl(config.ccl === 'default' ? DEFAULT_CCL_FILE : config.ccl, { algorithm: config.algorithm, sets: config.sets, topology });
}

/** Open a session for `config`, run `fn` with the main torch, end the session. */
export async function withSession<T>(resources: ThreadResources, config: RunConfig, spawnModules: string[], fn: (torch: Torch, s: Session) => Promise<T>): Promise<SessionRun<T>> {
  const topology = loadTopology(topologyPath(config.topology), config.sets);
  const ccl = resolveCclFor(config, topology);
  const plan = buildPlan({ topologyName: config.topology, topology, ccl, threads: config.threads, jitterSeed: config.jitterSeed, trace: config.trace !== undefined, noData: config.noData ?? false });
  const session = await Session.open(resources, plan);
  session.spawnModules.push(...spawnModules);
  let value: T;
  try {
    value = await fn(session.torch, session);
  } catch (e) {
    await session.end().catch(() => undefined);
    throw e;
  }
  const report = await session.end();
  if (config.trace !== undefined) {
    const hosts = [...Array.from({ length: plan.dims.hosts - 1 }, (_, r) => `rank ${r} host`), 'main host'];
    writeChromeTrace(config.trace, report.trace, new Machine(topology), hosts);
  }
  return { value, report, digest: runDigest([], report.records) };
}

export async function runBench(resources: ThreadResources, bench: string, config: RunConfig, log: (line: string) => void): Promise<RunOutcome> {
  const mod = await loadBench(bench);
  const ccl = resolveCclFor(config);
  const url = benchUrl(bench);
  const ctx: BenchContext = {
    bench,
    config,
    ccl,
    log,
    session: (overrides, fn) => withSession(resources, { ...config, ...overrides }, [url], fn),
  };
  if (mod.evaluate) {
    const results = await mod.evaluate(ctx);
    return { results: results.map((r) => ({ ...r, digest: runDigest(r.outputs ?? [], []) })) };
  }
  const run = mod.run;
  if (!run) throw new Error(`bench ${bench} has neither run nor evaluate`);
  const s = await withSession(resources, config, [url], (torch) => run(torch, ctx));
  return { results: s.value.map((r) => ({ ...r, digest: runDigest(r.outputs ?? [], s.report.records) })) };
}
