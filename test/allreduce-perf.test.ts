// The nccl-tests style benches (issue 4 item 8, issue 27 item 1): nccl-tests'
// layout, parsed the way public nccl-tests parsers do; out-of-place and in-place
// groups measured by their own runs and checked; busbw = algbw x nccl-tests'
// factor for the collective; K/M/G sizes; deterministic across layouts.
import t from 'tap';
import { floatCell, formatG } from '../benches/nccl/format.js';
import { parseByteSize } from '../lib/bench/options.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

/** A result row as nccl-tests parsers read it: 5 fields, then time algbw busbw #wrong twice. */
const ROW = /^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+|N\/A)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+|N\/A)\s*$/;
const AVG = /^# Avg bus bandwidth\s*: ([\d.e+-]+)/;

interface Row {
  size: number;
  count: number;
  type: string;
  redop: string;
  root: number;
  groups: { time: number; algbw: number; busbw: number; wrong: string }[];
}

function parse(lines: string[]): Row[] {
  return lines.flatMap((l) => {
    const m = ROW.exec(l);
    if (!m) return [];
    const g = (k: number): Row['groups'][number] => ({ time: Number(m[k]), algbw: Number(m[k + 1]), busbw: Number(m[k + 2]), wrong: m[k + 3] });
    return [{ size: Number(m[1]), count: Number(m[2]), type: m[3], redop: m[4], root: Number(m[5]), groups: [g(6), g(10)] }];
  });
}

const over = { topology: 'ring_1d_6', sets: ['ccl.world_size=3'], options: { 'min-bytes': '64', 'max-bytes': '4K', 'step-factor': '4' } };

