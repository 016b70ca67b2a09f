// simgrid_ring's kernbench process does the work of SimGrid's program and
// nothing more: one ring all-reduce, 2 (p - 1) p messages at one piece each. It
// ran allreduce_perf until 2026-11-27, which times nccl-tests' two groups (two
// all-reduces and a barrier), so kernbench was timed on twice SimGrid's work.
// The process is run here from the argv the bench builds (--json added), without
// SimGrid: its wall time is measured by hand only (docs/benchmarks.md).
import { execa } from 'execa';
import './helpers/cli.js'; // the node processes started here run without tap's NODE_OPTIONS hooks
import t from 'tap';
import { kernbenchArgv } from '../benches/simgrid_ring.js';

const run = async (argv: string[]) => {
  const [node, ...args] = argv;
  const { stdout } = await execa(node, [...args, '--json']);
  return JSON.parse(stdout) as { ok: boolean; critNs: number; stats: { total: { messages: number } } };
};

t.test('simgrid_ring times one all-reduce in kernbench, as SimGrid does', async (t) => {
  const p = 6;
  const sets = [`system.sips.count=${p}`];
  const bytes = 4 * p * 16;
  const once = await run(kernbenchArgv({ topology: 'ideal', ccl: 'default', sets }, bytes, 1));
  t.equal(once.ok, true);
  t.equal(once.stats.total.messages, 2 * (p - 1) * p, 'the ring all-reduce sends 2 (p - 1) p messages, and nothing else does');
  // The same all-reduce's virtual time as allreduce_perf's in-place group at that size.
  const { stdout } = await execa(process.execPath, [argvScript(), 'run', '--bench', 'allreduce_perf', '--topology', 'ideal', '--set', sets[0], '--min-bytes', String(bytes), '--max-bytes', String(bytes), '--no-data', '--json']);
  const perf = JSON.parse(stdout) as { critNs: number; stats: { total: { messages: number } } };
  t.equal(once.critNs, perf.critNs, 'crit_ns as allreduce_perf reports it');
  t.equal(perf.stats.total.messages, 2 * once.stats.total.messages, 'allreduce_perf runs two all-reduces');
  const two = await run(kernbenchArgv({ topology: 'ideal', ccl: 'default', sets }, bytes, 2));
  t.equal(two.critNs, once.critNs, 'the same virtual time under --threads 2');
});

/** bin/kernbench.js, as the bench's argv names it. */
function argvScript(): string {
  return kernbenchArgv({ topology: 'ideal', ccl: 'default', sets: [] }, 4, 1)[1];
}
