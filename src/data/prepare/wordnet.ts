import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AlpacaRecord } from "../alpaca.js";
import { readLines } from "../text_lines.js";

const POS: Record<string, string> = { noun: "noun", verb: "verb", adj: "adjective", adv: "adverb" };

/**
 * "Define the word" instructions from WordNet's data files (Debian wordnet-base): one record per
 * word of each synset, the gloss's definition as the answer and its first example, if any, after it.
 *
 * A data line is: offset lex_filenum ss_type w_cnt(hex) word lex_id … p_cnt pointers … | gloss.
 */
export async function* wordnetDefinitions(options: { dir?: string } = {}): AsyncGenerator<AlpacaRecord & { pos: string }> {
  const dir = options.dir ?? "/usr/share/wordnet";
  for (const file of Object.keys(POS)) {
    const path = join(dir, `data.${file}`);
    if (!existsSync(path)) throw new Error(`wordnetDefinitions: ${path} is missing; install it with: apt-get install -y wordnet-base`);
    for await (const { line, lineNumber } of readLines(path)) {
      if (line.startsWith("  ")) continue; // the license header
      const bar = line.indexOf(" | ");
      if (bar < 0) throw new Error(`${path}:${lineNumber}: a synset line without a " | " gloss`);
      const fields = line.slice(0, bar).split(" ");
      const count = parseInt(fields[3], 16);
      if (!Number.isFinite(count)) throw new Error(`${path}:${lineNumber}: word count ${JSON.stringify(fields[3])} is not hexadecimal`);
      const gloss = line.slice(bar + 3).trim();
      const parts = gloss.split(/;\s*(?=")/);
      const definition = parts[0].replace(/;\s*$/, "").trim();
      const example = parts[1]?.replace(/^"|"\s*;?\s*$/g, "").replace(/"$/, "");
      for (let w = 0; w < count; w++) {
        // Adjectives may carry a syntactic marker: "galore(ip)".
        const word = fields[4 + 2 * w].replace(/\((a|p|ip)\)$/, "").replaceAll("_", " ");
        const output = example ? `${definition}. For example: "${example}"` : `${definition}.`;
        yield { instruction: "Define the word.", input: `${word} (${POS[file]})`, output, pos: POS[file] };
      }
    }
  }
}
