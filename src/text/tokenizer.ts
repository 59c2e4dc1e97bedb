/**
 * A Hugging Face tokenizer (tokenizer.json): normalizer → pre-tokenizer → model → post-processor,
 * with added tokens found first and a decoder for the way back.
 *
 *   const tok = text.Tokenizer.fromFile("tokenizer.json");
 *   tok.encode("Hello world!").ids;                       // [101, 7592, 2088, 999, 102]
 *   tok.encodeBatch(["a", "b c"], { padding: "longest" });
 */
import { readFileSync, writeFileSync } from "node:fs";
import { checkArity, checkOptions } from "../util/options.js";
import { type AddedToken, AddedVocabulary, type Segment, addedToken } from "./added_vocabulary.js";
import { type Decoder, decodeWith, decoderFromJson } from "./decoders.js";
import { type Encoding, type PaddingParams, type TruncationParams, makeEncoding, pad, paddingFromJson, paddingToJson, truncate, truncationFromJson, truncationToJson } from "./encoding.js";
import { type JsonObject, TokenizerFormatError, obj } from "./json.js";
import { type Model, modelFromJson } from "./models/index.js";
import { type Normalizer, normalizerFromJson } from "./normalizers.js";
import { type PostProcessor, postProcessorFromJson } from "./post_processors.js";
import { type PreTokenizer, preTokenizerFromJson } from "./pre_tokenizers.js";
import type { Trainer } from "./trainers/trainer.js";

export type TextInput = string | readonly [string, string];

export interface EncodeOptions {
  /** Add the post-processor's special tokens ([CLS], [SEP], …); default true. */
  addSpecialTokens?: boolean;
  /** "longest" pads to the batch's longest, "maxLength" to maxLength; false (default) uses the tokenizer's own padding setting. */
  padding?: "longest" | "maxLength" | boolean;
  /** Cut sequences to maxLength (longest first for pairs); default: the tokenizer's own truncation setting. */
  truncation?: boolean;
  maxLength?: number;
}
const ENCODE_KEYS = ["addSpecialTokens", "padding", "truncation", "maxLength"];

export class Tokenizer {
  normalizer: Normalizer | null = null;
  preTokenizer: PreTokenizer | null = null;
  postProcessor: PostProcessor | null = null;
  decoder: Decoder | null = null;
  truncation: TruncationParams | null = null;
  padding: PaddingParams | null = null;
  private added = new AddedVocabulary();

  constructor(public model: Model) {
    checkArity("Tokenizer", arguments, 1, "new Tokenizer(model)");
  }

  static fromString(json: string): Tokenizer {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (e) {
      throw new TokenizerFormatError("", `is not valid JSON: ${(e as Error).message}`);
    }
    return Tokenizer.fromJSON(parsed);
  }
  static fromFile(path: string): Tokenizer {
    try {
      return Tokenizer.fromString(readFileSync(path, "utf8"));
    } catch (e) {
      if (e instanceof TokenizerFormatError) e.message = e.message.replace(/^tokenizer\.json/, path);
      throw e;
    }
  }
  static fromJSON(v: unknown): Tokenizer {
    const o = obj(v, "(top level)");
    const t = new Tokenizer(modelFromJson(o.model, "model"));
    t.normalizer = normalizerFromJson(o.normalizer);
    t.preTokenizer = preTokenizerFromJson(o.pre_tokenizer);
    t.postProcessor = postProcessorFromJson(o.post_processor);
    t.decoder = decoderFromJson(o.decoder);
    t.truncation = truncationFromJson(o.truncation);
    t.padding = paddingFromJson(o.padding);
    t.added = AddedVocabulary.fromJSON(o.added_tokens);
    t.added.rebuild((s) => t.normalize(s));
    return t;
  }
  toJSON(): JsonObject {
    return {
      version: "1.0",
      truncation: truncationToJson(this.truncation),
      padding: paddingToJson(this.padding),
      added_tokens: this.added.toJSON(),
      normalizer: this.normalizer?.toJSON() ?? null,
      pre_tokenizer: this.preTokenizer?.toJSON() ?? null,
      model: this.model.toJSON(),
      post_processor: this.postProcessor?.toJSON() ?? null,
      decoder: this.decoder?.toJSON() ?? null,
    };
  }
  toString(): string {
    return JSON.stringify(this.toJSON(), null, 2);
  }
  /** Writes tokenizer.json, which Hugging Face's Tokenizer.from_file loads. */
  save(path: string): void {
    writeFileSync(path, this.toString());
  }

  normalize(s: string): string {
    return this.normalizer === null ? s : this.normalizer.normalize(s);
  }
  /** The words the model sees for a text (normalized and pre-tokenized; added tokens not split out). */
  preTokenize(s: string): string[] {
    const n = this.normalize(s);
    return this.preTokenizer === null ? (n.length > 0 ? [n] : []) : this.preTokenizer.preTokenize([n]);
  }

