// Runs on: main (tests). Shared plumbing of the packaging tests: pack this
// checkout the way `npm publish` would (the build already ran: the tests run
// from dist/), install the tarball into a fresh project with npm, and run
// commands there as a user would.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

// These helpers run compiled, from dist/test/helpers/: the project root is three levels up.
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The environment a user's shell would give: this process's, less NODE_OPTIONS,
 * where tap puts its process-tracking hooks (`--import @tapjs/processinfo`) for
 * every child node process. Kept, they load into npm and every kernbench
 * process (and double the CPU time of these tests).
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

export interface Packed {
  /** The tarball's absolute path. */
  tarball: string;
  /** The files npm put in it, relative to the package root. */
  files: string[];
}

export interface Ran {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** A fresh directory under the OS temp dir; removed by `remove()`. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `npm pack` into `dest`. --ignore-scripts: `prepare` would rebuild, and the
 * tests run from the build that is already there.
 */
export async function pack(dest: string): Promise<Packed> {
  const { stdout } = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: ROOT, env: userEnv(), extendEnv: false });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(dest, info.filename), files: info.files.map((f) => f.path) };
}

/**
 * `npm install` in `project` (its package.json must exist), from npm's cache
 * when it has the packages (--prefer-offline), from the registry otherwise.
 */
export async function npmInstall(project: string, ...specs: string[]): Promise<void> {
  await execa('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd: project, env: userEnv(), extendEnv: false });
}

/** Run `command ...args` in `cwd`; never throws on a non-zero exit. */
export async function run(cwd: string, command: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const r = await execa(command, args, { cwd, reject: false, env: userEnv(env), extendEnv: false });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** examples/custom-allreduce in this checkout: the project a user copies. */
export const EXAMPLE = join(ROOT, 'examples', 'custom-allreduce');

/**
 * The example as a user gets it, in `dir`/custom-allreduce: its own files
 * copied out of the repository (none of a local install of it), this checkout
 * packed into it (the tarball its package.json names), `userFiles` written
 * beside its own, and `npm install`. Its devDependencies (tap, typescript,
 * @types/node) are dropped from the copy's package.json rather than installed
 * from the registry, which would take most of a minute (`linkTap` gives the
 * copy this checkout's tap instead).
 */
export async function exampleProject(dir: string, userFiles: Record<string, string> = {}): Promise<{ project: string; packed: Packed }> {
  const project = join(dir, 'custom-allreduce');
  cpSync(EXAMPLE, project, { recursive: true, filter: (src) => !['node_modules', '.tap'].includes(basename(src)) && !src.endsWith('.tgz') });
  const packed = await pack(project);
  const manifestFile = join(project, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { devDependencies?: Record<string, string> };
  delete manifest.devDependencies;
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  for (const [name, text] of Object.entries(userFiles)) writeFileSync(join(project, name), text);
  await npmInstall(project);
  return { project, packed };
}

/** Link this checkout's tap into `project`'s node_modules, so the example's own tests can run there. */
export function linkTap(project: string): void {
  symlinkSync(join(ROOT, 'node_modules', 'tap'), join(project, 'node_modules', 'tap'), 'dir');
}
