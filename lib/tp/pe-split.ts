// Runs on: a host thread (a spawned rank). Owns: the views that split one
// GEMM launch over several PEs of one cube while every tensor stays where it
// is (decision 0116). A layer's tensors are one shard each, in the HBM (or
// SRAM) of one cube; that memory is shared by the cube's PEs (a load or store
// is granted on the cube's channel, docs/timing.md), so any PE of the cube
// may read or write a block of it. A view is the same bytes described as
// shards on several PEs:
//
//   tensor y [M, N], one shard on PE p        view: a row block per PE
//   +--------------------------+              +--------------------------+
//   |                          |              | rows 0..m0      on PE p  |
//   |   one shard, rows 0..M   |     ==>      | rows m0..m1     on PE p+1|
//   |   (cube c's HBM)         |              | ...  (same bytes, same   |
//   |                          |              |      cube c's HBM)       |
//   +--------------------------+              +--------------------------+
//
// A row block of a row-major tensor is one contiguous byte range, so each view
// shard is an ordinary shard (offset, bytes, rows x cols). A column block is
// not contiguous, which is why GEMMs split by output rows: x and y by rows, the
// weight and bias whole on every PE (each PE reads them in full).
//
// PEs of another cube cannot take part: a shard's accesses are charged to its
// own cube's channel, and no path charges a PE for reaching another cube's
// memory (no cube-to-cube link on a load or store), so a view shard there
// would read cube c's bytes for free. TCM is one PE's own and is refused.
import { KernbenchError } from '../errors.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';

/**
 * The PEs a GEMM split `pes` ways runs on: `pes` PEs of the one cube holding
 * `t`, starting at the PE that owns it, so that the first block stays on that
 * PE. `pesPerCube` is the machine's.
 */
export function cubePes(t: TensorDesc, pes: number, pesPerCube: number): { cube: number; sip: number; pes: number[] } {
  const s = onlyShard(t);
  if (!Number.isInteger(pes) || pes < 1 || pes > pesPerCube) {
    throw new KernbenchError('ERR_GEMM_PES_BEYOND_CUBE', `split GEMM: a GEMM splits over PEs of the cube holding its tensors (${pesPerCube} PEs a cube), got ${pes} PEs`);
  }
  return { sip: s.sip, cube: s.cube, pes: Array.from({ length: pes }, (_, i) => (s.pe + i) % pesPerCube) };
}

/**
 * `t` (2-D, one shard) as row blocks on `pes` (PE indices of its cube): block
 * i, rows [i M / n, (i + 1) M / n) rounded down, on pes[i]. Blocks differ by at
 * most one row; with fewer rows than PEs, only the first M PEs get one.
 */
export function rowBlocks(t: TensorDesc, pes: readonly number[]): TensorDesc {
  const s = onlyShard(t);
  if (t.shape.length !== 2) throw new KernbenchError('ERR_INVALID_SHAPE', `split GEMM: row blocks need a 2-D tensor, got '${t.name}' of shape [${t.shape.join(', ')}]`);
  const [rows, cols] = t.shape;
  const rowBytes = s.nbytes / rows;
  const n = Math.min(pes.length, rows);
  const shards: ShardDesc[] = [];
  for (let i = 0; i < n; i++) {
    const first = Math.floor((i * rows) / n);
    const count = Math.floor(((i + 1) * rows) / n) - first;
    shards.push({ ...s, pe: pes[i], arenaOffset: s.arenaOffset + first * rowBytes, deviceOffset: s.deviceOffset + first * rowBytes, nbytes: count * rowBytes, rows: [first, count], cols: [0, cols] });
  }
  return { ...t, shards };
}

/** `t` (one shard) whole on each of `pes`: the same bytes, read by every PE. */
export function wholeOn(t: TensorDesc, pes: readonly number[]): TensorDesc {
  const s = onlyShard(t);
  return { ...t, shards: pes.map((pe) => ({ ...s, pe })) };
}

/** `t`'s one shard, in memory its cube's PEs share (HBM or SRAM; TCM is one PE's own). */
function onlyShard(t: TensorDesc): ShardDesc {
  const s = t.shards[0];
  if (t.shards.length !== 1 || s.space === 'tcm') {
    throw new KernbenchError('ERR_GEMM_SPLIT_PLACEMENT', `split GEMM: tensor '${t.name}' must be one shard (the default DPPolicy) in its cube's hbm or sram, which the cube's PEs share, got ${t.shards.length} shard(s), the first in ${s?.space ?? 'no space'}`);
  }
  return s;
}