t.test("allreduce_perf prints nccl-tests' layout: parameter line, group header, units line, 13-column rows, the two closing lines last", async (t) => {
  const [r] = await rt.bench('allreduce_perf', over);
  t.ok(r.ok);
  const rows = parse(r.lines);
  t.equal(rows.length, r.lines.filter((l) => !l.startsWith('#')).length, 'every line that is not a comment is a row the regex reads');
  t.same(rows.map((x) => x.size), [64, 256, 1024, 4096], 'sizes from min to max by the factor, 4K read as 4096');
  t.match(r.lines[1], /^# nThread 1 nGpus 3 minBytes 64 maxBytes 4096 step: 4\(factor\) warmup iters: 0 iters: 1 agg iters: 1 validation: 1 graph: 0/);
  const header = r.lines.findIndex((l) => l.includes('out-of-place'));
  t.match(r.lines[header], /^#\s+out-of-place\s+in-place\s*$/);
  t.same(r.lines[header + 1].slice(1).trim().split(/\s+/), ['size', 'count', 'type', 'redop', 'root', 'time', 'algbw', 'busbw', '#wrong', 'time', 'algbw', 'busbw', '#wrong']);
  t.same(r.lines[header + 2].slice(1).trim().split(/\s+/), ['(B)', '(elements)', '(us)', '(GB/s)', '(GB/s)', '(us)', '(GB/s)', '(GB/s)']);
  t.same(r.lines.slice(-2).map((l) => l.replace(/[\d.]+ $/, 'X')), ['# Out of bounds values : 0 OK', '# Avg bus bandwidth    : X'], 'nothing after the closing lines');
  for (const x of rows) {
    t.same([x.count, x.type, x.redop, x.root], [x.size / 4, 'float', 'sum', -1]);
    for (const g of x.groups) {
      t.equal(g.wrong, '0');
      t.ok(Math.abs(g.algbw - x.size / (g.time * 1000)) < 0.01, `algbw of ${x.size}`);
      t.ok(Math.abs(g.busbw - (g.algbw * 2 * 2) / 3) < 0.01, `busbw of ${x.size}`);
    }
  }
  const avg = Number(AVG.exec(r.lines[r.lines.length - 1])?.[1]);
  t.ok(Math.abs(avg - Number(r.extra?.avgBusbwGBs)) < 1e-4, 'the average bus bandwidth line carries the mean of every group');
});

t.test('each group is its own run: the table holds both groups measured, each checked against its own buffer', async (t) => {
  const [r] = await rt.bench('allreduce_perf', over);
  const cols = r.table?.columns ?? [];
  const at = (row: (string | number)[], c: string): string | number => row[cols.indexOf(c)];
  for (const row of r.table?.rows ?? []) {
    t.equal(typeof at(row, 'oop_time_us'), 'number', 'numbers as numbers');
    t.equal(at(row, 'oop_wrong'), 0);
    t.equal(at(row, 'ip_wrong'), 0);
    t.ok(Number(at(row, 'oop_time_us')) > 0 && Number(at(row, 'ip_time_us')) > 0);
  }
});

const FACTORS: [string, (ws: number) => number, (size: number, count: number, ws: number) => boolean, string, number][] = [
  ['allgather_perf', (ws) => (ws - 1) / ws, (size, count, ws) => size === count * ws * 4, 'none', -1],
  ['reducescatter_perf', (ws) => (ws - 1) / ws, (size, count, ws) => size === count * ws * 4, 'sum', -1],
  ['broadcast_perf', () => 1, (size, count) => size === count * 4, 'none', 1],
  ['alltoall_perf', (ws) => (ws - 1) / ws, (size, count, ws) => size === count * 4 && count % ws === 0, 'none', -1],
];
for (const [bench, factor, sizeRule, redop, root] of FACTORS) {
  t.test(`${bench}: nccl-tests' size, count, redop and root columns, busbw = algbw x its factor, no wrong values in either group`, async (t) => {
    const [r] = await rt.bench(bench, { ...over, sets: ['ccl.world_size=4'], options: { ...over.options, ...(bench === 'broadcast_perf' ? { root: '1' } : {}) } });
    t.ok(r.ok, r.lines.slice(-2).join(' '));
    const rows = parse(r.lines);
    t.equal(rows.length, 4);
    for (const x of rows) {
      t.ok(sizeRule(x.size, x.count, 4), `size ${x.size} for count ${x.count}`);
      t.same([x.redop, x.root], [redop, root]);
      for (const g of x.groups) {
        t.equal(g.wrong, '0');
        t.ok(Math.abs(g.busbw - g.algbw * factor(4)) < 0.01, `busbw of ${x.size}`);
      }
    }
  });
}

t.test('alltoall_perf with peer channels (the pairwise exchange) is right out of place and in place, as the ring is', async (t) => {
  const [r] = await rt.bench('alltoall_perf', { ...over, sets: ['ccl.world_size=4', 'ccl.peer_ranks=4'] });
  t.ok(r.ok, r.lines.slice(-2).join(' '));
  const rows = parse(r.lines);
  t.equal(rows.length, 4);
  for (const x of rows) t.same(x.groups.map((g) => g.wrong), ['0', '0'], `size ${x.size}`);
});

t.test('every reduction op gives exact results in half, out of place and in place', async (t) => {
  for (const op of ['sum', 'prod', 'min', 'max', 'avg']) {
    const [r] = await rt.bench('allreduce_perf', { topology: 'ring_1d_6', threads: 1, sets: ['ccl.world_size=5'], options: { 'min-bytes': '32', 'max-bytes': '512', op, dtype: 'half' } });
    t.ok(r.ok, `${op}: ${r.lines.slice(-2).join(' ')}`);
    t.ok(parse(r.lines).every((x) => x.type === 'half'), 'nccl-tests names the type');
  }
});

t.test('allreduce_perf and allgather_perf give the same digest and lines under --threads 1, rank, pe and under jitter', async (t) => {
  for (const bench of ['allreduce_perf', 'allgather_perf']) {
    const small = { ...over, options: { ...over.options, 'max-bytes': '1024' } };
    const runs = [];
    for (const v of [{ threads: 1 }, { threads: 'rank' as const }, { threads: 'pe' as const }, { threads: 'rank' as const, jitterSeed: 6 }]) {
      const [r] = await rt.bench(bench, { ...small, ...v });
      runs.push({ digest: r.digest, lines: r.lines });
    }
    for (const r of runs.slice(1)) t.same(r, runs[0], bench);
  }
});

t.test('sizes take K, M and G (powers of 1024) as nccl-tests does; anything else is refused', async (t) => {
  t.same(['8', '1K', '64k', '1M', '2G', '1.5K', '1e3'].map(parseByteSize), [8, 1024, 65536, 1 << 20, 2 ** 31, 1536, 1000]);
  t.same(['1.5', '0x40', 'abc', '1T', '', '-1K'].map(parseByteSize), new Array(6).fill(undefined));
});

t.test("numbers are printed as C's %g and nccl-tests' getFloatStr print them", async (t) => {
  t.same([0, 1, 0.5, 1234.5678, 0.000123456, 0.0000123, 1234567, 100000].map(formatG), ['0', '1', '0.5', '1234.57', '0.000123456', '1.23e-05', '1.23457e+06', '100000']);
  t.same([floatCell(7.9, 7), floatCell(12345.678, 7), floatCell(123456.7, 7), floatCell(12345678, 7), floatCell(0.004, 6)], ['   7.90', '12345.7', ' 123457', '1.2e+07', '  0.00']);
});
