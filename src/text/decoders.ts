/** Decoders of tokenizer.json (`decoder`): tokens back to text. */
import { fromByteLevel } from "./byte_level.js";
import { type Json, type JsonObject, arr, bool, int, obj, str, typeOf, unknownType } from "./json.js";
import { type Pattern, patternRegex, readPattern } from "./normalizers.js";

export interface Decoder {
  /** Hugging Face's decode_chain: tokens in, tokens out; decode joins the result. */
  decodeChain(tokens: string[]): string[];
  toJSON(): JsonObject;
}

export function decodeWith(decoder: Decoder | null, tokens: string[]): string {
  return decoder === null ? tokens.join(" ") : decoder.decodeChain(tokens).join("");
}

/** Undoes BERT's tokenization spaces ("hello ." → "hello."). */
export function cleanup(s: string): string {
  return s.replaceAll(" .", ".").replaceAll(" ?", "?").replaceAll(" !", "!").replaceAll(" ,", ",").replaceAll(" ' ", "'").replaceAll(" n't", "n't").replaceAll(" 'm", "'m").replaceAll(" do not", " don't").replaceAll(" 's", "'s").replaceAll(" 've", "'ve").replaceAll(" 're", "'re");
}

export class WordPieceDecoder implements Decoder {
  constructor(readonly prefix = "##", readonly cleanup = true) {}
  decodeChain(tokens: string[]): string[] {
    return tokens.map((t, i) => {
      if (i !== 0) t = t.startsWith(this.prefix) ? t.slice(this.prefix.length) : " " + t;
      return this.cleanup ? cleanup(t) : t;
    });
  }
  toJSON(): JsonObject {
    return { type: "WordPiece", prefix: this.prefix, cleanup: this.cleanup };
  }
}

export class ByteLevelDecoder implements Decoder {
  constructor(readonly config: JsonObject = { add_prefix_space: true, trim_offsets: true, use_regex: true }) {}
  decodeChain(tokens: string[]): string[] {
    return [fromByteLevel(tokens)];
  }
  toJSON(): JsonObject {
    return { type: "ByteLevel", ...this.config };
  }
}

export class BPEDecoder implements Decoder {
  constructor(readonly suffix = "</w>") {}
  decodeChain(tokens: string[]): string[] {
    return tokens.map((t, i) => t.replaceAll(this.suffix, i === tokens.length - 1 ? "" : " "));
  }
  toJSON(): JsonObject {
    return { type: "BPEDecoder", suffix: this.suffix };
  }
}

export class MetaspaceDecoder implements Decoder {
  constructor(readonly replacement = "▁", readonly prependScheme = "always", readonly split = true) {}
  decodeChain(tokens: string[]): string[] {
    return tokens.map((t, i) => {
      const s = t.replaceAll(this.replacement, " ");
      return i === 0 && this.prependScheme !== "never" && s.startsWith(" ") ? s.slice(1) : s;
    });
  }
  toJSON(): JsonObject {
    return { type: "Metaspace", replacement: this.replacement, prepend_scheme: this.prependScheme, split: this.split };
  }
}

export class ReplaceDecoder implements Decoder {
  private readonly re: RegExp;
  constructor(readonly pattern: Pattern, readonly content: string) {
    this.re = patternRegex(pattern, "gu");
  }
  decodeChain(tokens: string[]): string[] {
    return tokens.map((t) => t.replace(this.re, () => this.content));
  }
  toJSON(): JsonObject {
    return { type: "Replace", pattern: this.pattern as unknown as Json, content: this.content };
  }
}

export class StripDecoder implements Decoder {
  constructor(readonly content: string, readonly start: number, readonly stop: number) {}
  decodeChain(tokens: string[]): string[] {
    return tokens.map((t) => {
      const chars = Array.from(t);
      let a = 0;
      while (a < this.start && chars[a] === this.content) a++;
      let b = chars.length;
      while (chars.length - b < this.stop && b > a && chars[b - 1] === this.content) b--;
      return chars.slice(a, b).join("");
    });
  }
  toJSON(): JsonObject {
    return { type: "Strip", content: this.content, start: this.start, stop: this.stop };
  }
}

export class FuseDecoder implements Decoder {
  decodeChain(tokens: string[]): string[] {
    return [tokens.join("")];
  }
  toJSON(): JsonObject {
    return { type: "Fuse" };
  }
}

export class ByteFallbackDecoder implements Decoder {
  decodeChain(tokens: string[]): string[] {
    const out: string[] = [];
    let bytes: number[] = [];
    const flush = () => {
      if (bytes.length === 0) return;
      const text = new TextDecoder("utf-8", { fatal: false }).decode(new Uint8Array(bytes));
      // Hugging Face writes one U+FFFD per byte when the bytes are not valid UTF-8.
      out.push(text.includes("\uFFFD") ? "\uFFFD".repeat(bytes.length) : text);
      bytes = [];
    };
    for (const t of tokens) {
      const m = /^<0x([0-9A-F]{2})>$/.exec(t);
      if (m) bytes.push(parseInt(m[1], 16));
      else {
        flush();
        out.push(t);
      }
    }
    flush();
    return out;
  }
  toJSON(): JsonObject {
    return { type: "ByteFallback" };
  }
}

export class DecoderSequence implements Decoder {
  constructor(readonly decoders: Decoder[]) {}
  decodeChain(tokens: string[]): string[] {
    for (const d of this.decoders) tokens = d.decodeChain(tokens);
    return tokens;
  }
  toJSON(): JsonObject {
    return { type: "Sequence", decoders: this.decoders.map((d) => d.toJSON()) };
  }
}

const TYPES = ["WordPiece", "ByteLevel", "BPEDecoder", "Metaspace", "Replace", "Strip", "Fuse", "ByteFallback", "Sequence"];

export function decoderFromJson(v: unknown, path = "decoder"): Decoder | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const type = typeOf(o, path);
  switch (type) {
    case "WordPiece": return new WordPieceDecoder(str(o, "prefix", path, "##"), bool(o, "cleanup", path, true));
    case "ByteLevel": return new ByteLevelDecoder({ add_prefix_space: bool(o, "add_prefix_space", path, true), trim_offsets: bool(o, "trim_offsets", path, true), use_regex: bool(o, "use_regex", path, true) });
    case "BPEDecoder": return new BPEDecoder(str(o, "suffix", path, "</w>"));
    case "Metaspace": return new MetaspaceDecoder(str(o, "replacement", path, "▁"), str(o, "prepend_scheme", path, "always"), bool(o, "split", path, true));
    case "Replace": return new ReplaceDecoder(readPattern(o.pattern, `${path}.pattern`), str(o, "content", path));
    case "Strip": return new StripDecoder(str(o, "content", path), int(o, "start", path), int(o, "stop", path));
    case "Fuse": return new FuseDecoder();
    case "ByteFallback": return new ByteFallbackDecoder();
    case "Sequence": return new DecoderSequence(arr(o, "decoders", path).map((d, i) => decoderFromJson(d, `${path}.decoders[${i}]`)!).filter((d) => d !== null));
    default: return unknownType(path, type, TYPES);
  }
}
