#!/usr/bin/env node
// Runs on: main of its own process. Owns: what each isolate of one kernbench
// process loads, counted from the real run rather than from an import of one
// entry point: the command runs under strace, and the JavaScript files each
// thread resolves (Node's module loader stats every file it resolves on the
// thread that imports it; its reads go to the libuv pool) are that isolate's
// modules. A thread is named by the entry point it resolves: main (the command's
// own), the coordinator (coordinator-worker.js), an executor (executor-worker.js),
// the watchdog of a run with a timeout (watchdog-thread.js); any other thread that
// loads JavaScript is listed as another thread.
// Decision 0205 and docs/benchmarks.md "What a thread costs to start" use it.
//
//   node scripts/isolate-modules.mjs [--list] -- node bin/kernbench.js run --bench ccl_allreduce ...
//
// Prints, per isolate, the module files (ES and CommonJS), their bytes of
// source, and how many come from dist/ and from each package.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const list = args[0] === '--list';
const command = args.slice(args.indexOf('--') + 1);
if (args.indexOf('--') < 0 || command.length === 0) throw new Error('usage: isolate-modules.mjs [--list] -- COMMAND ...');

const dir = mkdtempSync(join(tmpdir(), 'isolate-modules-'));
const trace = join(dir, 'strace.txt');
try {
  const r = spawnSync('strace', ['-ff', '-qq', '-e', 'trace=openat,statx,newfstatat,stat,lstat', '-o', trace, ...command], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${command.join(' ')} exited with ${r.status}`);
  // One trace file a thread (-ff), so no call is split across lines by another thread's.
  const files = new Map(); // thread id -> Set of real paths
  const pathOf = /^(?:statx|newfstatat|stat|lstat)\((?:AT_FDCWD, )?"([^"]+\.(?:js|mjs|cjs))".*S_IFREG/;
  for (const name of readdirSync(dir).filter((n) => n.startsWith('strace.txt.'))) {
    const tid = Number(name.slice('strace.txt.'.length));
    const set = new Set();
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const m = pathOf.exec(line);
      if (!m) continue;
      try {
        set.add(realpathSync(m[1]));
      } catch {
        // gone since: not a module of the run
      }
    }
    if (set.size > 0) files.set(tid, set);
  }
  const roleOf = (set) => {
    for (const f of set) if (f.endsWith('/coordinator/coordinator-worker.js')) return 'coordinator';
    for (const f of set) if (f.endsWith('/executor/executor-worker.js')) return 'executor';
    for (const f of set) if (f.endsWith('/session/watchdog-thread.js')) return 'watchdog';
    return undefined;
  };
  // Node's main thread is the process's first: its thread id is the process id, the smallest of its threads.
  const firstTid = Math.min(...files.keys());
  for (const [tid, set] of files) {
    const role = tid === firstTid ? 'main' : (roleOf(set) ?? 'another thread');
    const groups = {};
    let bytes = 0;
    for (const f of set) {
      bytes += statSync(f).size;
      const pkg = /node_modules\/(@[^/]+\/[^/]+|[^/]+)\//.exec(f);
      const g = pkg ? pkg[1] : f.includes('/dist/') ? 'dist' : 'other';
      groups[g] = (groups[g] ?? 0) + 1;
    }
    process.stdout.write(`${JSON.stringify({ thread: tid, isolate: role, modules: set.size, kB: Math.round(bytes / 1000), ...groups })}\n`);
    if (list) for (const f of [...set].sort()) process.stdout.write(`  ${f}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
