// Runs on: main. Owns: running one bench under one configuration — loading the
// files, opening sessions on the shared threads, computing each result's digest.
import { topologyPath, DEFAULT_CCL_FILE, VERSION } from '../config/paths.js';
import { loadTopologyWithKind } from '../loader/topology-kind.js';
import { resolveRunCcl } from '../ccl/resolve.js';
import type { Torch } from '../host/torch.js';
import { buildPlan } from '../config/plan.js';
import { Session } from '../session/session.js';
import { ThreadResources } from '../session/thread-resources.js';
import type { BenchContext, BenchResult, RunConfig, SessionRun } from './contract.js';
import { runDigest } from './digest.js';
import { writeChromeTrace } from '../trace/chrome.js';
import { eventLog } from '../trace/event-log.js';
import { mergeTraceData } from '../trace/recorder.js';
import { runStats, sumStats, type RunStats } from '../trace/stats.js';
import type { SessionReport } from '../session/session.js';
import { Machine } from '../topology/machine.js';
import { ConfigError, KernbenchError } from '../errors.js';
import { loadAlgorithmModule } from '../ccl/catalog.js';
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { parseBenchOptions } from './options.js';
import { progressIntervalMs, sessionProgress } from './progress.js';
import { loadBench, type LoadedBench } from './registry.js';

export interface RunOutcome {
  results: (BenchResult & { digest: string })[];
  /** Backpressure statistics summed over the run's sessions, when config.stats (docs/backpressure.md). */
  stats?: RunStats;
}

/** The topology and CCL configuration of `config`, every configuration problem found before any thread starts (lib/ccl/resolve.ts). */
export async function resolveRunConfig(config: RunConfig) {
  const topology = await loadTopologyWithKind(topologyPath(config.topology), config.sets);
  const ccl = await resolveRunCcl(config.ccl === 'default' ? DEFAULT_CCL_FILE : config.ccl, { name: config.topology, topology }, { algorithm: config.algorithm, sets: config.sets });
  return { topology, ccl };
}

/** Open a session for `config`, run `fn` with the main torch once, end the session. */
export async function withSession<T>(resources: ThreadResources, config: RunConfig, spawnModules: string[], fn: (torch: Torch, s: Session) => Promise<T>): Promise<SessionRun<T>> {
  const { topology, ccl } = await resolveRunConfig(config);
  // Every thread records (lib/trace/recorder.ts) for the trace, the statistics and the log alike.
  const record = config.trace !== undefined || config.stats === true || config.eventLog !== undefined;
  const plan = buildPlan({ topologyName: config.topology, topology, ccl, threads: config.threads, jitterSeed: config.jitterSeed, trace: record, noData: config.noData ?? false, checkRaces: config.checkRaces ?? false, maxVirtualTimePs: config.maxVirtualTimePs });
  const machine = new Machine(topology);
  const session = await Session.open(resources, plan);
  session.spawnModules.push(...spawnModules);
  let value: T;
  // Progress for a person watching (--threads and jitter do not change what is read, only when).
  const progress = config.progress;
  const ticker = progress ? setInterval(() => progress(sessionProgress(session)), progressIntervalMs()) : undefined;
  ticker?.unref();
  try {
    value = await fn(session.torch, session);
  } catch (thrown) {
    clearInterval(ticker);
    // A run stopped by the virtual-time limit fails with its report, whatever fn made of the kernel's error.
    const e = session.stoppedError() ?? thrown;
    const report = await session.end().catch(() => undefined);
    if (config.eventLog) config.eventLog(logLines([...session.failedEpochs, ...(report ? [report] : [])], machine));
    throw e;
  }
  clearInterval(ticker);
  const report = await session.end();
  const epochs = [...session.failedEpochs, report];
  if (config.eventLog) config.eventLog(logLines(epochs, machine));
  const stats = config.stats === true ? sumStats(epochs.map((r) => runStats(mergeTraceData(r.trace), machine))) : undefined;
  if (config.trace !== undefined) {
    const hosts = [...Array.from({ length: plan.dims.hosts - 1 }, (_, r) => `rank ${r} host`), 'main host'];
    writeChromeTrace(config.trace, report.trace, machine, hosts, { kernbench_version: VERSION });
  }
  return { value, report, digest: runDigest([], report.records), ...(stats ? { stats } : {}) };
}

/** The event log of a session's epochs (a failed spawn ends one; docs/trace.md), a header line before each that logged something when there are several. */
function logLines(epochs: SessionReport[], machine: Machine): string[] {
  return epochs.flatMap((r, i) => {
    const lines = eventLog(mergeTraceData(r.trace), machine);
    if (epochs.length === 1 || lines.length === 0) return lines;
    return [`# epoch ${i + 1} of ${epochs.length}${i + 1 < epochs.length ? ' (ended by a failed spawn)' : ''}`, ...lines];
  });
}

