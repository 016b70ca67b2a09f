// Runs on: main (and any thread that starts threads of its own). Owns: the
// Node flags kernbench's threads start with — executors, the coordinator, and
// the benches' bare threads, which get the same flags so that they compare
// like with like.
import { Worker } from 'node:worker_threads';

/**
 * Node flags for our threads: the parent's, minus module hooks (--import,
 * --loader, --require) and minus the flags Workers refuse. A test runner's
 * instrumentation hooks would otherwise load into every executor and made each
 * thread's start-up seconds long.
 */
export function threadExecArgv(): string[] {
  return (threadFlags ??= acceptedByWorkers(withoutHooks(process.execArgv)));
}
let threadFlags: string[] | undefined;

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
