// Random heads: PyTorch's default initialisation of nn.MultiheadAttention from a seed, on the
// lesson's token features (projected to the model's width when it is not 64).
import { TokenFeatureSource } from './token-features.js';

export class RandomSource extends TokenFeatureSource {
  /** @param {{ seed?: number, embedDim?: number, numHeads?: number }} [o] */
  constructor({ seed = 0, embedDim = 64, numHeads = 8 } = {}) {
    super({ config: { embedDim, numHeads, seed } });
    /** @type {'random'} */
    this.id = 'random';
    this.seed = seed;
    this.name = `random heads (seed ${seed})`;
  }

  short() { return 'random'; }

  /** @param {number} h @param {import('../lib/index.js').HeadStatistics} s */
  describe(h, s) {
    return {
      ...super.describe(h, s),
      typical: 'Typical function: in trained models, heads specialise during training (previous-token, syntactic, coreference and sink heads are all found in BERT and GPT-2); random weights have not been shaped at all, so what this head does is read from the statistics above.',
      how: 'These weights are random (uniform Xavier initialisation for W_Q, W_K, W_V, as in PyTorch). Random query and key vectors give small scores of similar size, so the softmax stays close to uniform.',
    };
  }

  note() {
    return `PyTorch's default initialisation from seed ${this.seed}. Untrained heads have learned nothing: their maps are usually diffuse and alike (each head's statistics and the divergences say how much, on the sentence shown), which is why the designed (or trained) weights matter.`;
  }

  woNote() {
    return 'These W_O weights mix all heads into every output number, as trained models do.';
  }
}