/** The bench's options for `config`: `config.options` (and the `config.dtype` shorthand) through its schema. */
export function benchOptions(loaded: LoadedBench, config: RunConfig): Record<string, unknown> {
  const given: Record<string, unknown> = { ...(config.dtype !== undefined ? { dtype: config.dtype } : {}), ...(config.options ?? {}) };
  return parseBenchOptions(loaded.name, loaded.bench.options, given) as Record<string, unknown>;
}

/**
 * `config` with the bench's default algorithm when --algorithm is not given, and
 * its CCL configuration, refused (ERR_WRONG_ALGORITHM, before any thread starts) when its
 * algorithm is not what the bench runs (BenchSpec.algorithm): an all-reduce
 * bench given a point-to-point module would fail inside every rank.
 */
export async function benchAlgorithm(loaded: LoadedBench, config: RunConfig): Promise<{ config: RunConfig; ccl: ResolvedCcl }> {
  const need = loaded.bench.algorithm;
  const withDefault = need?.default !== undefined && config.algorithm === undefined ? { ...config, algorithm: need.default } : config;
  const { ccl } = await resolveRunConfig(withDefault);
  if (need !== undefined) {
    const { meta } = await loadAlgorithmModule(ccl.module_url);
    const wrong = meta.provides !== need.provides ? `provides ${meta.provides}` : need.arrangement !== undefined && meta.arrangement !== need.arrangement ? `has arrangement ${meta.arrangement}` : undefined;
    if (wrong !== undefined) {
      const wanted = `${need.provides}${need.arrangement === undefined ? '' : ` with arrangement ${need.arrangement}`}`;
      const file = withDefault.ccl === 'default' ? DEFAULT_CCL_FILE : withDefault.ccl;
      throw new ConfigError('ERR_WRONG_ALGORITHM', [{ file, path: `algorithms.${ccl.algorithm}.module`, message: `bench ${loaded.name} runs an algorithm that provides ${wanted}; module '${ccl.module}' ${wrong}, got --algorithm ${ccl.algorithm}` }]);
    }
  }
  return { config: withDefault, ccl };
}

/**
 * A session's synchronisations between threads, per IPCQ message (KERNBENCH_SYNC_COUNTS=1 logs
 * one line a session; decision 0126): how many publishes crossed threads, and what they cost.
 */
export function syncLine(r: SessionReport): string {
  const c = r.sync;
  const lp = r.linkPieces;
  const per = (n: number): string => (r.messages > 0 ? (n / r.messages).toFixed(4) : '-');
  const publishes = c.publishesLocal + c.publishesRemote;
  return `sync: ${r.messages} messages, ${c.crossThreadMessages} between threads (${per(c.crossThreadMessages)}), ${publishes} publishes (${c.publishesRemote} to another thread: ${publishes > 0 ? ((100 * c.publishesRemote) / publishes).toFixed(2) : '0'} %); per message: ${per(c.publishesRemote)} remote publishes, ${per(c.rings)} doorbell rings, ${per(c.notifies)} notifies, ${per(c.parks)} parks, ${per(c.coordinatorRings)} coordinator rings, ${per(r.coordinatorPasses)} coordinator passes (${r.linkSnapshotsFailed} link passes without a consistent snapshot), ${per(c.stateChanges)} actor state changes; shared-link pieces: ${lp.alone} alone at once, ${lp.released} held then alone, ${lp.arbitrated} through the arbiter (${lp.handed} of them held first)`;
}

/** Run the bench `bench` (a shipped bench's name or a path to a bench module, see loadBench) under `config`. */
export async function runBench(resources: ThreadResources, bench: string | LoadedBench, given: RunConfig, log: (line: string) => void): Promise<RunOutcome> {
  const loaded = typeof bench === 'string' ? await loadBench(bench) : bench;
  const mod = loaded.bench;
  const { config, ccl } = await benchAlgorithm(loaded, given);
  const options = benchOptions(loaded, config);
  const sessionStats: RunStats[] = [];
  const ctx: BenchContext = {
    bench: loaded.name,
    options,
    config,
    ccl,
    log,
    session: async (overrides, fn) => {
      const s = await withSession(resources, { ...config, ...overrides }, [loaded.url], fn);
      if (s.stats) sessionStats.push(s.stats);
      if (process.env.KERNBENCH_SYNC_COUNTS === '1') log(syncLine(s.report));
      return s;
    },
  };
  const stats = (): { stats?: RunStats } => (config.stats === true ? { stats: sumStats(sessionStats) } : {});
  if (mod.evaluate) {
    const results = await mod.evaluate(ctx);
    return { results: results.map((r) => ({ ...r, digest: runDigest(r.outputs ?? [], []) })), ...stats() };
  }
  const run = mod.run;
  if (!run) throw new KernbenchError('ERR_INTERNAL', `bench ${loaded.name} has neither run nor evaluate, got neither`);
  const s = await ctx.session({}, (torch) => run(torch, ctx));
  return { results: s.value.map((r) => ({ ...r, digest: runDigest(r.outputs ?? [], s.report.records) })), ...stats() };
}