  /** Adds tokens that are never split (special ones are skipped by decode). Returns how many were new. */
  addTokens(tokens: readonly (string | AddedToken)[], special = false): number {
    let added = 0;
    let next = Math.max(this.model.getVocabSize(), ...[...this.added.tokens.keys()].map((k) => k + 1));
    for (const t of tokens) {
      const token = typeof t === "string" ? addedToken(t, { special }) : special ? { ...t, special: true } : t;
      if (token.content.length === 0 || this.added.idOf(token.content) !== undefined) continue;
      const id = this.model.tokenToId(token.content) ?? next++;
      this.added.add(id, token);
      added++;
    }
    this.added.rebuild((s) => this.normalize(s));
    return added;
  }
  addSpecialTokens(tokens: readonly (string | AddedToken)[]): number {
    return this.addTokens(tokens, true);
  }

  tokenToId(token: string): number | undefined {
    return this.added.idOf(token) ?? this.model.tokenToId(token);
  }
  idToToken(id: number): string | undefined {
    return this.added.tokens.get(id)?.content ?? this.model.idToToken(id);
  }
  getVocab(withAddedTokens = true): Map<string, number> {
    const v = this.model.getVocab();
    if (withAddedTokens) for (const [id, t] of this.added.tokens) v.set(t.content, id);
    return v;
  }
  getVocabSize(withAddedTokens = true): number {
    return withAddedTokens ? this.getVocab(true).size : this.model.getVocabSize();
  }

  /** Ids and tokens of one sequence, before special tokens, truncation and padding. */
  private encodeSequence(text: string, typeId: number): Encoding {
    const ids: number[] = [];
    const tokens: string[] = [];
    const segments: Segment[] = [];
    if (this.added.isEmpty) segments.push(this.normalize(text));
    else {
      const raw: Segment[] = [];
      this.added.split(text, false, raw);
      for (const s of raw) {
        if (typeof s === "string") this.added.split(this.normalize(s), true, segments);
        else segments.push(s);
      }
    }
    for (const s of segments) {
      if (typeof s !== "string") {
        ids.push(s.id);
        tokens.push(s.content);
        continue;
      }
      const words = this.preTokenizer === null ? (s.length > 0 ? [s] : []) : this.preTokenizer.preTokenize([s]);
      for (const w of words) this.model.tokenize(w, ids, tokens);
    }
    return makeEncoding(ids, tokens, typeId);
  }

  private truncationFor(o: EncodeOptions): TruncationParams | null {
    if (o.truncation === undefined) return this.truncation;
    if (o.truncation === false) return null;
    const maxLength = o.maxLength ?? this.truncation?.maxLength;
    if (maxLength === undefined) throw new RangeError("encode: truncation: true needs maxLength (or a tokenizer with truncation enabled)");
    return { strategy: "longestFirst", direction: "right", ...this.truncation, maxLength };
  }
  private paddingFor(o: EncodeOptions): PaddingParams | null {
    if (o.padding === undefined) return this.padding;
    if (o.padding === false) return null;
    const base: PaddingParams = this.padding ?? { length: "longest", direction: "right", padToMultipleOf: null, padId: this.tokenToId("[PAD]") ?? 0, padTypeId: 0, padToken: this.idToToken(this.tokenToId("[PAD]") ?? 0) ?? "[PAD]" };
    if (o.padding === "maxLength") {
      if (o.maxLength === undefined) throw new RangeError('encode: padding: "maxLength" needs maxLength');
      return { ...base, length: o.maxLength };
    }
    return { ...base, length: "longest" };
  }

  /** Encodes one text or a [text, pair] as Hugging Face's Tokenizer.encode. */
  encode(input: string, pair: string | null = null, options: EncodeOptions = {}): Encoding {
    checkArity("Tokenizer.encode", arguments, 3, "tokenizer.encode(text, pair?, { addSpecialTokens, truncation, maxLength, padding })");
    checkOptions("Tokenizer.encode", options, ENCODE_KEYS);
    return this.encodeBatch([pair === null ? input : [input, pair]], options)[0];
  }

