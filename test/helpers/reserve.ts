// Runs on: main thread (tap). Owns: how many executors a group's shared pool starts
// with (./threads.ts reads it when it starts the pool). A module of its own, without
// tap: a group file sets it before importing its test files, and importing ./threads.ts
// there would register its teardown on tap's root before any test, which lets tap end
// the root while a later file is still loading (tap ends a root that has a teardown
// once it has been idle for three timer turns).

let reserved = 0;

/**
 * Start the group's shared pool at `n` executors, the size of its largest run: a pool
 * that grows stops its threads and starts the larger set (ThreadResources.executorPool),
 * so a group whose runs need 1, then 2, then 8 executors started 11 where 8 serve them
 * all. A run that needs more still gets them; ./threads.ts fails the process at the end
 * if `n` is not the largest run's size, so a reserve cannot go stale.
 */
export function reserveExecutors(n: number): void {
  reserved = n;
}

/** The reserve set by the group file; 0 when none (the pool starts at the first run's size). */
export function reservedExecutors(): number {
  return reserved;
}
