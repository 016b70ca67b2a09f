// Runs on: main (and any thread that starts threads of its own). Owns: the
// Node flags kernbench's threads start with — executors, the coordinator, and
// the benches' bare threads, which get the same flags so that they compare
// like with like.
import { availableParallelism } from 'node:os';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { RELEASE_FROM_RANKS } from './idle-heap.js';

/**
 * Node flags for our threads: the parent's, minus module hooks (--import,
 * --loader, --require) and minus the flags Workers refuse. A test runner's
 * instrumentation hooks would otherwise load into every executor and made each
 * thread's start-up seconds long.
 */
export function threadExecArgv(): string[] {
  setHeapFlags();
  return (threadFlags ??= acceptedByWorkers(withoutHooks(process.execArgv)));
}
let threadFlags: string[] | undefined;

/**
 * V8 heap sizing for the threads started from now on, set process-wide
 * before the first of them (Workers refuse V8 options in execArgv):
 *
 *   --heap-growing-percent=30  the old generation may grow to 1.3x what was
 *       live after a full collection before the next one (V8's default
 *       factor, up to 4x for a small heap, let an executor reach 60-140 MiB
 *       of old space around ~35 MiB live: a ring step's promises and handles
 *       outlive two scavenges while their rank waits, and die soon after);
 *   --max-semi-space-size=4    a 4 MiB nursery half instead of 16 MiB: both
 *       halves of a busy isolate's nursery end up resident, 16 MiB per
 *       executor at 8 MiB a half, 8 MiB at 4.
 *
 * Measured on the ring all-reduce at p = 1024 x 64 KiB, --threads 2
 * --no-data (docs/benchmarks.md, "Peak memory"): peak RSS 424 -> 258 MiB at
 * the same wall time within the load's noise, with a nursery half of 8 MiB;
 * 231-234 -> 206-214 MiB at 4 (with data 342-351 -> 317-331 MiB; --threads 1
 * 312-321 -> 301-303 MiB), the same user CPU time within the noise of three
 * runs each (2026-11-25, decision 0034). Neither is a cap: a run that needs
 * more heap gets it. Flags given on node's command line win: they are left as
 * they are.
 */
function setHeapFlags(): void {
  if (heapFlagsSet) return;
  heapFlagsSet = true;
  for (const [name, value] of HEAP_FLAGS) if (!givenOnCommandLine(name)) v8.setFlagsFromString(`${name}=${value}`);
}
let heapFlagsSet = false;
const SEMI_SPACE_MB = 4;
const HEAP_FLAGS: [string, number][] = [
  ['--heap-growing-percent', 30],
  ['--max-semi-space-size', SEMI_SPACE_MB],
];

/**
 * Old space an executor isolate may fill before its first full collection (MiB),
 * for a pool of `executors` threads (decision 0215). Each isolate's live set is
 * mostly the runtime itself (its modules and compiled code), whatever its share of
 * the ranks, and --heap-growing-percent sets the next full collection a fixed
 * fraction above it: so each executor of two ran as many full collections as one
 * executor does for every rank, and their concurrent marking was about half of
 * what a second thread added to a message's process CPU.
 * V8 skips full collections below an embedder-set initial old generation
 * (`--initial-old-space-size`): a floor on the limit, not a cap; a live set above
 * it (large p) grows by the percentage as before. The pool's isolates share
 * POOL_OLD_SPACE_FLOOR_MB, so only pools of a few threads get a floor, never
 * --threads rank's many isolates.
 * A pool started for a session of LARGE_SESSION_RANKS ranks or more gets none
 * (decision 0246): its spawns run for seconds, so the full collections a floor saves
 * are few against them, while its ranks' state and promoted garbage filled the floor
 * before the first one, in pages that collection left partly free for the rest of
 * the run.
 */
export function oldSpaceFloorMb(executors: number, ranks = 0): number {
  if (ranks >= LARGE_SESSION_RANKS) return 0;
  const floor = Math.min(ISOLATE_OLD_SPACE_FLOOR_MB, Math.floor(POOL_OLD_SPACE_FLOOR_MB / Math.max(1, executors)));
  return floor >= MIN_USEFUL_FLOOR_MB ? floor : 0;
}
const ISOLATE_OLD_SPACE_FLOOR_MB = 32;
const POOL_OLD_SPACE_FLOOR_MB = 64;
/** A floor near the runtime's own live set saves nothing: below this, V8's own limit is kept. */
const MIN_USEFUL_FLOOR_MB = 16;

