// Runs on: any thread. Owns: the table of kernbench's error codes, one per
// condition (decision 0043), and which of them are usage errors (exit 2,
// decision 0085). lib/errors.ts builds the error classes on it and re-exports
// it; docs/errors.md is generated from these tables.

/**
 * Usage errors: what the user gave kernbench is wrong or missing (the command
 * line, a configuration file, a user module, an input file, a program or
 * package a feature needs), as opposed to a failure of the simulated run. The
 * CLI prints such an error's message alone, without a stack, and exits 2
 * (bin/cli.ts asks `KernbenchError#isUsage`); every other code exits 1.
 * Membership in this table is the property: a new usage condition is added
 * here, any other in ERROR_CODES below (decision 0085).
 */
export const USAGE_ERROR_CODES = {
  //   the command line
  ERR_UNKNOWN_COMMAND: 'a command was named that kernbench does not have (kernbench --help lists them)',
  ERR_UNKNOWN_FLAG: 'a flag the command does not take, or an option the bench does not have',
  ERR_UNEXPECTED_ARGUMENT: 'a command that takes only flags was given a bare argument',
  ERR_MISSING_ARGUMENT: 'a command was given without a flag or file it needs (--bench, --over, the files of merge and report)',
  ERR_INVALID_FLAG_VALUE: "one of kernbench's own flags was given without its value, or with one it does not take (--seeds, --timeout, a value given to a switch)",
  ERR_INVALID_THREADS: '--threads names no thread layout (rank, pe or a positive integer), or a stress list of layouts has an empty or a repeated one',
  ERR_INVALID_SET: 'a --set is not dotted.path=value with a YAML value',
  ERR_CONFLICTING_FLAGS: 'two flags choose one setting differently (--algorithm and --set ccl.algorithm)',
  ERR_INVALID_SWEEP: "a sweep's --over or --shard describes no grid or no part of one (not PATH=V1,V2,..., not I/N, more shards than points)",
  ERR_UNKNOWN_TOPOLOGY: 'a topology was named that is neither shipped (kernbench list) nor a path to a file',
  ERR_UNKNOWN_BENCH: 'a bench was named that is neither shipped (kernbench list) nor a path to a bench module',
  ERR_NO_TABLE: '--csv was given for a bench whose results carry no table',
  //   a bench's options and what it needs
  ERR_INVALID_BENCH_OPTION: "a bench option's value is not one its schema takes (not a number, out of range, options that contradict each other)",
  ERR_BENCH_OPTION_UNFIT: "a bench option does not fit the machine, world or model of the run (a root past the world, --tp other than the SIP count, more cubes than a SIP has, a size or scale that does not divide evenly)",
  ERR_BENCH_TOPOLOGY: 'a bench was run on a topology it does not model (simgrid_ring: a ring of one-PE SIPs)',
  ERR_BENCH_TOO_LARGE: "a bench's sizes need more than the run can give them (buffers beyond device memory, a data check past its limit)",
  ERR_OPTIONAL_DEPENDENCY: 'a feature needs an optional package or program that is not installed (plots need vega and vega-lite; simgrid_ring needs g++, SimGrid, time and its source)',
  ERR_EXTERNAL_PROGRAM: "a program a bench runs (simgrid_ring's SimGrid binary) failed or printed no result",
  //   files given on the command line
  ERR_UNREADABLE_INPUT: 'a file given on the command line (to merge or report) cannot be read',
  ERR_UNWRITABLE_OUTPUT: 'an output file a flag names (--csv, --trace, --html) cannot be written: its folder is missing, it is a folder, or the place is read-only',
  ERR_MERGE_INPUT: "a file given to kernbench merge is not a sweep shard's CSV or JSON (or is CSV where --json needs JSON)",
  ERR_MERGE_SHARDS: 'the files given to kernbench merge are not the shards of one sweep: different sweeps, shard counts or formats, a shard twice or missing',
  ERR_REPORT_INPUT: 'a file given to kernbench report is not a saved result of kernbench (--json output)',
  //   configuration
  ERR_CONFIG: 'a topology or CCL configuration (a file, or a --set of it) has problems, each at its file:line:col or --set: YAML syntax, a schema violation, a module or name that resolves to nothing, params or a world its module refuses',
  ERR_CONFIG_TOO_LARGE: 'a configuration needs more shared memory than one buffer may hold or this machine has',
  ERR_THREADS_EXCEED_MEMORY: "a thread layout (--threads rank or pe, or a large N) starts more threads than this machine's memory holds beside the session's shared memory; a smaller --threads N runs the same session",
  ERR_WRONG_ALGORITHM: 'the chosen CCL algorithm does not provide the collective the bench or the call needs (an all-reduce)',
  ERR_CCL_ARRANGEMENT: 'a CCL algorithm cannot arrange its ranks as asked: a topology it does not take, an unknown hierarchical root, a group that does not fill its logical grid',
  ERR_UNKNOWN_TOPOLOGY_KIND: 'a SIP topology kind was named that no shipped or loaded kind module defines',
  ERR_INVALID_SIPS: "a topology built in code has a system.sips (count, grid, params) that breaks its SIP topology kind's rules (a file gets ERR_CONFIG at the line)",
  //   user modules (algorithms, benches, kernels, SIP topology kinds)
  ERR_MODULE_MISSING: 'a user module file, or a module it imports, does not exist',
  ERR_MODULE_FORMAT: "a user module's file is not one kernbench loads as an ES module (not .ts, .mts, .js or .mjs; a .ts file outside a \"type\": \"module\" package)",
  ERR_MODULE_SYNTAX: 'a user module does not compile (a syntax error, at its file:line:col)',
  ERR_MODULE_THREW: 'a user module threw while it loaded (its top-level code)',
  ERR_MODULE_EXPORT: 'a user module does not export what its kind requires (its path, the exports expected and found)',
  ERR_MODULE_DEFINITION: "a definition (defineBench, defineAlgorithm, defineSipTopology) is malformed or breaks a rule of its kind (a kind named other than its file, a bench option named like one of kernbench's flags)",
  ERR_BENCH_TABLE_MISSING: 'a bench that declares a table (defineBench({ table: true })) returned results without one',
} as const;

