// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: where a ring message's instructions go on the executors' threads, by kind:
// V8's compiler, its young and old collections, and the rest (the runtime's own code and
// the builtins it calls), a message in steady state. It counts ./ring-rounds.ts twice
// under callgrind, at two round counts, and subtracts, so that start-up cancels; the
// executors are the `threads` largest threads but main's. A count does not depend on the
// host's load, which moves wall time by 2x (docs/benchmarks.md, "Counting instructions
// instead of time").
//
//   node dist/benches/sim/instruction-split.js [--p 256] [--threads 1] [--rounds 1,3]
//     [--set PATH=VALUE ...] [--node-flag FLAG ...] [--keep DIR]
//
// Both counts run at once (two valgrind processes: a few minutes at p = 256). Under
// node's --predictable the compiler and the collector run on the isolate's own thread,
// so their instructions are in the executors' counts. Builtins are named only with
// `--node-flag --no-short-builtin-calls` (V8 otherwise runs a copy callgrind cannot
// name): then the atomics, promise and write-barrier builtins get their own lines.
// `--keep DIR` keeps the callgrind files there (callgrind_annotate reads them).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** Kinds of instructions, by the function's name in callgrind_annotate's list; the first that matches wins. */
export const KINDS: readonly (readonly [string, RegExp])[] = [
  // With the parser's UTF-16 search, the bytecode readers and writers, and the code cache's
  // serializers, which move between counts of one build with what gets compiled when
  // (decision 0290); not v8::ValueSerializer, which copies messages between threads.
  ['compiler', /compiler::|Parser|Scanner::|turboshaft|maglev|AstValueFactory|CalculateLineEnds|internal::Serializer|CodeSerializer|Deserializer<|interpreter::|find_if<unsigned short const\*/i],
  ['young collection', /Scaveng|Evacuat|SemiSpace|ShouldBePromoted|Pretenuring|IterateObjectCache|OnMoveEvent/],
  ['old collection', /Mark|Sweep|Compactor/],
  ['write barrier', /RecordWrite/],
  ['atomics builtins', /Builtins_Atomics/],
  ['promise builtins', /Builtins_\w*(Promise|Microtask|Reaction|Await)/],
];
export const REST = 'the rest';

/** One thread's instructions by kind (and `total`), from `callgrind_annotate --inclusive=no` output. */
export function splitByKind(annotated: string): Map<string, number> {
  const out = new Map<string, number>([['total', 0], ...KINDS.map(([k]) => [k, 0] as [string, number]), [REST, 0]]);
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replace(/,/g, ''));
    const name = m[2];
    if (name.includes('PROGRAM TOTALS')) {
      out.set('total', n);
      continue;
    }
    const kind = KINDS.find(([, re]) => re.test(name))?.[0] ?? REST;
    out.set(kind, (out.get(kind) ?? 0) + n);
  }
  // Functions under callgrind_annotate's threshold are left out of its list: they go to the rest.
  const listed = [...out].filter(([k]) => k !== 'total').reduce((a, [, v]) => a + v, 0);
  out.set(REST, (out.get(REST) ?? 0) + (out.get('total') ?? 0) - listed);
  return out;
}

/** The executors' files: the `threads` largest by instructions, leaving out main's (callgrind's thread 1, `-01`). */
export function executorFiles(files: readonly { name: string; total: number }[], threads: number): string[] {
  return files
    .filter((f) => !f.name.endsWith('-01'))
    .sort((a, b) => b.total - a.total)
    .slice(0, threads)
    .map((f) => f.name);
}

function annotate(file: string): string {
  const r = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`callgrind_annotate ${file} exited with ${r.status}: ${r.stderr}`);
  return r.stdout;
}

function count(dir: string, rounds: number, p: number, threads: number, sets: string[], nodeFlags: string[]): Promise<void> {
  const script = fileURLToPath(new URL('./ring-rounds.js', import.meta.url));
  const args = ['--tool=callgrind', '--separate-threads=yes', '--cache-sim=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, `r${rounds}.out`)}`, process.execPath, '--predictable', ...nodeFlags, script, String(p), String(threads), String(rounds), ...sets];
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`valgrind ... ring-rounds.js ${p} ${threads} ${rounds} exited with ${code}:\n${err}`))));
  });
}

/** The executors' instructions by kind at `rounds`, summed over their threads. */
function executorsAt(dir: string, rounds: number, threads: number): { files: string[]; kinds: Map<string, number> } {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(`r${rounds}.out-`))
    .map((f) => ({ name: f, kinds: splitByKind(annotate(join(dir, f))) }));
  const chosen = executorFiles(files.map((f) => ({ name: f.name, total: f.kinds.get('total') ?? 0 })), threads);
  const kinds = new Map<string, number>();
  for (const f of files.filter((x) => chosen.includes(x.name))) for (const [k, v] of f.kinds) kinds.set(k, (kinds.get(k) ?? 0) + v);
  return { files: chosen, kinds };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      p: { type: 'string', default: '256' },
      threads: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '1,3' },
      set: { type: 'string', multiple: true, default: [] },
      'node-flag': { type: 'string', multiple: true, default: [] },
      keep: { type: 'string' },
    },
  });
  const p = Number(values.p);
  const threads = Number(values.threads);
  const [a, b] = values.rounds.split(',').map(Number);
  if (!Number.isInteger(p) || p < 2) throw new Error(`--p must be an integer of at least 2, got '${values.p}'`);
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`--threads must be a number of executor threads (1, 2, ...), got '${values.threads}'`);
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b <= a) throw new Error(`--rounds takes two round counts A,B with 0 <= A < B, got '${values.rounds}'`);
  const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'instruction-split-'));
  mkdirSync(dir, { recursive: true });
  try {
    await Promise.all([count(dir, a, p, threads, values.set, values['node-flag']), count(dir, b, p, threads, values.set, values['node-flag'])]);
    const lo = executorsAt(dir, a, threads);
    const hi = executorsAt(dir, b, threads);
    const messages = 2 * (p - 1) * p * (b - a);
    const per = (k: string): number => ((hi.kinds.get(k) ?? 0) - (lo.kinds.get(k) ?? 0)) / messages;
    console.log(`ring all-reduce, p = ${p}, --threads ${threads}${values.set.length ? `, ${values.set.map((s) => `--set ${s}`).join(' ')}` : ''}: instructions a message on the executors' threads (${lo.files.join(' ')} and ${hi.files.join(' ')}), rounds ${b} less rounds ${a} over ${messages} messages`);
    console.log(`  ${'total'.padEnd(20)} ${per('total').toFixed(0).padStart(8)}`);
    console.log(`  ${'without the compiler'.padEnd(20)} ${(per('total') - per('compiler')).toFixed(0).padStart(8)}`);
    for (const k of [...KINDS.map(([x]) => x), REST]) console.log(`  ${k.padEnd(20)} ${per(k).toFixed(0).padStart(8)}`);
  } finally {
    if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