/**
 * An executor's nursery half (MiB, V8's --max-semi-space-size) in a pool of
 * `executors` threads (decision 0232). The pool's isolates share POOL_SEMI_SPACE_MB, at
 * most SEMI_SPACE_MB each (HEAP_FLAGS) and at least 1: a pool of a few executors, each
 * with many ranks, keeps 4 MiB halves; --threads rank's isolates, one rank each, get
 * 1 MiB halves. Such an isolate's nursery had grown to both 4 MiB halves during
 * start-up (loading the runtime), resident for the rest of the run.
 * A pool started for a session of LARGE_SESSION_RANKS ranks or more shares one
 * executor's SEMI_SPACE_MB instead (decision 0246): two executors get 2 MiB halves.
 * A ring step's objects live until their rank's next step, while the other ranks of
 * its thread take theirs; an executor with half the ranks allocates half as much in
 * that time, so half the nursery gives its objects the same chance to die.
 */
export function semiSpaceMb(executors: number, ranks = 0): number {
  const pool = ranks >= LARGE_SESSION_RANKS ? SEMI_SPACE_MB : POOL_SEMI_SPACE_MB;
  return Math.max(1, Math.min(SEMI_SPACE_MB, Math.floor(pool / Math.max(1, executors))));
}
const POOL_SEMI_SPACE_MB = 16;
/** A session this large runs its spawns for seconds (lib/session/idle-heap.ts's RELEASE_FROM_RANKS): its pool's heap is sized for memory (decision 0246). */
export const LARGE_SESSION_RANKS = RELEASE_FROM_RANKS;

/**
 * Before a pool of `executors` threads starts: the isolates created from now on get
 * oldSpaceFloorMb (0: V8's own limit). Process-wide, read as each isolate starts, as
 * setHeapFlags' are; main's isolate exists already and keeps its own. A value given
 * on node's command line wins.
 */
export function setOldSpaceFloor(executors: number, ranks = 0): void {
  if (givenOnCommandLine('--initial-old-space-size')) return;
  v8.setFlagsFromString(`--initial-old-space-size=${oldSpaceFloorMb(executors, ranks)}`);
}

/** As setOldSpaceFloor, for the nursery: the isolates created from now on get semiSpaceMb(executors, ranks). */
export function setSemiSpace(executors: number, ranks = 0): void {
  setHeapFlags(); // first, or its default would later overwrite this
  if (givenOnCommandLine('--max-semi-space-size')) return;
  v8.setFlagsFromString(`--max-semi-space-size=${semiSpaceMb(executors, ranks)}`);
}

/**
 * Whether the isolates of a pool of `executors` threads, started for a session of
 * `ranks` ranks on `cores` cores, optimise on V8's background threads (decision
 * 0247). Not for a large session (LARGE_SESSION_RANKS) whose threads already
 * outnumber the cores (the executors, main and the coordinator): there a
 * background compile has no idle core to run on, so it only takes turns with the
 * ranks, and the compile zones it allocates stay in the background threads' malloc
 * arenas. Its isolates optimise on their own thread instead, between messages.
 */
export function concurrentCompile(executors: number, ranks: number, cores: number = availableParallelism()): boolean {
  return !(ranks >= LARGE_SESSION_RANKS && executors + 2 > cores);
}

/** As setOldSpaceFloor, for where the pool's isolates optimise: concurrentCompile. */
export function setConcurrentCompile(executors: number, ranks = 0, cores: number = availableParallelism()): void {
  if (givenOnCommandLine('--concurrent-recompilation') || givenOnCommandLine('--no-concurrent-recompilation')) return;
  v8.setFlagsFromString(concurrentCompile(executors, ranks, cores) ? '--concurrent-recompilation' : '--no-concurrent-recompilation');
}

/**
 * How much later than V8's default a function is optimised by TurboFan while a session
 * runs `executors` executor threads on `cores` cores (decision 0238): one step for every
 * ISOLATES_A_CORE isolates a core, from 1 to MAX_TIERING_FACTOR. V8 decides per isolate, as
 * if each had the machine to itself: a function is optimised after a fixed amount of its
 * bytecode ran in that isolate. Under --threads rank every isolate runs the same runtime
 * for one rank, so each optimises the same functions after 1/p of the work, on cores the
 * ranks need: at p = 64 on 2 cores, a third of the process's CPU over a ring all-reduce
 * was TurboFan compiling, and the code it made ran little before the run ended. Up to
 * ISOLATES_A_CORE a core, V8's default is kept: there the host barrier, small code run
 * many times (bench barrier_throughput, 16 ranks), lost more to later optimisation than
 * the compiles cost.
 */
export function tieringFactor(executors: number, cores: number): number {
  return Math.max(1, Math.min(MAX_TIERING_FACTOR, Math.floor(executors / (ISOLATES_A_CORE * Math.max(1, cores)))));
}
const ISOLATES_A_CORE = 8;
const MAX_TIERING_FACTOR = 16;