export const ERROR_CODES = {
  ...USAGE_ERROR_CODES,
  ERR_DEADLOCK: 'every live PE and rank waits and nothing can make progress',
  ERR_ABORTED: 'the run was aborted because another rank or PE failed',
  ERR_KERNEL: 'a kernel threw on a PE',
  ERR_KERNEL_CONCURRENCY: 'a kernel ran two flows of control on one clock, or two tl.parallel branches on one direction (its timing would depend on wall-clock order)',
  ERR_KERNEL_ENDED: "a tl operation came after its kernel or tl.parallel branch had ended (a flow it did not await): it would run with no actor to account for it, on the kernel's dead tiles",
  ERR_SPAWN: 'one or more spawned ranks threw',
  ERR_OUT_OF_MEMORY: 'an allocation does not fit its memory space',
  ERR_OUT_OF_BOUNDS: 'a load or store touches bytes outside its tensor shard',
  ERR_IPCQ_WIRING: 'an IPCQ message arrived from an unexpected sender',
  ERR_IPCQ_PIECES: "a receive's size does not match the pieces its sender sent",
  ERR_NOT_EXPORTED: 'a function handed to another thread is not exported from a module',
  ERR_HOST_READ_PENDING: 'a synchronous host read found kernels still running',
  ERR_UNCAUGHT_EXCEPTION: 'an exception escaped every promise chain on an executor thread (a throw in a timer or event callback)',
  ERR_UNHANDLED_REJECTION: 'a promise rejected on an executor thread and nothing handled it',
  ERR_NEVER_SETTLED: 'the command awaited a promise that can never settle: nothing was left to run (no timer, no I/O, no kernel or rank in flight)',
  ERR_RANK_EXIT: 'process.exit() was called on an executor thread (by a rank or a kernel)',
  ERR_EXECUTOR_LOST: 'an executor thread stopped while it served a session',
  ERR_EXECUTOR_OUT_OF_MEMORY: 'an executor thread ran out of JavaScript heap (a kernel or rank allocated without bound); the error names the kernel running and its PE',
  ERR_DATA_RACE: 'two actors touched the same device bytes, at least one writing, with nothing ordering them (--check-races)',
  // A run stopped before it ended (docs/decisions/0095-a-stuck-run-is-reported.md): each
  // carries a report of what every actor was doing (RunStoppedError).
  ERR_TIMEOUT: 'the run took longer than its --timeout (withTorch: timeout) and was stopped',
  ERR_INTERRUPTED: 'the run was interrupted (SIGINT, Ctrl-C) and stopped',
  ERR_VIRTUAL_TIME_LIMIT: "a PE's virtual clock passed the run's --max-virtual-time (withTorch: maxVirtualTimeNs)",
  ERR_INTERNAL: 'an invariant of kernbench itself was broken',

  // Bad arguments to the host API and the extension points, one code per
  // condition (decision 0043). Named the way Node.js names its own
  // (ERR_OUT_OF_RANGE, ERR_INVALID_ARG_VALUE, ERR_INVALID_BUFFER_SIZE, ...).
  //   values and types
  ERR_INVALID_ARG_VALUE: 'an argument is not one of the values it may take (a split mode, a reduce op, a backend)',
  ERR_INVALID_ARG_TYPE: 'an argument is not of the type the call takes (a function, an array, a tile)',
  ERR_OUT_OF_RANGE: 'a number is outside its range (a device index, nprocs, a size that must be a positive integer, an i32 value)',
  ERR_INDEX_OUT_OF_RANGE: 'an element index or slice reaches past the end of a tensor or tile',
  ERR_UNKNOWN_OPTION: 'an options object has a key the call does not take',
  ERR_INVALID_OPTIONS: 'an options object does not match its schema',
  ERR_INVALID_ENV: 'an environment variable read by kernbench has a value it cannot use',
  //   dtypes, shapes and bytes
  ERR_INVALID_DTYPE: 'a dtype is not one of the element types kernbench knows',
  ERR_DTYPE_MISMATCH: 'two tensors that must share a dtype do not',
  ERR_INVALID_SHAPE: 'a shape is not 1-D or 2-D with positive integer sizes',
  ERR_SHAPE_MISMATCH: 'a tensor has a different shape or size from the one the call needs',
  ERR_TILE_MISMATCH: 'a tile operand or out tile has a different size, dtype or inner dimension from the one the op needs',
  ERR_VALUE_COUNT_MISMATCH: 'an array of values does not hold one value per element of its shape',
  ERR_PARTIAL_ELEMENT: 'a byte offset or byte length falls inside an element of its dtype',
  ERR_INVALID_BUFFER_SIZE: 'a destination buffer does not hold exactly one slot per element',
  ERR_BUFFER_OUT_OF_BOUNDS: 'a typed view would reach past the end of its buffer',
  //   placement on the machine
  ERR_NO_SUCH_PE: 'a PE coordinate is outside the machine',
  ERR_NO_ROUTE: 'a SIP topology kind gives no route between two SIPs',
  ERR_DPPOLICY_SIP: 'a DPPolicy was given a SIP field (placement across SIPs is torch.ahbm.setDevice)',
  ERR_DPPOLICY_TOO_WIDE: 'a DPPolicy asks for more cubes, or more PEs per cube, than a SIP has',
  ERR_GEMM_SPLIT_PLACEMENT: "a GEMM split over a cube's PEs was given a tensor that is not one shard in the cube's shared HBM or SRAM",
  ERR_GEMM_PES_BEYOND_CUBE: "a layer's GEMMs were asked to split over more PEs than the cube holding their tensors has (or fewer than one)",
  ERR_INVALID_SPLIT_SIZES: "allToAllSingle's input or output split sizes are not one non-negative integer per rank summing to the tensor's elements",
  ERR_UNEVEN_SPLIT: 'a tensor or a size cannot be split into equal parts over the PEs or ranks',
  ERR_OVERLAP_NEEDS_SEQUENCE_PARALLEL: 'a parallel linear layer or transformer layer asked for overlap without sequence parallelism (the fused kernels all-gather and reduce-scatter)',
  ERR_BAD_WAIT_REPORT: 'a kernel reported a wait time (tl.reportWaitPs) that is not a non-negative integer of ps',
  ERR_SHARED_PE: 'two shards of one tensor sit on one PE where each PE must hold one',
  ERR_TENSOR_PLACEMENT: 'a tensor lives on a SIP or PE other than the one the call needs',
  ERR_SHARD_LAYOUT: "a kernel's shard of a tensor does not cover the rows or columns the kernel needs on its PE",
  ERR_NEEDS_DEVICE_TENSOR: 'a host tensor (no device shards) was given where a device tensor is needed',
  ERR_STALE_TENSOR: 'a tensor was allocated in device memory that a failed spawn discarded',
  //   sessions, launches and process groups
  ERR_MAIN_THREAD_ONLY: 'a call that only the main host may make came from a spawned rank or an executor thread',
  ERR_LAUNCH_ARGS_TOO_LARGE: "a launch's arguments do not fit a command slot",
  ERR_LAUNCH_FOREIGN_PE: "during a spawn, a host launched onto a PE that is neither its own (rank r: SIP r; main: the SIPs of no rank) nor shared by a tensor among the spawn's arguments",
  ERR_NOT_INITIALIZED: 'a call needs a process group or tensor-parallel state that is not initialised yet',
  ERR_ALREADY_INITIALIZED: 'a process group or tensor-parallel state was initialised a second time',
  ERR_WORLD_SIZE_MISMATCH: 'a world size differs from the number of spawned ranks, or a tensor-parallel size from the world size',
  ERR_INVALID_RANK: 'a rank list or a source rank is not a set of ranks of the world or group',
  ERR_NOT_GROUP_MEMBER: "a rank called a collective of a group it is not a member of",
  ERR_CHANNEL_SETS_EXHAUSTED: 'a process group needs more IPCQ channel sets than ccl.channel_sets provides',
  ERR_NO_BIAS: 'a bias was loaded into a tensor-parallel layer built with bias: false',
  ERR_NO_NEIGHBOUR: "a kernel sent or received in a direction in which its collective's world gives it no neighbour",
  ERR_UNKNOWN_DIRECTION: 'a direction named is not one of east, west, north, south (a send, a receive, a launch\'s declared sends)',
  ERR_SEND_UNDECLARED: "a kernel sent in a direction its launch did not declare it sends on (launchCollective's sends, an algorithm's meta.sends)",
  ERR_WRONG_WORLD: 'a collective algorithm was launched on a world it does not run on (its kind or size)',
  ERR_NO_PEER_CHANNELS: 'a kernel addressed a peer by rank in a run whose ccl.peer_ranks does not cover its world',
  ERR_INVALID_PEER: 'a kernel or a point-to-point call addressed a peer that is not another rank of its world or group',
  ERR_P2P_MIXED_GROUPS: 'the ops of one batchIsendIrecv are on different process groups',
  ERR_INVALID_P2P_OP: "a P2POp's op is neither dist.isend nor dist.irecv",
  ERR_TENSOR_LIST_LENGTH: "allToAll's output or input list does not hold one tensor per rank of the group",
  // Rooted collectives (torch.distributed.gather / scatter, lib/host/distributed.ts).
  ERR_ROOT_LIST: "a gather's gatherList or a scatter's scatterList at the root is missing, or holds neither one tensor per group rank nor one tensor of all their blocks",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes of usage errors: the CLI exits 2 for these. */
export type UsageErrorCode = keyof typeof USAGE_ERROR_CODES;

/** Is `code` a usage error's (the CLI exits 2, printing the message alone)? */
export function isUsageCode(code: string): code is UsageErrorCode {
  return Object.hasOwn(USAGE_ERROR_CODES, code);
}
