// Runs on: any thread. Owns: the one registry of kernbench errors.
//
// Every error kernbench throws on purpose is a KernbenchError with a stable
// `code` (tests assert on it, never on message text), a class `name`, and a
// message that ends with what was received. Where they apply, errors carry the
// virtual time (`atPs`) and the PE that raised them. One code names one
// condition (decision 0043); docs/errors.md lists them, generated from
// ERROR_CODES, and test/error-codes.test.ts checks the rule and the list.
//
// Errors cross threads as plain objects (`SerializedError`) and are rebuilt on
// the other side with their class, message, stack and extra fields intact.

export { ERROR_CODES, USAGE_ERROR_CODES, isUsageCode, type ErrorCode, type UsageErrorCode } from './error-codes.js';
import { isUsageCode, type ErrorCode, type UsageErrorCode } from './error-codes.js';

export interface PeAddress {
  sip: number;
  cube: number;
  pe: number;
}

export interface ErrorDetails {
  /** Virtual time in picoseconds at which the error was raised. */
  atPs?: number;
  /** The PE on which the error was raised. */
  pe?: PeAddress;
  /** Kernel name, where the error came from a kernel. */
  kernel?: string;
  cause?: unknown;
}

export class KernbenchError extends Error {
  readonly code: ErrorCode;
  readonly atPs: number | undefined;
  readonly pe: PeAddress | undefined;
  readonly kernel: string | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'KernbenchError';
    this.code = code;
    this.atPs = details.atPs;
    this.pe = details.pe;
    this.kernel = details.kernel;
  }

  /**
   * A usage error (USAGE_ERROR_CODES): what the user gave is wrong, not the run.
   * Read from the code, so an error rebuilt on another thread answers the same.
   */
  get isUsage(): boolean {
    return isUsageCode(this.code);
  }
}

/** One problem found in a configuration file. All problems of a file are collected before reporting. */
export interface ConfigProblem {
  file: string;
  line?: number;
  col?: number;
  /** Dotted YAML path, e.g. `system.sips.count`. */
  path: string;
  message: string;
}

/** The longest run of non-blank characters (a key, a value, a path) an error message prints whole. */
const MAX_ECHOED_RUN = 400;

/**
 * Text from a user (keys, values, paths, flags) as an error message echoes it:
 * each run of non-blank characters longer than MAX_ECHOED_RUN keeps its start
 * and its end around a middle ellipsis that says how much it dropped, so a
 * 5,000-character key costs one line, not 5,000 characters per echo.
 */
export function shortenEchoes(text: string): string {
  return text.replace(new RegExp(`\\S{${MAX_ECHOED_RUN + 1},}`, 'gu'), (run) => {
    const chars = Array.from(run); // code points: never half a surrogate pair
    if (chars.length <= MAX_ECHOED_RUN) return run;
    const keep = MAX_ECHOED_RUN / 2;
    return `${chars.slice(0, keep).join('')}…[${chars.length - 2 * keep} more chars]…${chars.slice(-keep).join('')}`;
  });
}

/**
 * Text safe to print on a terminal: C0 and C1 control characters (but newline
 * and tab) as \xNN, and the bidirectional controls (U+061C, U+200E/F,
 * U+202A-E, U+2066-9), which would display the rest of a line reversed, as
 * \uNNNN. The one rule for every message kernbench prints.
 */
