/**
 * Character classes of Hugging Face tokenizers (Rust `char` predicates) as JavaScript regexes.
 * Rust's `char::is_whitespace` is the Unicode White_Space property (JS `\s` differs on U+0085 and
 * U+FEFF); BERT's punctuation is ASCII punctuation (which includes symbols such as `$` and `+`)
 * or any Unicode P* category.
 */
export const WHITESPACE = "\\p{White_Space}";
export const PUNCTUATION = "\\p{P}$+<=>^`|~";

/** Chinese, Japanese kanji and Korean hanja blocks that BERT surrounds with spaces. */
export const CJK_RANGES =
  "\\u{4E00}-\\u{9FFF}\\u{3400}-\\u{4DBF}\\u{20000}-\\u{2A6DF}\\u{2A700}-\\u{2B73F}\\u{2B740}-\\u{2B81F}\\u{2B920}-\\u{2CEAF}\\u{F900}-\\u{FAFF}\\u{2F800}-\\u{2FA1F}";

/** Rust's `\w` (Unicode): Alphabetic, marks, decimal digits, connector punctuation, join controls. */
export const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";

/**
 * Compares strings by Unicode code point, as Rust compares `String`s (by UTF-8 bytes). JavaScript's
 * `<` compares UTF-16 units, which orders U+E000..U+FFFF after astral characters.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Number of Unicode characters (code points) in s. */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) n--;
  }
  return n;
}
