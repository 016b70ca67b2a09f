// Runs on: main (and the build step when run as a script). Owns: the shape of one
// line of `kernbench run --json` — fixed keys, every one always present, a bench's
// own figures under `extra`, numbers as JSON numbers — as a zod schema, and its
// JSON Schema, committed as schemas/run-result.schema.json (a test checks the
// file against this schema and real output against the file).
//   node dist/bin/cli/json-result.js     rewrites the file
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SCHEMAS_DIR, VERSION } from '../../lib/config/paths.js';
import type { BenchResult } from '../../lib/bench/contract.js';
import type { RunStats } from '../../lib/trace/stats.js';

export const RUN_RESULT_SCHEMA_FILE = join(SCHEMAS_DIR, 'run-result.schema.json');

const cell = z.union([z.number(), z.string(), z.boolean()]);
const count = z.number().int().nonnegative();
const ringCounts = {
  messages: count.describe('payloads sent'),
  pieces: count.describe('slots used (a payload larger than vc_chunk_size is cut into several)'),
  bytes: count,
  creditWaits: count,
  creditWaitPs: z.number().nonnegative(),
  dataWaits: count,
  dataWaitPs: z.number().nonnegative(),
  peakOccupancy: count,
};

const stats = z
  .object({
    rings: z.array(z.object({ ring: count, from: count, to: count, fromSip: count, toSip: count, dir: z.string(), ...ringCounts }).strict()),
    barriers: z.array(z.object({ index: count, arrivals: count, spreadPs: z.number().nonnegative() }).strict()),
    total: z.object(ringCounts).strict(),
  })
  .strict();

export const runResultJson = z
  .object({
    version: z.string().describe('the kernbench version that wrote the line'),
    bench: z.string(),
    algorithm: z.string(),
    topology: z.string(),
    worldSize: count,
    nElem: count,
    dtype: z.string(),
    ok: z.boolean().describe('the result is correct (and, for a bench with checks, passed them)'),
    critNs: z.number().describe('max over participating PEs of the virtual execution time, ns'),
    digest: z.string().describe('hash of the outputs; equal across --threads layouts and jitter'),
    extra: z.record(z.string(), cell).describe("the bench's own figures by name ({} when it has none)"),
    table: z
      .object({ columns: z.array(z.string()), rows: z.array(z.array(cell)) })
      .strict()
      .nullable()
      .describe("the bench's table (what --csv writes), cells that are numerals as numbers; null for a bench without one"),
    stats: stats.nullable().describe('backpressure statistics per IPCQ ring and barrier in virtual time (docs/backpressure.md); null when the bench opened no session'),
    lines: z.array(z.string()).describe('the lines the text output prints for this result'),
  })
  .strict()
  .meta({ title: 'kernbench run --json: one line per result', $id: 'https://kernbench.invalid/schemas/run-result.schema.json' });

export type RunResultJson = z.infer<typeof runResultJson>;

/** A numeral as tables write one (`12.500`, `-3`, `1e6`): its cell is a number in JSON. */
const NUMERAL = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** One result as its --json line holds it. */
export function runResultLine(r: BenchResult & { digest: string }, runStats: RunStats | undefined): RunResultJson {
  return {
    version: VERSION,
    bench: r.bench,
    algorithm: r.algorithm,
    topology: r.topology,
    worldSize: r.worldSize,
    nElem: r.nElem,
    dtype: r.dtype,
    ok: r.ok,
    critNs: r.critNs,
    digest: r.digest,
    extra: r.extra ?? {},
    table: r.table ? { columns: r.table.columns, rows: r.table.rows.map((row) => row.map((c) => (typeof c === 'string' && NUMERAL.test(c) ? Number(c) : c))) } : null,
    stats: runStats ?? null,
    lines: r.lines,
  };
}

/** The text of schemas/run-result.schema.json. */
export function runResultSchemaText(): string {
  return `${JSON.stringify(z.toJSONSchema(runResultJson), null, 2)}\n`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(RUN_RESULT_SCHEMA_FILE, runResultSchemaText());
  console.log(`wrote ${RUN_RESULT_SCHEMA_FILE}`);
}
