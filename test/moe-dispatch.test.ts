// The MoE bench (benches/moe_dispatch.ts): expert-parallel dispatch and combine
// through allToAllSingle with the uneven splits of a seeded top-k router. On the
// ring, the torus and the switch every token's contributions come back through
// combine(dispatch(x)) marked by the experts it was routed to (the bench checks
// each element; 0 wrong); the load imbalance it reports is the router's; busbw is
// nccl-tests' all-to-all definition; one digest and crit_ns under --threads 1, 2
// and jitter; without peer channels it says which setting to add.
import t from 'tap';
import { route } from '../benches/moe_dispatch.js';
import { TestRuntime } from './helpers/run.js';
import { PEERS } from './helpers/all-to-all.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const OPTIONS = { tokens: 48, hidden: 24, experts: 12, topK: 3, seed: 5 };

for (const [topology, ws] of [['ring_1d_6', 6], ['torus_2d_2x3', 6], ['single_switch_8', 8]] as const) {
  t.test(`on ${topology} combine(dispatch(x)) gives each token its experts' contributions, and the imbalance is the router's`, async (t) => {
    const [r] = await rt.bench('moe_dispatch', { topology, threads: 1, sets: PEERS(ws), options: { ...OPTIONS, dtype: 'f16' } });
    const extra = r.extra ?? {};
    t.equal(extra.wrong, 0);
    t.ok(r.ok);
    t.equal(r.outputs?.length, ws, 'one combined buffer a rank');
    t.equal(r.outputs?.[0].length, OPTIONS.tokens * OPTIONS.topK * OPTIONS.hidden, "a row per (token, choice)");
    const perExpert = new Array<number>(OPTIONS.experts).fill(0);
    for (let rank = 0; rank < ws; rank++) for (const es of route(OPTIONS, rank)) for (const e of es) perExpert[e]++;
    const mean = (ws * OPTIONS.tokens * OPTIONS.topK) / OPTIONS.experts;
    t.equal(extra.expert_imbalance, Math.max(...perExpert) / mean);
    const bytes = OPTIONS.tokens * OPTIONS.topK * OPTIONS.hidden * 2;
    t.ok(Math.abs(Number(extra.dispatch_busbw_gb_s) - (bytes / Number(extra.dispatch_ns)) * ((ws - 1) / ws)) < 1e-9, 'busbw = S / t (n - 1) / n');
    t.equal(r.critNs, Number(extra.dispatch_ns) + Number(extra.combine_ns));
  });
}

t.test('the router gives each token top-k distinct experts, and a different seed routes differently', async (t) => {
  const a = route(OPTIONS, 2);
  t.ok(a.every((es) => es.length === 3 && new Set(es).size === 3 && es.every((e) => e >= 0 && e < 12)));
  t.notSame(route({ ...OPTIONS, seed: 6 }, 2), a);
  t.same(route(OPTIONS, 2), a, 'the same seed routes the same way');
});

t.test('moe_dispatch has one digest and crit_ns under --threads 1, 2 and jitter', async (t) => {
  const runs = [];
  for (const [threads, jitterSeed] of [[1, null], [2, null], [2, 4]] as const) {
    const [r] = await rt.bench('moe_dispatch', { topology: 'single_switch_8', threads, jitterSeed, sets: PEERS(8), options: OPTIONS });
    runs.push({ crit: r.critNs, extra: r.extra, outputs: r.outputs?.map((o) => Array.from(o)) });
  }
  t.same(runs[1], runs[0]);
  t.same(runs[2], runs[0]);
});

t.test('without peer channels moe_dispatch names the setting (ERR_BENCH_OPTION_UNFIT)', async (t) => {
  await t.rejects(rt.bench('moe_dispatch', { topology: 'ring_1d_6', threads: 1, options: OPTIONS }), { code: 'ERR_BENCH_OPTION_UNFIT' });
});
