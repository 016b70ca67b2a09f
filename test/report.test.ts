// Runs on: main thread (tap). Covers: the HTML report (issue 27 item 5) —
// `sweep --html` and `report FILE.json...` write one self-contained page, and in
// real headless Chromium it loads with no console message, draws both charts
// (a line per series) and the topology diagram; a screenshot is kept under
// out/ci/ (.ci/run prints where). Without Chromium the browser test FAILS,
// saying how to install it: a report nobody opened is not tested.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { assertUsageError, kernbench, ROOT } from './helpers/cli.js';

const run = promisify(execFile);
const SCREENSHOT = join(ROOT, 'out', 'ci', 'report.png');
const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** Headless Chromium with nothing reaching the network, a fresh profile, console messages on stderr. */
async function chromium(browser: string, args: string[]): Promise<{ stdout: string; console: string[] }> {
  const profile = mkdtempSync(join(tmpdir(), 'kernbench-chromium-'));
  try {
    const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`, '--enable-logging=stderr', '--v=0'];
    const r = await run(browser, [...flags, ...args], { timeout: 60_000, maxBuffer: 64 << 20 });
    // Every console call and uncaught error of the page is one `:CONSOLE` line (the page itself logs nothing).
    return { stdout: r.stdout, console: r.stderr.split('\n').filter((l) => l.includes(':CONSOLE')) };
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

const SWEEP = ['sweep', '--bench', 'ccl_allreduce', '--topology', 'torus_2d_2x3', '--over', 'ccl.algorithm=mesh_allreduce,ring_allreduce', '--over', 'ccl.n_elem=64,4096'];

t.test('sweep --html writes one self-contained page: the table, both charts\' data, the topology, the parameters and version, a link per trace', async (t) => {
  const dir = t.testdir();
  const page = join(dir, 'sweep.html');
  const r = await kernbench([...SWEEP, '--html', page, '--trace-dir', join(dir, 'traces')]);
  t.equal(r.exitCode, 0, r.stderr);
  const html = readFileSync(page, 'utf8');
  t.notMatch(html, /<(link|img|iframe)\b|src="|@import|url\(/, 'nothing loaded from anywhere: no link, image, frame, src or CSS url');
  t.match(html, "Content-Security-Policy\" content=\"default-src 'none'", 'the page forbids itself any fetch');
  t.equal((html.match(/<tr>/g) ?? []).length, 1 + 4, 'a header and one row per grid point');
  t.match(html, /<figcaption>torus_2d_2x3: 6 SIPs, torus_2d<\/figcaption><svg /);
  t.match(html, /kernbench version<\/dt><dd>\d+\.\d+\.\d+/);
  for (let k = 0; k < 4; k++) {
    t.ok(existsSync(join(dir, 'traces', `point-${k}.json`)), `trace of point ${k}`);
    t.match(html, `href="traces/point-${k}.json"`, 'linked relative to the page');
  }
  t.match(html, 'ui.perfetto.dev');
});

t.test('report FILE.json... makes the page from saved sweep --json results; a file that is not one exits 2', async (t) => {
  const dir = t.testdir();
  const saved = await kernbench([...SWEEP, '--json']);
  t.equal(saved.exitCode, 0, saved.stderr);
  writeFileSync(join(dir, 'sweep.json'), saved.stdout);
  const r = await kernbench(['report', join(dir, 'sweep.json'), '--html', join(dir, 'r.html')]);
  t.equal(r.exitCode, 0, r.stderr);
  const html = readFileSync(join(dir, 'r.html'), 'utf8');
  t.equal((html.match(/<tr>/g) ?? []).length, 1 + 4);
  t.match(html, '"series":["mesh_allreduce on torus_2d_2x3","ring_allreduce on torus_2d_2x3"]', 'one series per algorithm');
  writeFileSync(join(dir, 'bad.json'), '{"hello": 1}\n');
  const bad = await kernbench(['report', join(dir, 'bad.json'), '--html', join(dir, 'bad.html')]);
  assertUsageError(t, bad, 'ERR_REPORT_INPUT');
  t.match(bad.stderr, 'bad.json:1');
});

t.test('in headless Chromium the page loads with no console message and draws both charts and the topology; a screenshot is kept', async (t) => {
  const browser = BROWSERS.find((b) => existsSync(b));
  if (browser === undefined) {
    t.fail(`NO BROWSER: the report was not opened. Install Chromium (Debian: apt-get install -y chromium; .ci/run does), looked for ${BROWSERS.join(', ')}`);
    return;
  }
  const dir = t.testdir();
  const page = join(dir, 'sweep.html');
  t.equal((await kernbench([...SWEEP, '--html', page])).exitCode, 0);
  mkdirSync(join(ROOT, 'out', 'ci'), { recursive: true });
  rmSync(SCREENSHOT, { force: true });
  // One start does both: the DOM after the script ran on stdout, and the screenshot.
  const dom = await chromium(browser, ['--dump-dom', '--window-size=1400,2000', `--screenshot=${SCREENSHOT}`, `file://${page}`]);
  t.same(dom.console, [], 'no console message, error or uncaught exception');
  t.match(dom.stdout, /<body[^>]* data-charts="2"/, 'the script drew both charts');
  const chart = (id: string): string => /<svg id="([^"]+)"[\s\S]*?<\/svg>/g.exec(dom.stdout.slice(dom.stdout.indexOf(`<svg id="${id}"`)))?.[0] ?? '';
  for (const id of ['chart-time', 'chart-busbw']) {
    const svg = chart(id);
    t.equal((svg.match(/<path [^>]*class="series"/g) ?? []).length, 2, `${id}: a line per algorithm`);
    t.equal((svg.match(/<circle /g) ?? []).length, 4, `${id}: a point per row`);
  }
  t.match(dom.stdout, /<figcaption>torus_2d_2x3[^<]*<\/figcaption><svg [^>]*>.*<circle /s, 'the topology diagram');
  t.ok(existsSync(SCREENSHOT) && readFileSync(SCREENSHOT).subarray(1, 4).toString() === 'PNG', `screenshot at ${SCREENSHOT}`);
  t.comment(`report screenshot: ${SCREENSHOT}`);
});

t.test("in headless Chromium a transformer_layer sweep's page draws where the time goes: a stacked bar per row, a segment per time part", async (t) => {
  const browser = BROWSERS.find((b) => existsSync(b));
  if (browser === undefined) {
    t.fail(`NO BROWSER: the report was not opened. Install Chromium (Debian: apt-get install -y chromium; .ci/run does), looked for ${BROWSERS.join(', ')}`);
    return;
  }
  const page = join(t.testdir(), 'layer.html');
  const r = await kernbench(['sweep', '--bench', 'transformer_layer', '--over', 'system.sips.count=1,2', '--no-data', '--html', page]);
  t.equal(r.exitCode, 0, r.stderr);
  const dom = await chromium(browser, ['--dump-dom', `file://${page}`]);
  t.same(dom.console, [], 'no console message, error or uncaught exception');
  t.match(dom.stdout, /<body[^>]* data-charts="3"/, 'the script drew the two charts and the bars');
  const bars = dom.stdout.slice(dom.stdout.indexOf('<svg id="chart-parts"'), dom.stdout.indexOf('</svg>', dom.stdout.indexOf('<svg id="chart-parts"')));
  const parts = [...bars.matchAll(/<rect [^>]*data-part="([^"]+)"/g)].map((m) => m[1]);
  t.equal(parts.length, 6 * 5, 'three variants at two TP degrees, five parts each');
  t.same([...new Set(parts)], ['gemm', 'attention', 'vector', 'exposed_comm', 'other']);
});
