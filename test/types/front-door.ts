// Compile-time checks, never run: `npm run build` (tsc) fails if one breaks.
// spawn and launch are typed through the public entry points — a worker's
// args and result, a kernel's arguments — so benches and tests need no casts.
// Each `@ts-expect-error` line must stay an error; each `Same` must stay true.
import type { SpawnContext, Tensor, Torch } from '../../lib/public/index.js';
import { defineKernel, type TensorDesc } from '../../lib/public/kernel.js';

type Same<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;

interface Out {
  rank: number;
  n: number;
}

export async function worker(rank: number, n: number, label: string, torch: Torch): Promise<Out> {
  return { rank: rank + torch.ahbm.currentDevice(), n: n + label.length };
}

export function noTorch(rank: number): number {
  return rank;
}

export const scale = defineKernel(import.meta.url, 'scale', async (tl, t: TensorDesc, by: number, bias?: TensorDesc | null) => {
  void [tl, t, by, bias];
});

export async function checks(torch: Torch, x: Tensor): Promise<boolean[]> {
  const results = await torch.multiprocessing.spawn(worker, { args: [1, 'a'], nprocs: 2 });
  const ctx = await torch.multiprocessing.spawn(worker, { args: [1, 'a'], nprocs: 2, join: false });
  const joined = await ctx.join();
  const plain = await torch.multiprocessing.spawn(noTorch, { nprocs: 2 });

  // @ts-expect-error args must match the worker's parameters after rank (a string where it takes a number)
  await torch.multiprocessing.spawn(worker, { args: ['1', 'a'], nprocs: 2 });
  // @ts-expect-error a worker that takes arguments needs args
  await torch.multiprocessing.spawn(worker, { nprocs: 2 });
  // @ts-expect-error one argument too many
  await torch.multiprocessing.spawn(noTorch, { args: [1], nprocs: 2 });

  torch.launch('scale', scale, x, 2);
  torch.launch('scale', scale, x, 2, x);
  torch.launch('scale', scale, x, 2, null);
  // @ts-expect-error a number where the kernel takes a tensor
  torch.launch('scale', scale, 3, 2);
  // @ts-expect-error a missing argument
  torch.launch('scale', scale, x);

  const same: [Same<typeof results, Out[]>, Same<typeof ctx, SpawnContext<Out>>, Same<typeof joined, Out[]>, Same<typeof plain, number[]>] = [true, true, true, true];
  return same;
}
