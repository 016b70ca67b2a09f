// The partner-based collectives against their textbook laws and the
// determinism contract (docs/algorithms/partners.md). On the ideal machine with a
// fully connected fabric (every ordered pair of SIPs on its own link, one link
// class: alpha = sip_sip latency, beta = its bandwidth; zero overheads), each
// algorithm's crit_ns is its alpha-beta law to 1e-6, the law computed here from
// the topology's numbers.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { CCL_FIXTURES, collectiveWorker, everyRank, type CollectiveCase } from './fixtures/ccl.js';
import { allReduceSweepWorker, PARTNER_FIXTURES, rootedSweepWorker, type RootedCase } from './fixtures/ccl-partners.js';
import { PEERS } from './helpers/all-to-all.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES, PARTNER_FIXTURES] });
t.teardown(() => rt.close());

const ideal = loadTopology(topologyPath('ideal'));
const a = ideal.timing.links.sip_sip.latency_ns;
const beta = ideal.timing.links.sip_sip.bandwidth_gb_s;
/** Bytes over the link class's bandwidth, in ns (GB/s = bytes per ns). */
const b = (bytes: number) => bytes / beta;
/** The ideal machine with every pair of its SIPs on its own link. */
const FULL = (p: number) => ['system.sips.topology=fully_connected', `system.sips.count=${p}`, ...PEERS(p)];
const log2 = Math.log2;

/** Laws, N bytes per rank (all-to-all: N input bytes, p blocks; gather/scatter: N bytes a block). */
const LAWS = {
  recursive_doubling_allreduce: (p: number, N: number) => log2(p) * (a + b(N)),
  rabenseifner_allreduce: (p: number, N: number) => 2 * log2(p) * a + 2 * ((p - 1) / p) * b(N),
  bruck_alltoall: (p: number, N: number) => log2(p) * (a + b(N / 2)),
  pairwise_alltoall: (p: number, N: number) => (p - 1) * (a + b(N / p)),
  binomial_reduce: (p: number, N: number) => log2(p) * (a + b(N)),
  binomial_gather: (p: number, N: number) => log2(p) * a + (p - 1) * b(N),
  binomial_scatter: (p: number, N: number) => log2(p) * a + (p - 1) * b(N),
};

const close = (got: number, law: number) => Math.abs(got - law) / law <= 1e-6;

/** The largest crit_ns over the ranks of one collective of `module` with `nElem` f32 elements per rank (a block for gather and scatter). */
async function crit(module: keyof typeof LAWS, p: number, nElem: number): Promise<number> {
  const sets = FULL(p);
  if (module.endsWith('allreduce')) {
    const r = await rt.session({ topology: 'ideal', threads: 1, sets: [...sets, `ccl.module=${module}`] }, (torch) =>
      torch.multiprocessing.spawn(allReduceSweepWorker, { args: [[{ op: 'sum', dtype: 'f32', nElem }]], nprocs: p }),
    );
    return Math.max(...r.value.map((rank) => rank.critNs[0]));
  }
  if (module.endsWith('alltoall')) {
    const r = await rt.session({ topology: 'ideal', threads: 1, sets: [...sets, `ccl.collectives.all_to_all.module=${module}`] }, (torch) =>
      torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: nElem / p, dtype: 'f32' } satisfies CollectiveCase], nprocs: p }),
    );
    return Math.max(...everyRank(r.value).map((v) => v.critNs));
  }
  const kind = module.replace('binomial_', '') as RootedCase['kind'];
  const r = await rt.session({ topology: 'ideal', threads: 1, sets }, (torch) => torch.multiprocessing.spawn(rootedSweepWorker, { args: [[{ kind, nElem, dtype: 'f32', root: 0 }]], nprocs: p }));
  return Math.max(...r.value.map((rank) => (rank[0] as { critNs: number }).critNs));
}

for (const module of Object.keys(LAWS) as (keyof typeof LAWS)[]) {
  t.test(`${module} on the fully connected ideal machine takes its textbook law to 1e-6`, async (t) => {
    for (const [p, nElem] of [
      [8, 8 * 1024],
      [4, 4 * 64],
    ]) {
      const got = await crit(module, p, nElem);
      const law = LAWS[module](p, nElem * 4);
      t.ok(close(got, law), `p = ${p}, N = ${nElem * 4} B: crit ${got} ns vs law ${law} ns`);
    }
  });
}