/**
 * The V8 flag that sets when TurboFan optimises a function, and its default, by V8's
 * major version: V8 11 (Node 20) counts bytecode run (`--interrupt-budget`), V8 12 and
 * later (Node 22, 24) calls (`--invocation-count-for-turbofan`). A V8 this table does
 * not know keeps its own tiering. test/tiering.test.ts checks each default against
 * `node --v8-options` of the node running it.
 */
export function tieringFlag(v8Version: string = process.versions.v8): { name: string; base: number } | undefined {
  const major = Number(v8Version.split('.')[0]);
  if (major === 11) return { name: '--interrupt-budget', base: 67584 };
  if (major >= 12 && major <= 13) return { name: '--invocation-count-for-turbofan', base: 3000 };
  return undefined;
}

/**
 * Before a session runs on `executors` executor threads: TurboFan's threshold for every
 * isolate of the process (V8's flags are process-wide and this one is read as functions
 * run), scaled by tieringFactor. Set again for each session, so a pool kept from a
 * --threads rank run and reused by a --threads 1 one gets V8's default back. A value
 * given on node's command line wins.
 */
export function setTiering(executors: number, cores: number = availableParallelism()): void {
  const flag = tieringFlag();
  if (flag === undefined || givenOnCommandLine(flag.name)) return;
  const value = flag.base * tieringFactor(executors, cores);
  if (value === tieringSet) return;
  v8.setFlagsFromString(`${flag.name}=${value}`);
  tieringSet = value;
}
let tieringSet: number | undefined;

/** Whether node's command line gave V8 flag `name` (`--a-b`, also as `--a_b`, with or without `=value`). */
function givenOnCommandLine(name: string): boolean {
  return process.execArgv.some((a) => a.split('=')[0].replace(/_/g, '-') === name);
}

/**
 * The environment for our threads: this one's, with NODE_OPTIONS less its
 * module hooks. A Worker reads NODE_OPTIONS from its env as a process does,
 * and tap sets it (`--import @tapjs/processinfo`, for the child processes it
 * tracks): every executor and the coordinator loaded the hook and recorded
 * each module it imported — under tap, three times the CPU time of a test
 * file that starts 32 threads (test/determinism.test.ts: 40 s -> 14 s). A copy
 * taken now, as a Worker's default env would be.
 */
export function threadEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const options = env.NODE_OPTIONS;
  if (options === undefined) return env;
  const kept = withoutHooks(splitNodeOptions(options))
    .map((a) => (a.includes(' ') ? `"${a}"` : a))
    .join(' ');
  if (kept === '') delete env.NODE_OPTIONS;
  else env.NODE_OPTIONS = kept;
  return env;
}

/** NODE_OPTIONS split as Node splits it: on spaces outside double quotes, which are removed. */
function splitNodeOptions(options: string): string[] {
  const out: string[] = [];
  for (const m of options.matchAll(/(?:[^\s"]+|"[^"]*")+/g)) out.push(m[0].replaceAll('"', ''));
  return out;
}

/**
 * The flags a Worker accepts. Workers refuse V8 options and process-wide ones
 * in execArgv (`node --max-old-space-size=8192 bin/kernbench.js ...` made
 * every run fail with ERR_WORKER_INVALID_EXEC_ARGV); those apply to the whole
 * process anyway. Ask Node once: a probe Worker given the flags plus one it
 * always refuses throws before it starts a thread, naming every refused flag.
 */
function acceptedByWorkers(flags: string[]): string[] {
  if (flags.length === 0) return flags;
  try {
    const probe = new Worker('', { eval: true, execArgv: [...flags, ALWAYS_REFUSED] });
    void probe.terminate(); // not expected: Node took the refused flag, so we cannot tell
  } catch (e) {
    const refused = /invalid execArgv flags: (.*)$/s.exec(e instanceof Error ? e.message : '');
    if ((e as { code?: unknown }).code === 'ERR_WORKER_INVALID_EXEC_ARGV' && refused) {
      const names = new Set(refused[1].split(', '));
      return flags.filter((f) => !names.has(f));
    }
  }
  return [];
}
/** A V8 option: Workers take heap limits through resourceLimits, never execArgv. */
const ALWAYS_REFUSED = '--max-old-space-size=64';

function withoutHooks(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  const hooks = ['--import', '--loader', '--experimental-loader', '--require', '-r'];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i];
    if (hooks.includes(a)) {
      i++; // the flag's value is the next argument
      continue;
    }
    if (hooks.some((h) => a.startsWith(`${h}=`))) continue;
    out.push(a);
  }
  return out;
}
