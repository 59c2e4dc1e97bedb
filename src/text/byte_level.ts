/**
 * GPT-2's byte-level alphabet: every byte gets a printable character, so that any UTF-8 text is
 * spelled with 256 symbols and a byte-level BPE never needs an unknown token.
 */
const byteToChar: string[] = [];
const charToByte = new Map<string, number>();
{
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  bs.forEach((b, i) => {
    byteToChar[b] = String.fromCharCode(cs[i]);
    charToByte.set(byteToChar[b], b);
  });
}

/** The 256 characters of the byte-level alphabet (ByteLevel.alphabet() in Hugging Face). */
export function byteLevelAlphabet(): string[] {
  return [...byteToChar];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });
const ASCII_PRINTABLE = /^[\x21-\x7e]*$/;

/** A string's UTF-8 bytes, each spelled as its byte-level character. */
export function toByteLevel(s: string): string {
  if (ASCII_PRINTABLE.test(s)) return s;
  // ASCII (a word with its leading space): one table lookup per character, no UTF-8 encoding.
  let ascii = "";
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) break;
    ascii += byteToChar[c];
  }
  if (i === s.length) return ascii;
  const bytes = encoder.encode(s);
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += byteToChar[bytes[i]];
  return out;
}

/**
 * Byte-level text back to a string; a token holding a character outside the alphabet (an added
 * token such as <|endoftext|>) contributes its own UTF-8 bytes, and invalid UTF-8 becomes U+FFFD.
 */
export function fromByteLevel(tokens: readonly string[]): string {
  const bytes: number[] = [];
  for (const t of tokens) {
    const mapped: number[] = [];
    let ok = true;
    for (const c of t) {
      const b = charToByte.get(c);
      if (b === undefined) {
        ok = false;
        break;
      }
      mapped.push(b);
    }
    if (ok) bytes.push(...mapped);
    else bytes.push(...encoder.encode(t));
  }
  return decoder.decode(new Uint8Array(bytes));
}

/** GPT-2's split pattern, with Rust/Oniguruma's Unicode \s spelled out (JavaScript's \s differs). */
export const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu;
