#!/usr/bin/env node
// Runs on: main. The installed command: runs the compiled CLI (npm ci builds it
// through the `prepare` script).
//
// On Node 22.1 and later, the command keeps V8's compiled code of the modules it
// loads in Node's compile cache (module.enableCompileCache: a directory under the
// system's temporary one; NODE_COMPILE_CACHE names another, and
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), and its threads use the same cache:
// NODE_COMPILE_CACHE is set for them, as a Worker reads it from its environment.
// Every thread loads the runtime again in its own isolate, so this is paid once a
// machine instead of once a thread (decision 0205). Node 20 has no compile cache:
// nothing changes there. The CLI is imported after, so that its modules are cached.
import module from 'node:module';

if (typeof module.enableCompileCache === 'function' && process.env.NODE_COMPILE_CACHE === undefined) {
  const cache = module.enableCompileCache();
  if (cache.status === module.constants.compileCacheStatus.ENABLED) process.env.NODE_COMPILE_CACHE = cache.directory;
}

const { cli } = await import('../dist/bin/cli.js');
await cli(process.argv.slice(2));