  /** Encodes a batch; with padding every encoding has the same length. */
  encodeBatch(inputs: readonly TextInput[], options: EncodeOptions = {}): Encoding[] {
    checkArity("Tokenizer.encodeBatch", arguments, 2, "tokenizer.encodeBatch(texts, { addSpecialTokens, truncation, maxLength, padding })");
    checkOptions("Tokenizer.encodeBatch", options, ENCODE_KEYS);
    if (!Array.isArray(inputs)) throw new TypeError(`Tokenizer.encodeBatch: expected an array of texts (or [text, pair] arrays), got ${typeof inputs}`);
    const addSpecial = options.addSpecialTokens ?? true;
    const trunc = this.truncationFor(options);
    const padding = this.paddingFor(options);
    const out = inputs.map((input, i) => {
      const [a, b] = typeof input === "string" ? [input, null] : input;
      if (typeof a !== "string" || (b !== null && typeof b !== "string")) throw new TypeError(`Tokenizer.encodeBatch: input ${i} must be a string or a [string, string] pair`);
      const ea = this.encodeSequence(a, 0);
      const eb = b === null ? null : this.encodeSequence(b, 1);
      if (trunc !== null) {
        const added = addSpecial && this.postProcessor !== null ? this.postProcessor.addedTokens(eb !== null) : 0;
        if (added > trunc.maxLength) throw new RangeError(`truncation: maxLength ${trunc.maxLength} is shorter than the ${added} special tokens the post-processor adds`);
        truncate(ea, eb, { ...trunc, maxLength: trunc.maxLength - added });
      }
      if (this.postProcessor !== null) return this.postProcessor.process(ea, eb, addSpecial);
      if (eb === null) return ea;
      return { ids: [...ea.ids, ...eb.ids], tokens: [...ea.tokens, ...eb.tokens], typeIds: [...ea.typeIds, ...eb.typeIds], attentionMask: [...ea.attentionMask, ...eb.attentionMask], specialTokensMask: [...ea.specialTokensMask, ...eb.specialTokensMask] };
    });
    if (padding !== null) pad(out, padding);
    return out;
  }

  /** Text of ids; special tokens are left out unless skipSpecialTokens is false. */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    checkOptions("Tokenizer.decode", options, ["skipSpecialTokens"]);
    const skip = options.skipSpecialTokens ?? true;
    const tokens: string[] = [];
    for (const id of ids) {
      const added = this.added.tokens.get(id);
      if (added !== undefined) {
        if (!(skip && added.special)) tokens.push(added.content);
        continue;
      }
      const t = this.model.idToToken(id);
      if (t === undefined) throw new RangeError(`Tokenizer.decode: id ${id} is not in the vocabulary (size ${this.getVocabSize()})`);
      tokens.push(t);
    }
    return decodeWith(this.decoder, tokens);
  }
  decodeBatch(batch: readonly (readonly number[])[], options: { skipSpecialTokens?: boolean } = {}): string[] {
    return batch.map((ids) => this.decode(ids, options));
  }

  /** Hugging Face's enable_padding: every encodeBatch pads (to the longest, or to length). */
  enablePadding(options: { length?: number; direction?: "right" | "left"; padToMultipleOf?: number; padId?: number; padTypeId?: number; padToken?: string } = {}): void {
    checkOptions("Tokenizer.enablePadding", options, ["length", "direction", "padToMultipleOf", "padId", "padTypeId", "padToken"]);
    const padToken = options.padToken ?? "[PAD]";
    this.padding = { length: options.length ?? "longest", direction: options.direction ?? "right", padToMultipleOf: options.padToMultipleOf ?? null, padId: options.padId ?? this.tokenToId(padToken) ?? 0, padTypeId: options.padTypeId ?? 0, padToken };
  }
  noPadding(): void {
    this.padding = null;
  }
  enableTruncation(maxLength: number, options: { strategy?: TruncationParams["strategy"]; direction?: "right" | "left" } = {}): void {
    checkOptions("Tokenizer.enableTruncation", options, ["strategy", "direction"]);
    if (!Number.isInteger(maxLength) || maxLength < 0) throw new RangeError(`Tokenizer.enableTruncation: maxLength must be a non-negative integer, got ${maxLength}`);
    this.truncation = { maxLength, strategy: options.strategy ?? "longestFirst", direction: options.direction ?? "right" };
  }
  noTruncation(): void {
    this.truncation = null;
  }

  /** Trains the model on texts (normalized and pre-tokenized by this tokenizer) and adds the trainer's special tokens. */
  train(texts: Iterable<string>, trainer: Trainer): this {
    for (const t of texts) trainer.feed(this.preTokenize(t));
    return this.finishTraining(trainer);
  }
  /** As train, from an async source such as a file read line by line (larger than memory). */
  async trainAsync(texts: AsyncIterable<string> | Iterable<string>, trainer: Trainer): Promise<this> {
    for await (const t of texts) trainer.feed(this.preTokenize(t));
    return this.finishTraining(trainer);
  }
  private finishTraining(trainer: Trainer): this {
    const { model, specialTokens } = trainer.train(this.model);
    this.model = model;
    this.addSpecialTokens(specialTokens.map((s) => addedToken(s, { special: true })));
    return this;
  }
}
