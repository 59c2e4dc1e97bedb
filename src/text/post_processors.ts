/**
 * Post-processors of tokenizer.json (`post_processor`): add the special tokens around one
 * sequence or a pair ([CLS] A [SEP] B [SEP]) and set the token type ids.
 */
import { type Encoding, EncodingBuilder, concatEncodings } from "./encoding.js";
import { type Json, type JsonObject, TokenizerFormatError, arr, bool, describeJson, int, obj, str, typeOf, unknownType } from "./json.js";

export interface PostProcessor {
  /** How many tokens it adds to one sequence (isPair false) or a pair. */
  addedTokens(isPair: boolean): number;
  process(a: Encoding, b: Encoding | null, addSpecialTokens: boolean): Encoding;
  toJSON(): JsonObject;
}

export type TemplatePiece = { kind: "special"; id: string; typeId: number } | { kind: "sequence"; id: "A" | "B"; typeId: number };
export interface SpecialTokenTemplate {
  id: string;
  ids: number[];
  tokens: string[];
}

export class TemplateProcessing implements PostProcessor {
  constructor(readonly single: TemplatePiece[], readonly pair: TemplatePiece[], readonly specialTokens: Map<string, SpecialTokenTemplate>) {
    for (const p of [...single, ...pair]) {
      if (p.kind === "special" && !specialTokens.has(p.id)) throw new TokenizerFormatError("post_processor.special_tokens", `has no entry for ${JSON.stringify(p.id)}, which the template uses`);
    }
  }
  addedTokens(isPair: boolean): number {
    let n = 0;
    for (const p of isPair ? this.pair : this.single) if (p.kind === "special") n += this.specialTokens.get(p.id)!.ids.length;
    return n;
  }
  process(a: Encoding, b: Encoding | null, addSpecialTokens: boolean): Encoding {
    const out = new EncodingBuilder();
    for (const p of b === null ? this.single : this.pair) {
      if (p.kind === "sequence") out.sequence(p.id === "A" ? a : b!, p.typeId);
      else if (addSpecialTokens) {
        const t = this.specialTokens.get(p.id)!;
        out.special(t.ids, t.tokens, p.typeId);
      }
    }
    return out.out;
  }
  toJSON(): JsonObject {
    const piece = (p: TemplatePiece): Json => (p.kind === "special" ? { SpecialToken: { id: p.id, type_id: p.typeId } } : { Sequence: { id: p.id, type_id: p.typeId } });
    const specials: JsonObject = {};
    for (const [k, t] of this.specialTokens) specials[k] = { id: t.id, ids: t.ids, tokens: t.tokens };
    return { type: "TemplateProcessing", single: this.single.map(piece), pair: this.pair.map(piece), special_tokens: specials };
  }
}

/** BERT's [CLS] A [SEP] (B [SEP]) with type ids 0 for A and 1 for B; Roberta's <s> A </s></s> B </s> with type ids 0. */
export class BertProcessing implements PostProcessor {
  constructor(readonly sep: [string, number], readonly cls: [string, number], readonly roberta = false, readonly extra: JsonObject = {}) {}
  addedTokens(isPair: boolean): number {
    return isPair ? (this.roberta ? 4 : 3) : 2;
  }
  process(a: Encoding, b: Encoding | null, addSpecialTokens: boolean): Encoding {
    const typeB = this.roberta ? 0 : 1;
    const out = new EncodingBuilder();
    if (!addSpecialTokens) {
      out.sequence(a, null);
      if (b !== null) out.sequence(b, typeB);
      return out.out;
    }
    const sep = [this.sep[1]];
    const sepT = [this.sep[0]];
    out.special([this.cls[1]], [this.cls[0]], 0).sequence(a, 0).special(sep, sepT, 0);
    if (b !== null) {
      if (this.roberta) out.special(sep, sepT, 0);
      out.sequence(b, typeB).special(sep, sepT, typeB);
    }
    return out.out;
  }
  toJSON(): JsonObject {
    return { type: this.roberta ? "RobertaProcessing" : "BertProcessing", sep: this.sep, cls: this.cls, ...this.extra };
  }
}

