// Runs on: any thread. Owns: the model shapes the transformer layer and its
// benches run, each from its published configuration, and the one small
// preset that is run with data in the checks. One file, so that a shape is
// stated once (the layer, the benches, the docs and the tests read it here).
//
// Sources:
//   gpt3-175b   Brown et al. 2020, "Language Models are Few-Shot Learners",
//               Table 2.1: n_layers 96, d_model 12288, n_heads 96, d_head 128,
//               n_ctx 2048; FFN 4 d_model, LayerNorm, GeLU, biases (GPT-2 style).
//   llama2-70b  Touvron et al. 2023, "Llama 2", Table 1 and the released
//               config.json: hidden_size 8192, num_attention_heads 64,
//               num_key_value_heads 8 (grouped-query attention),
//               intermediate_size 28672, max_position_embeddings 4096,
//               RMSNorm, SwiGLU, no biases.
//   tiny        not a published model: a GPT-style layer small enough to run
//               with data and check against the JS reference in a test.

export interface ModelPreset {
  /** Where the numbers come from. */
  source: string;
  /** h: the model (hidden) size. */
  hiddenSize: number;
  /** Attention (query) heads. */
  numAttentionHeads: number;
  /** Key/value heads (Megatron's num_query_groups); equal to the heads without grouped-query attention. */
  numQueryGroups: number;
  /** The MLP's inner size. */
  ffnHiddenSize: number;
  /** s: tokens per sequence. */
  seqLength: number;
  normalization: 'LayerNorm' | 'RMSNorm';
  /** gelu: fc1 h -> ffn, GeLU, fc2; swiglu: gate and up h -> ffn, silu(gate) * up, down. */
  activation: 'gelu' | 'swiglu';
  /** Biases on the linear layers (GPT: yes, Llama: no). */
  addBias: boolean;
}

export const MODEL_PRESETS = {
  'gpt3-175b': {
    source: 'Brown et al. 2020, Table 2.1 (GPT-3 175B)',
    hiddenSize: 12288,
    numAttentionHeads: 96,
    numQueryGroups: 96,
    ffnHiddenSize: 4 * 12288,
    seqLength: 2048,
    normalization: 'LayerNorm',
    activation: 'gelu',
    addBias: true,
  },
  'llama2-70b': {
    source: 'Touvron et al. 2023, Table 1, and Llama-2-70b config.json',
    hiddenSize: 8192,
    numAttentionHeads: 64,
    numQueryGroups: 8,
    ffnHiddenSize: 28672,
    seqLength: 4096,
    normalization: 'RMSNorm',
    activation: 'swiglu',
    addBias: false,
  },
  tiny: {
    source: 'a GPT-style layer for checks with data (not a published model)',
    hiddenSize: 64,
    numAttentionHeads: 8,
    numQueryGroups: 8,
    ffnHiddenSize: 256,
    seqLength: 16,
    normalization: 'LayerNorm',
    activation: 'gelu',
    addBias: true,
  },
  'tiny-gqa': {
    source: 'a Llama-style layer for checks with data: grouped-query attention, RMSNorm, SwiGLU (not a published model)',
    hiddenSize: 64,
    numAttentionHeads: 8,
    numQueryGroups: 2,
    ffnHiddenSize: 96,
    seqLength: 16,
    normalization: 'RMSNorm',
    activation: 'swiglu',
    addBias: false,
  },
} as const satisfies Record<string, ModelPreset>;

export type PresetName = keyof typeof MODEL_PRESETS;
export const PRESET_NAMES = Object.keys(MODEL_PRESETS) as [PresetName, ...PresetName[]];
