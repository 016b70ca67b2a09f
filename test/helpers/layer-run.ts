// Runs on: main thread (tap). Owns: running the transformer_layer bench's worker
// on every SIP, one rank each, for the tests of lib/tp's layer (tp-layer,
// tp-overlap, tp-sip-gemm).
import { layerWorker, type LayerRankResult } from '../../benches/transformer_layer.js';
import type { TransformerLayerConfig } from '../../lib/tp/transformer-layer.js';
import { TestRuntime } from './run.js';

const BENCH = new URL('../../benches/transformer_layer.js', import.meta.url).href;

/** A runtime that knows the layer bench's module, and a run of layer `c` on every SIP of it (the caller closes `rt`). */
export function layerRuntime(): { rt: TestRuntime; runLayer(c: TransformerLayerConfig, over?: { noData?: boolean; sets?: string[] }): Promise<LayerRankResult[]> } {
  const rt = new TestRuntime({ modules: [BENCH] });
  const runLayer = async (c: TransformerLayerConfig, over: { noData?: boolean; sets?: string[] } = {}): Promise<LayerRankResult[]> => {
    const r = await rt.session(over, (torch) => torch.multiprocessing.spawn(layerWorker, { args: [c, over.noData ?? false], nprocs: torch.spec.system.sips.count }));
    return r.value;
  };
  return { rt, runLayer };
}
