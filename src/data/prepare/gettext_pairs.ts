import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readMo } from "./mo.js";

export interface TranslationPair {
  en: string;
  /** The translation, keyed "translation" since the target language varies. */
  translation: string;
  source: string;
}

/**
 * English→target message pairs from the system's gettext catalogs (human translations of program
 * messages), deduplicated, in file order. Plural entries give their singular form.
 */
export function gettextPairs(options: { lang?: string; localeDir?: string } = {}): TranslationPair[] {
  const lang = options.lang ?? "es";
  const dir = join(options.localeDir ?? "/usr/share/locale", lang, "LC_MESSAGES");
  if (!existsSync(dir)) throw new Error(`gettextPairs: ${dir} does not exist. Install translated packages' language files, e.g. on Debian: apt-get install -y coreutils findutils grep tar gettext (their ${lang} catalogs land there), or pass localeDir`);
  const files = readdirSync(dir).filter((f) => f.endsWith(".mo")).sort();
  if (files.length === 0) throw new Error(`gettextPairs: no .mo catalogs in ${dir}; install packages with ${lang} translations (coreutils, grep, tar, gettext …)`);
  const seen = new Set<string>();
  const out: TranslationPair[] = [];
  for (const f of files) {
    for (const e of readMo(join(dir, f)).entries) {
      const translation = e.msgstr[0] ?? "";
      if (e.msgid.trim().length === 0 || translation.trim().length === 0 || translation === e.msgid) continue;
      const key = `${e.msgid}\u0000${translation}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ en: e.msgid, translation, source: f });
    }
  }
  return out;
}
