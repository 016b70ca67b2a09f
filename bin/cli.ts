// Runs on: main. Owns: the kernbench command line's entry — dispatch to the
// commands declared in ./cli/table.ts (run / sweep / stress / merge / list /
// validate, each in a module of ./cli/), --help and --version, error printing
// and exit codes:
//   0 everything ran and every result is ok
//   1 a bench result is not ok, or the run failed (kernel error, deadlock, ...);
//     for stress, any run that diverged, deadlocked, failed or timed out
//   2 a usage error: the command line, a configuration file, a user module or an
//     input is wrong (lib/errors.ts USAGE_ERROR_CODES); its message alone, no stack
import { KernbenchError, printable as printableText, RunStoppedError, shortenEchoes } from '../lib/errors.js';
import type { ThreadResources } from '../lib/session/thread-resources.js';
import { modulesLoading } from '../lib/loader/user-module.js';
import { COMMANDS, isCommand, type CommandName } from './cli/table.js';

type Handler = (args: string[], threads: ThreadResources | undefined) => Promise<number> | number;

/**
 * Each command of the table and the function that runs it (the type makes the
 * list exhaustive), imported when its command runs: a `run` does not load what
 * only sweep, stress, report, list or the help text use (plots, the report
 * page, the merge of CSVs; decision 0205). Each module is still one file of
 * dist/, loaded once.
 */
const HANDLERS: Record<CommandName, () => Promise<Handler>> = {
  run: async () => (await import('./cli/run.js')).cmdRun,
  sweep: async () => (await import('./cli/sweep.js')).cmdSweep,
  stress: async () => (await import('./cli/stress.js')).cmdStress,
  merge: async () => (await import('./cli/sweep.js')).cmdMerge,
  report: async () => (await import('./cli/report.js')).cmdReport,
  list: async () => (await import('./cli/info.js')).cmdList,
  validate: async () => (await import('./cli/info.js')).cmdValidate,
};

/**
 * Run one command line; returns its exit code, throws its error. `threads`: run
 * and sweep use these threads and leave them open (the in-process tests share one
 * set across their runs, as a sweep does across its points); without it each
 * command starts its own and closes them.
 */
export async function main(argv: string[], threads?: ThreadResources): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || HELP_WORDS.has(command)) return answerHelp(command, rest);
  if (!isCommand(command)) throw unknownCommand(command);
  return (await HANDLERS[command]())(rest, threads);
}

const HELP_WORDS = new Set(['--help', '-h', '--version', '-V', 'help']);

/** --help, --version, `help [command]`, or no command at all: the help text, imported only for these. */
async function answerHelp(command: string | undefined, rest: string[]): Promise<number> {
  const { commandHelp, globalHelp, versionText } = await import('./cli/help.js');
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(globalHelp());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V') {
    process.stdout.write(versionText());
    return 0;
  }
  if (command === 'help') {
    // `kernbench help run` is `kernbench run --help`.
    const about = rest[0];
    if (about !== undefined && isCommand(about)) process.stdout.write(commandHelp(about));
    else if (about === undefined) process.stdout.write(globalHelp());
    else throw unknownCommand(about);
  }
  return 0;
}

function unknownCommand(got: string): KernbenchError {
  return new KernbenchError('ERR_UNKNOWN_COMMAND', `unknown command; known: ${Object.keys(COMMANDS).join(', ')}, --help, --version, got '${got}'`);
}

/** A message as the terminal gets it: echoed user text shortened, control and bidirectional characters escaped (lib/errors.ts). */
function printable(text: string): string {
  return printableText(shortenEchoes(text));
}

/** Entry point for bin/kernbench.js: exit codes and error printing (no stack for usage/config). */
export async function cli(argv: string[]): Promise<void> {
  // `kernbench list | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  // Node ends a process whose top-level await can never settle (a bench awaiting a
  // promise nothing will resolve, with nothing left to run) with exit code 13 and
  // no word; say what was awaited, as an error of its own, and exit 1 like a failed run.
  // Told by the event loop running dry before the command answered ('beforeExit': not
  // emitted on process.exit() or a signal), not by the 13 in process.exitCode at 'exit':
  // a library that wraps process.emit (signal-exit, which tap's children load) sets
  // exitCode to the 'exit' event's argument, 0, before the listeners run, and the
  // process then ended with 0 and no word.
  let answered = false;
  process.on('beforeExit', () => {
    if (answered) return;
    answered = true;
    const files = modulesLoading();
    const what = files.length > 0 ? `the top-level await of ${files.join(', ')} (still loading)` : 'a promise of the bench';
    const e = new KernbenchError('ERR_NEVER_SETTLED', `kernbench ${argv.join(' ')} waited for a promise that can never settle: nothing was left to run (no timer, no I/O, no kernel or rank in flight), got ${what}`);
    process.stderr.write(`kernbench: ${e.name} [${e.code}]: ${printable(e.message)}\n`);
    process.exitCode = 1;
  });
  process.exitCode = await runCli(argv);
  answered = true;
  // A stopped run's user code may keep the process alive (a live timer on main, a loop
  // the watchdog ended mid-way): it has been reported, so the process ends now.
  if (runStopped) process.exit();
}

/** A run was stopped (timeout, interrupt, virtual-time limit) and reported: cli() exits at once. */
let runStopped = false;

/**
 * `kernbench ...argv` without the process around it: runs the command, prints an
 * error as the binary prints it, and returns the exit code instead of setting it.
 */
export async function runCli(argv: string[], threads?: ThreadResources): Promise<number> {
  return (await answerCli(argv, threads)).status;
}

/** How a command line ended: its exit status, and the error it ended with (undefined when none). */
export interface CliAnswer {
  status: number;
  error: unknown;
}

/**
 * runCli, keeping the error as well (the in-process entry the CLI tests use, with
 * `threads` shared across their runs; test/helpers/cli.ts): the tests assert the
 * error's code, which an exit-2 message does not print.
 */
export async function answerCli(argv: string[], threads?: ThreadResources): Promise<CliAnswer> {
  try {
    return { status: await main(argv, threads), error: undefined };
  } catch (e) {
    return { status: reportError(e), error: e };
  }
}

/**
 * The exit status error `e` means: 2 for a usage error (KernbenchError#isUsage:
 * what the user gave is wrong; lib/errors.ts USAGE_ERROR_CODES), 1 for any other.
 */
export function exitStatusOf(e: unknown): 1 | 2 {
  return e instanceof KernbenchError && e.isUsage ? 2 : 1;
}

/**
 * Print `e` on stderr as the binary does and return its exit status: a usage
 * error with its message alone; any other KernbenchError with its class and code;
 * anything else with its stack.
 */
function reportError(e: unknown): number {
  if (exitStatusOf(e) === 2) {
    process.stderr.write(`kernbench: ${printable((e as Error).message)}\n`);
    return 2;
  }
  if (e instanceof KernbenchError) {
    if (e instanceof RunStoppedError) runStopped = true;
    process.stderr.write(`kernbench: ${e.name} [${e.code}]: ${printable(e.message)}\n`);
    return 1;
  }
  process.stderr.write(`kernbench: ${printable(e instanceof Error ? (e.stack ?? e.message) : String(e))}\n`);
  return 1;
}