export function printable(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function formatConfigProblem(p: ConfigProblem): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}:${p.col ?? 1}`;
  return shortenEchoes(p.path === '' ? `${where}: ${p.message}` : `${where}: ${p.path}: ${p.message}`);
}

/** Problems of a configuration, each located (file:line:col or --set); its code is a usage error's. */
export class ConfigError extends KernbenchError {
  readonly problems: ConfigProblem[];
  constructor(code: UsageErrorCode, problems: ConfigProblem[]) {
    super(code, problems.map(formatConfigProblem).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export class DeadlockError extends KernbenchError {
  /** One line per waiter: who waits, for what, since which virtual time. */
  readonly waiters: string[];
  /** A few lines: how many actors wait, grouped by what they wait for, and the cycles (empty when built from waiters alone). */
  readonly summary: string[];
  /**
   * With a summary, the message is the summary (a report of a thousand ranks stays a few lines);
   * `waiters` keeps every waiter's line. Without one, the message lists the waiters.
   */
  constructor(waiters: string[], summary: string[] = []) {
    const body = summary.length > 0 ? [...summary, `(each waiter's own line: the error's waiters, ${waiters.length} lines; --verbose prints them)`] : waiters;
    super('ERR_DEADLOCK', `deadlock: every live PE and rank waits and nothing is in flight:\n  ${body.join('\n  ')}`);
    this.name = 'DeadlockError';
    this.waiters = waiters;
    this.summary = summary;
  }
}

/** One actor of a stopped run, as the report names it (lib/coordinator/actor-states.ts). */
export interface ActorStateReport {
  /** The actor's index in the session's actor table. */
  actor: number;
  /** `PE (sip 0, cube 0, pe 0) kernel`, `rank 1 host`, `main host`, ... */
  who: string;
  state: 'running' | 'waiting';
  /** The PE the actor belongs to (PE actors only). */
  pe?: PeAddress;
  /** The spawned rank (rank hosts only). */
  rank?: number;
  /** The kernel running on the actor's PE (PE actors only). */
  kernel?: string;
  /** Its virtual time as last published (a running actor: at least this). */
  atPs: number;
  /** What a waiting actor waits for (the deadlock report's phrase). */
  waitsFor?: string;
  /** The whole line. */
  line: string;
}

/**
 * A run stopped before it ended: by its timeout, by an interrupt, or by the virtual-time
 * limit. Like a deadlock report it begins with a summary (the message); `actors` names
 * what each active actor was doing: running (which kernel, on which PE, at what virtual
 * time) or waiting (on what).
 */
export class RunStoppedError extends KernbenchError {
  readonly summary: string[];
  readonly actors: ActorStateReport[];
  constructor(code: 'ERR_TIMEOUT' | 'ERR_INTERRUPTED' | 'ERR_VIRTUAL_TIME_LIMIT', why: string, summary: string[], actors: ActorStateReport[]) {
    super(code, `${why}; what each actor was doing:\n  ${summary.join('\n  ')}`);
    this.name = 'RunStoppedError';
    this.summary = summary;
    this.actors = actors;
  }
}

export class AbortError extends KernbenchError {
  constructor(reason: string) {
    super('ERR_ABORTED', `aborted: ${reason}`);
    this.name = 'AbortError';
  }
}

export class KernelError extends KernbenchError {
  constructor(kernel: string, pe: PeAddress, atPs: number, cause: SerializedError) {
    super(
      'ERR_KERNEL',
      `kernel '${kernel}' threw on PE (sip ${pe.sip}, cube ${pe.cube}, pe ${pe.pe}) at ${formatPs(atPs)}: ${cause.name}: ${cause.message}`,
      { kernel, pe, atPs, cause: reviveError(cause) },
    );
    this.name = 'KernelError';
  }
}

export class SpawnError extends KernbenchError {
  /** Root-cause ranks only: aborted siblings are not listed. */
  readonly errors: Map<number, Error>;
  constructor(errors: Map<number, Error>) {
    const ranks = [...errors.keys()].sort((a, b) => a - b);
    const lines = ranks.map((r) => `rank ${r}: ${errors.get(r)?.name}: ${errors.get(r)?.message}`);
    super('ERR_SPAWN', `spawn failed in ${ranks.length} rank(s):\n  ${lines.join('\n  ')}`);
    this.name = 'SpawnError';
    this.errors = errors;
  }
}

/** Virtual time for humans: picoseconds printed as ns with 3 decimals. */
export function formatPs(ps: number): string {
  return `${(ps / 1000).toFixed(3)} ns`;
}

// ---------------------------------------------------------------------------
// Crossing threads.

export interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  code: string | undefined;
  /** Own enumerable fields (atPs, pe, kernel, waiters, ...), JSON-safe. */
  fields: Record<string, unknown>;
  /** The `cause`, when it is an error (a kernel's own throw inside a KernelError). */
  cause?: SerializedError;
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (k === 'cause') continue;
      try {
        fields[k] = JSON.parse(JSON.stringify(v, (_key, val: unknown) => (val instanceof Map ? Object.fromEntries([...val].map(([mk, mv]) => [mk, mv instanceof Error ? serializeError(mv) : mv])) : val)));
      } catch {
        fields[k] = String(v); // not JSON-able (a cycle, a BigInt): keep its text
      }
    }
    const code = (e as { code?: unknown }).code;
    const out: SerializedError = { name: e.name, message: e.message, stack: e.stack, code: typeof code === 'string' ? code : undefined, fields };
    if (e.cause instanceof Error) out.cause = serializeError(e.cause);
    return out;
  }
  return { name: 'Error', message: String(e), stack: undefined, code: undefined, fields: {} };
}

/** kernbench's own classes, rebuilt with their prototype so `instanceof` holds on the other side. */
const KERNBENCH_CLASSES: Record<string, { prototype: Error }> = {
  KernbenchError,
  ConfigError,
  DeadlockError,
  RunStoppedError,
  AbortError,
  KernelError,
  SpawnError,
};

const BUILTIN_ERRORS: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** Rebuild an error on this side of a thread boundary, keeping class, message, stack, fields and cause. */
export function reviveError(s: SerializedError): Error {
  let e: Error;
  const Own = KERNBENCH_CLASSES[s.name];
  if (Own) {
    // Not through the constructor: its message formatting already happened on the other side.
    e = Object.create(Own.prototype) as Error;
    Object.defineProperty(e, 'message', { value: s.message, writable: true, configurable: true });
  } else {
    const Ctor = BUILTIN_ERRORS[s.name] ?? Error;
    e = new Ctor(s.message);
  }
  Object.defineProperty(e, 'name', { value: s.name, writable: true, configurable: true });
  for (const [k, v] of Object.entries(s.fields)) {
    if (k === 'name' || k === 'message') continue;
    (e as unknown as Record<string, unknown>)[k] = k === 'errors' && s.name === 'SpawnError' && v && typeof v === 'object' ? reviveErrorMap(v as Record<string, SerializedError>) : v;
  }
  if (s.code !== undefined) (e as unknown as Record<string, unknown>).code = s.code;
  if (s.cause) Object.defineProperty(e, 'cause', { value: reviveError(s.cause), writable: true, configurable: true });
  if (s.stack !== undefined) e.stack = s.stack;
  return e;
}

function reviveErrorMap(o: Record<string, SerializedError>): Map<number, Error> {
  return new Map(Object.entries(o).map(([k, v]) => [Number(k), reviveError(v)]));
}

// ---------------------------------------------------------------------------
// Fitting an error into a fixed-size slot.

/** Fields that say where and when an error happened: never shortened. */
const KEPT_FIELDS = new Set(['atPs', 'pe', 'kernel', 'rank']);

/**
 * The longest strings and arrays allowed at each step of fitSerializedError,
 * tried in order until the error fits. Unlimited first: an error that fits is
 * left untouched.
 */
const FIT_STEPS: readonly { chars: number; items: number }[] = [
  { chars: Infinity, items: Infinity },
  { chars: 4096, items: 256 },
  { chars: 2048, items: 128 },
  { chars: 1024, items: 64 },
  { chars: 512, items: 32 },
  { chars: 256, items: 16 },
  { chars: 128, items: 8 },
  { chars: 64, items: 4 },
];

export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function capString(s: string, chars: number): string {
  return s.length <= chars ? s : `${s.slice(0, chars)}... [${s.length - chars} more chars]`;
}

function capValue(v: unknown, chars: number, items: number): unknown {
  if (typeof v === 'string') return capString(v, chars);
  if (Array.isArray(v)) {
    const kept = v.slice(0, items).map((x) => capValue(x, chars, items));
    if (v.length > items) kept.push(`... [${v.length - items} more]`);
    return kept;
  }
  if (v !== null && typeof v === 'object') {
    const o = Object.entries(v as Record<string, unknown>);
    const kept = o.slice(0, items).map(([k, x]) => [k, capValue(x, chars, items)]);
    if (o.length > items) kept.push(['...', `[${o.length - items} more]`]);
    return Object.fromEntries(kept);
  }
  return v;
}

function capError(s: SerializedError, chars: number, items: number): SerializedError {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.fields)) fields[k] = KEPT_FIELDS.has(k) ? v : capValue(v, chars, items);
  const out: SerializedError = { name: s.name, message: capString(s.message, chars), stack: s.stack === undefined ? undefined : capString(s.stack, chars), code: s.code, fields };
  if (s.cause) out.cause = capError(s.cause, chars, items);
  return out;
}

/**
 * The error, shortened so that `JSON.stringify` of it takes at most `maxBytes`
 * UTF-8 bytes, and still a valid SerializedError that reviveError rebuilds.
 * Never the JSON cut short: strings (message, stack, fields) and arrays
 * (`waiters`) are capped, longest first, each cut saying how much it dropped;
 * then the stack, the cause and the other fields go. `name`, `code` and the
 * fields saying where and when (atPs, pe, kernel, rank) are always kept. A
 * shortened error has `fields.truncated = true`. Deterministic: the same error
 * and size give the same result. See docs/spawn.md, "Errors crossing threads".
 */
export function fitSerializedError(s: SerializedError, maxBytes: number): SerializedError {
  const size = (x: SerializedError): number => utf8Bytes(JSON.stringify(x));
  for (const { chars, items } of FIT_STEPS) {
    const c = chars === Infinity ? s : capError(s, chars, items);
    if (chars !== Infinity) c.fields.truncated = true;
    if (size(c) <= maxBytes) return c;
  }
  // Last resort: only what identifies the error, with a message as long as the room allows.
  const fields: Record<string, unknown> = { truncated: true };
  for (const k of KEPT_FIELDS) if (k in s.fields) fields[k] = s.fields[k];
  const bare: SerializedError = { name: capString(s.name, 64), message: '', stack: undefined, code: s.code, fields };
  if (typeof fields.kernel === 'string') fields.kernel = capString(fields.kernel, 64);
  const room = maxBytes - size(bare);
  if (room < 0) throw new KernbenchError('ERR_INTERNAL', `an error slot of ${maxBytes} bytes cannot hold even an error's name and code, got ${size(bare)} bytes`);
  // JSON escapes can take up to 6 bytes per char: this length always fits.
  bare.message = capString(s.message, Math.max(0, Math.floor(room / 6) - 32));
  return bare;
}
