// Runs on: main. Owns: `kernbench merge` — joining the CSV or JSON files the
// shards of one sweep wrote (kernbench sweep --shard i/n --csv F / --json) into
// the table the unsharded sweep gives, in grid order. It refuses files of
// different sweeps, a shard given twice and a shard missing, naming the files.
import { readFileSync } from 'node:fs';
import { KernbenchError } from '../errors.js';
import { inShard, SHARD_COLUMNS, type Cell } from './sweep.js';

export interface MergedSweep {
  columns: string[];
  rows: Cell[][];
  /** Whether the inputs were JSON (typed cells) or CSV (text cells). */
  format: 'csv' | 'json';
}

interface ShardFile {
  file: string;
  format: 'csv' | 'json';
  columns: string[];
  rows: Cell[][];
  sweep: string;
  index: number;
  count: number;
}

/** RFC 4180 CSV: quoted cells may hold commas, quotes ("") and newlines. */
export function parseCsv(text: string, file: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else cell += ch;
      i++;
      continue;
    }
    if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
    i++;
  }
  if (quoted) throw new KernbenchError('ERR_MERGE_INPUT', `merge: ${file}: a quoted CSV cell is never closed, got an unterminated quote`);
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

function readShard(file: string): ShardFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KernbenchError('ERR_UNREADABLE_INPUT', `merge: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}, got '${file}'`);
  }
  const notShard = (why: string): never => {
    throw new KernbenchError('ERR_MERGE_INPUT', `merge: ${file} is not the CSV or JSON of a sweep shard (kernbench sweep --shard I/N --csv F or --json): ${why}, got '${file}'`);
  };
  let format: 'csv' | 'json';
  let columns: string[];
  let rows: Cell[][];
  if (text.trimStart().startsWith('{')) {
    format = 'json';
    const objs = text.split('\n').filter((l) => l.trim() !== '').map((l, n) => {
      try {
        return JSON.parse(l) as Record<string, Cell>;
      } catch {
        return notShard(`line ${n + 1} is not JSON`);
      }
    });
    columns = Object.keys(objs[0]);
    for (const [n, o] of objs.entries()) if (Object.keys(o).join('\u0000') !== columns.join('\u0000')) notShard(`line ${n + 1} has other keys than line 1`);
    rows = objs.map((o) => columns.map((c) => o[c]));
  } else {
    format = 'csv';
    const all = parseCsv(text, file);
    if (all.length === 0) notShard('it is empty');
    columns = all[0];
    rows = all.slice(1);
    for (const [n, r] of rows.entries()) if (r.length !== columns.length) notShard(`row ${n + 1} has ${r.length} cells, the header ${columns.length}`);
  }
  if (SHARD_COLUMNS.some((c, i) => columns[i] !== c)) notShard(`its first columns are not ${SHARD_COLUMNS.join(', ')}`);
  if (rows.length === 0) notShard('it has no rows (which shard it is is written in its rows)');
  const sweep = String(rows[0][0]);
  const shard = String(rows[0][1]);
  const m = /^(\d+)\/(\d+)$/.exec(shard);
  if (!m) return notShard(`its shard column holds '${shard}', not I/N`);
  for (const r of rows) {
    if (String(r[0]) !== sweep || String(r[1]) !== shard) notShard('its rows name more than one sweep or shard');
    if (!/^\d+$/.test(String(r[2])) || !inShard(Number(r[2]), { index: Number(m[1]), count: Number(m[2]) })) notShard(`a point column holds '${String(r[2])}', not a point of shard ${shard}`);
  }
  return { file, format, columns, rows, sweep, index: Number(m[1]), count: Number(m[2]) };
}

/**
 * Join the shard files into one table in grid order, the shard columns dropped.
 * ERR_MERGE_SHARDS (naming the files) for shards of different sweeps, of different
 * shard counts, a shard given twice or missing, or a mix of CSV and JSON.
 */
export function mergeShards(files: string[]): MergedSweep {
  if (files.length === 0) throw new KernbenchError('ERR_MISSING_ARGUMENT', 'merge needs the CSV or JSON files of a sweep\'s shards, got none');
  const shards = files.map(readShard);
  const first = shards[0];
  for (const s of shards) {
    if (s.format !== first.format) throw new KernbenchError('ERR_MERGE_SHARDS', `merge: ${first.file} is ${first.format} and ${s.file} is ${s.format}; give the shards' files of one kind, got both`);
    if (s.sweep !== first.sweep || s.columns.join('\u0000') !== first.columns.join('\u0000')) throw new KernbenchError('ERR_MERGE_SHARDS', `merge: ${first.file} and ${s.file} are shards of different sweeps (sweep ${first.sweep} and ${s.sweep}), got both`);
    if (s.count !== first.count) throw new KernbenchError('ERR_MERGE_SHARDS', `merge: ${first.file} is one of ${first.count} shards and ${s.file} one of ${s.count}, got both`);
  }
  const byIndex = new Map<number, ShardFile>();
  for (const s of shards) {
    const other = byIndex.get(s.index);
    if (other) throw new KernbenchError('ERR_MERGE_SHARDS', `merge: ${other.file} and ${s.file} are both shard ${s.index}/${s.count}, got it twice`);
    byIndex.set(s.index, s);
  }
  const missing = Array.from({ length: first.count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0) throw new KernbenchError('ERR_MERGE_SHARDS', `merge: shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${first.count}`).join(', ')} of sweep ${first.sweep} missing; given ${files.join(', ')}, got ${shards.length} of ${first.count}`);
  // Point k is in shard (k mod n) + 1: the rows in order of point; a point's rows keep their order.
  const tagged = shards.flatMap((s) => s.rows.map((r, i) => ({ point: Number(r[2]), i, r })));
  tagged.sort((a, b) => a.point - b.point || a.i - b.i);
  return { columns: first.columns.slice(SHARD_COLUMNS.length), rows: tagged.map((t) => t.r.slice(SHARD_COLUMNS.length)), format: first.format };
}