/** Byte-level's post-processor only trims offsets, which ringtorch does not keep: it joins A and B. */
export class ByteLevelProcessing implements PostProcessor {
  constructor(readonly config: JsonObject) {}
  addedTokens(): number {
    return 0;
  }
  process(a: Encoding, b: Encoding | null): Encoding {
    return b === null ? a : new EncodingBuilder().sequence(a, null).sequence(b, 1).out;
  }
  toJSON(): JsonObject {
    return { type: "ByteLevel", ...this.config };
  }
}

export class PostProcessorSequence implements PostProcessor {
  constructor(readonly processors: PostProcessor[]) {}
  addedTokens(isPair: boolean): number {
    return this.processors.reduce((n, p) => n + p.addedTokens(isPair), 0);
  }
  process(a: Encoding, b: Encoding | null, addSpecialTokens: boolean): Encoding {
    // Hugging Face runs each processor on the output of the last; after the first, A and B are one sequence.
    let out = this.processors[0].process(a, b, addSpecialTokens);
    for (const p of this.processors.slice(1)) out = p.process(out, null, addSpecialTokens);
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Sequence", processors: this.processors.map((p) => p.toJSON()) };
  }
}

function tokenPair(v: unknown, path: string): [string, number] {
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "string" || typeof v[1] !== "number") throw new TokenizerFormatError(path, `must be [token, id], got ${describeJson(v)}`);
  return [v[0], v[1]];
}

function templatePieces(o: JsonObject, key: string, path: string): TemplatePiece[] {
  return arr(o, key, path).map((p, i) => {
    const where = `${path}.${key}[${i}]`;
    const po = obj(p, where);
    if (po.SpecialToken !== undefined) {
      const s = obj(po.SpecialToken, `${where}.SpecialToken`);
      return { kind: "special", id: str(s, "id", `${where}.SpecialToken`), typeId: int(s, "type_id", `${where}.SpecialToken`, 0) };
    }
    if (po.Sequence !== undefined) {
      const s = obj(po.Sequence, `${where}.Sequence`);
      const id = str(s, "id", `${where}.Sequence`);
      if (id !== "A" && id !== "B") throw new TokenizerFormatError(`${where}.Sequence.id`, `must be "A" or "B", got ${JSON.stringify(id)}`);
      return { kind: "sequence", id, typeId: int(s, "type_id", `${where}.Sequence`, 0) };
    }
    throw new TokenizerFormatError(where, `must be {"SpecialToken": ...} or {"Sequence": ...}, got ${describeJson(p)}`);
  });
}

const TYPES = ["TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel", "Sequence"];

export function postProcessorFromJson(v: unknown, path = "post_processor"): PostProcessor | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const type = typeOf(o, path);
  switch (type) {
    case "TemplateProcessing": {
      const specials = new Map<string, SpecialTokenTemplate>();
      for (const [k, t] of Object.entries(obj(o.special_tokens ?? {}, `${path}.special_tokens`))) {
        const where = `${path}.special_tokens[${JSON.stringify(k)}]`;
        const to = obj(t, where);
        const ids = arr(to, "ids", where).map((x, i) => (typeof x === "number" ? x : tokenPair(null, `${where}.ids[${i}]`)[1]));
        const tokens = arr(to, "tokens", where).map((x) => String(x));
        specials.set(k, { id: str(to, "id", where), ids, tokens });
      }
      return new TemplateProcessing(templatePieces(o, "single", path), templatePieces(o, "pair", path), specials);
    }
    case "BertProcessing": return new BertProcessing(tokenPair(o.sep, `${path}.sep`), tokenPair(o.cls, `${path}.cls`));
    case "RobertaProcessing": return new BertProcessing(tokenPair(o.sep, `${path}.sep`), tokenPair(o.cls, `${path}.cls`), true, { trim_offsets: bool(o, "trim_offsets", path, true), add_prefix_space: bool(o, "add_prefix_space", path, true) });
    case "ByteLevel": return new ByteLevelProcessing({ add_prefix_space: bool(o, "add_prefix_space", path, true), trim_offsets: bool(o, "trim_offsets", path, true), use_regex: bool(o, "use_regex", path, true) });
    case "Sequence": return new PostProcessorSequence(arr(o, "processors", path).map((p, i) => postProcessorFromJson(p, `${path}.processors[${i}]`)!).filter((p) => p !== null));
    default: return unknownType(path, type, TYPES);
  }
}
