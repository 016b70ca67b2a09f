// Runs on: main (the counting scripts of this folder). Owns: reading their
// positional arguments.

/** `arg` as a positive integer, `fallback` when absent; otherwise the script `script` exits 2 with a line saying why. */
export function positive(script: string, arg: string | undefined, fallback: number, what: string): number {
  if (arg === undefined) return fallback;
  const n = Number(arg);
  if (Number.isInteger(n) && n >= 1) return n;
  console.error(`${script}: ${what} must be a positive integer, got '${arg}'`);
  process.exit(2);
}
