// Runs on: main thread (tap). Covers: the shipped bench ccl_allreduce's per-rank check
// leaves no optimised code behind call after call. Its loops over a rank's 16 384
// values once sat in the function that built the result: V8 compiled the loop's
// frame on the spot (on-stack replacement) before the code after it had run, and
// that code left again on every later rank's call (`node --trace-deopt`: one bailout
// a rank), so at p = 1024 the checks ran mostly in the interpreter, ~0.3 s of an
// executor's CPU. A count of V8's bailouts, not a time.
import t from 'tap';
import { kernbenchProcess } from './helpers/cli.js';

/** Bailouts a function name had in a run's `--trace-deopt` lines, every isolate's together. */
function bailoutsByFunction(trace: string): Map<string, number> {
  const by = new Map<string, number>();
  for (const m of trace.matchAll(/bailout \(kind: [^)]*\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >]*)/g)) {
    by.set(m[1], (by.get(m[1]) ?? 0) + 1);
  }
  return by;
}

t.test('ccl_allreduce at p = 16 with 64 KiB a rank: no function bails out more than a few times', async (t) => {
  for (const threads of ['1', '2']) {
    const r = await kernbenchProcess(
      ['run', '--bench', 'ccl_allreduce', '--topology', 'ideal', '--set', 'system.sips.count=16', '--set', 'ccl.n_elem=16384', '--dtype', 'f32', '--threads', threads],
      { nodeFlags: ['--trace-deopt', '--trace-opt'] },
    );
    t.equal(r.exitCode, 0, `--threads ${threads}: the run succeeds`);
    t.match(r.stdout, /ring_allreduce \(ws=16\): 16 OK/);
    const by = bailoutsByFunction(r.stdout);
    t.match(r.stdout, /completed (optimizing|compiling)/, "V8's trace reached stdout (it optimises something in every run)");
    const many = [...by].filter(([, n]) => n > 4);
    t.same(many, [], `--threads ${threads}: every function bailed out at most 4 times (one a rank would be 16)`);
  }
});
