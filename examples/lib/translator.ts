// Note 000's translator: token embeddings scaled by √d plus fixed sinusoidal positions, an
// encoder-decoder nn.Transformer, and a projection to the target vocabulary, split into the
// encode / decode / project steps that greedy decoding calls one at a time.
import * as rt from "ringtorch";

const { nn } = rt;

export interface TranslatorOptions {
  srcVocab: number;
  tgtVocab: number;
  maxLen: number;
  dModel: number;
  heads: number;
  layers: number;
  ff: number;
  dropout: number;
}

/** PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(…), as in "Attention Is All You Need". */
function sinusoidal(maxLen: number, d: number): rt.Tensor {
  const pe = new Float32Array(maxLen * d);
  for (let pos = 0; pos < maxLen; pos++) {
    for (let i = 0; i < d; i += 2) {
      const angle = pos / 10000 ** (i / d);
      pe[pos * d + i] = Math.sin(angle);
      if (i + 1 < d) pe[pos * d + i + 1] = Math.cos(angle);
    }
  }
  return rt.tensor(pe, { shape: [maxLen, d] });
}

export class Translator extends nn.Module {
  src_embed: rt.nn.Embedding;
  tgt_embed: rt.nn.Embedding;
  transformer: rt.nn.Transformer;
  proj: rt.nn.Linear;
  dropout: rt.nn.Dropout;
  private readonly scale: number;

  constructor(readonly o: TranslatorOptions) {
    super();
    this.src_embed = new nn.Embedding(o.srcVocab, o.dModel);
    this.tgt_embed = new nn.Embedding(o.tgtVocab, o.dModel);
    this.transformer = new nn.Transformer({
      dModel: o.dModel,
      nhead: o.heads,
      numEncoderLayers: o.layers,
      numDecoderLayers: o.layers,
      dimFeedforward: o.ff,
      dropout: o.dropout,
      batchFirst: true,
    });
    this.proj = new nn.Linear(o.dModel, o.tgtVocab);
    this.dropout = new nn.Dropout(o.dropout);
    this.registerBuffer("pe", sinusoidal(o.maxLen, o.dModel), false);
    this.scale = Math.sqrt(o.dModel);
  }

  private embed(e: rt.nn.Embedding, ids: rt.Tensor): rt.Tensor {
    const pe = (this as unknown as { pe: rt.Tensor }).pe.narrow(0, 0, ids.shape[1]);
    return this.dropout.call(e.call(ids).mul(this.scale).add(pe));
  }

  /** src [N, S] and its padding mask (true = pad) → memory [N, S, d]. */
  encode(src: rt.Tensor, srcPad: rt.Tensor): rt.Tensor {
    return this.transformer.encoder.call(this.embed(this.src_embed, src), { srcKeyPaddingMask: srcPad });
  }

  /** Decoder states [N, T, d] for the target prefix tgt [N, T] (causal), attending to memory. */
  decode(memory: rt.Tensor, srcPad: rt.Tensor, tgt: rt.Tensor, tgtPad: rt.Tensor | null = null): rt.Tensor {
    return this.transformer.decoder.call(this.embed(this.tgt_embed, tgt), memory, { tgtIsCausal: true, tgtKeyPaddingMask: tgtPad, memoryKeyPaddingMask: srcPad });
  }

  project(h: rt.Tensor): rt.Tensor {
    return this.proj.call(h);
  }

  /** Teacher-forced logits [N, T, tgtVocab] for training (what DDP's call runs). */
  override forward(src: rt.Tensor, srcPad: rt.Tensor, tgtIn: rt.Tensor, tgtPad: rt.Tensor): rt.Tensor {
    return this.project(this.decode(this.encode(src, srcPad), srcPad, tgtIn, tgtPad));
  }

  /** Greedy decoding of a batch: the most likely next token until every row has produced eos. */
  greedy(src: rt.Tensor, srcPad: rt.Tensor, sos: number, eos: number, maxLen: number): number[][] {
    return rt.noGrad(() => {
      const n = src.shape[0];
      const memory = this.encode(src, srcPad);
      const rows = Array.from({ length: n }, () => [sos]);
      const done = new Array<boolean>(n).fill(false);
      for (let t = 1; t < maxLen && !done.every(Boolean); t++) {
        const h = this.decode(memory, srcPad, rt.tensor(rows, { dtype: "int32" }));
        const next = this.project(h.select(1, t - 1)).argmax(-1).toArray() as number[];
        rows.forEach((r, i) => {
          r.push(done[i] ? eos : next[i]);
          if (next[i] === eos) done[i] = true;
        });
      }
      return rows.map((r) => {
        const end = r.indexOf(eos, 1);
        return r.slice(1, end < 0 ? undefined : end);
      });
    });
  }
}
