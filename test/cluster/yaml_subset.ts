/**
 * A reader for the block-style YAML subset that examples/k8s/ is written in, after YAML 1.2's
 * spec: `---`-separated documents, block mappings and sequences by indentation, plain, single-
 * and double-quoted scalars, one-line flow sequences of scalars, and `#` comments. Scalars are
 * typed by the core schema (integers, true/false, null). Anything outside the subset (anchors,
 * block scalars, flow mappings, tabs) is an error naming the line, so a manifest can never be
 * read differently from how kubectl reads it without the test noticing.
 */
export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  no: number;
}

export function parseYamlDocuments(source: string, where: string): Yaml[] {
  const docs: Line[][] = [[]];
  source.split("\n").forEach((raw, i) => {
    if (raw.includes("\t")) throw new Error(`${where}:${i + 1}: tabs are not allowed in YAML indentation`);
    const text = stripComment(raw).trimEnd();
    if (text.trim() === "") return;
    if (text === "---") return void docs.push([]);
    docs[docs.length - 1]!.push({ indent: text.length - text.trimStart().length, text: text.trimStart(), no: i + 1 });
  });
  return docs.filter((d) => d.length > 0).map((lines) => {
    const pos = { i: 0 };
    const value = parseBlock(lines, pos, lines[0]!.indent, where);
    if (pos.i !== lines.length) throw new Error(`${where}:${lines[pos.i]!.no}: unexpected indentation`);
    return value;
  });
}

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || line[i - 1] === " ")) return line.slice(0, i);
  }
  return line;
}

function parseBlock(lines: Line[], pos: { i: number }, indent: number, where: string): Yaml {
  const first = lines[pos.i]!;
  if (first.text === "-" || first.text.startsWith("- ")) return parseSequence(lines, pos, indent, where);
  return parseMapping(lines, pos, indent, where);
}

function parseSequence(lines: Line[], pos: { i: number }, indent: number, where: string): Yaml[] {
  const out: Yaml[] = [];
  while (pos.i < lines.length && lines[pos.i]!.indent === indent && (lines[pos.i]!.text === "-" || lines[pos.i]!.text.startsWith("- "))) {
    const line = lines[pos.i]!;
    const rest = line.text.slice(1).trimStart();
    if (rest === "") {
      pos.i++;
      out.push(parseBlock(lines, pos, lines[pos.i]!.indent, where));
    } else if (keyOf(rest) !== null) {
      // "- key: value" opens a mapping whose keys sit where `key` starts.
      const inner = indent + (line.text.length - rest.length);
      lines[pos.i] = { indent: inner, text: rest, no: line.no };
      out.push(parseMapping(lines, pos, inner, where));
    } else {
      out.push(scalar(rest, `${where}:${line.no}`));
      pos.i++;
    }
  }
  return out;
}

function parseMapping(lines: Line[], pos: { i: number }, indent: number, where: string): { [key: string]: Yaml } {
  const out: { [key: string]: Yaml } = {};
  while (pos.i < lines.length && lines[pos.i]!.indent === indent) {
    const line = lines[pos.i]!;
    const key = keyOf(line.text);
    if (key === null) throw new Error(`${where}:${line.no}: expected "key: value", got ${JSON.stringify(line.text)}`);
    if (key in out) throw new Error(`${where}:${line.no}: key ${key} appears twice`);
    const rest = line.text.slice(line.text.indexOf(":", key.startsWith('"') ? key.length + 2 : 0) + 1).trim();
    pos.i++;
    if (rest !== "") out[key] = scalar(rest, `${where}:${line.no}`);
    else if (pos.i < lines.length && (lines[pos.i]!.indent > indent || (lines[pos.i]!.indent === indent && lines[pos.i]!.text.startsWith("- ")))) {
      out[key] = parseBlock(lines, pos, lines[pos.i]!.indent, where);
    } else out[key] = null;
  }
  if (pos.i < lines.length && lines[pos.i]!.indent > indent) throw new Error(`${where}:${lines[pos.i]!.no}: unexpected indentation`);
  return out;
}

/** The key of a "key: value" or "key:" line, or null when the line is not one. */
function keyOf(text: string): string | null {
  const m = /^([A-Za-z0-9_.\/-]+|"[^"]*"):(?: |$)/.exec(text);
  return m === null ? null : m[1]!.replace(/^"(.*)"$/, "$1");
}

function scalar(text: string, where: string): Yaml {
  if (/^[&*!|>{]/.test(text)) throw new Error(`${where}: ${JSON.stringify(text)} is outside the YAML subset these manifests use`);
  if (text.startsWith("[")) {
    if (!text.endsWith("]")) throw new Error(`${where}: a flow sequence must close on its line`);
    const inner = text.slice(1, -1).trim();
    return inner === "" ? [] : splitFlow(inner).map((item) => scalar(item.trim(), where));
  }
  if (text.startsWith('"')) {
    if (!/^"(?:[^"\\]|\\.)*"$/.test(text)) throw new Error(`${where}: unterminated double-quoted string ${text}`);
    return JSON.parse(text) as string;
  }
  if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) throw new Error(`${where}: unterminated single-quoted string ${text}`);
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (/^[-+]?\d+$/.test(text)) return Number(text);
  if (/^(true|false)$/.test(text)) return text === "true";
  if (/^(null|~)$/.test(text)) return null;
  if (/: |^- /.test(text)) throw new Error(`${where}: ${JSON.stringify(text)} needs quotes`);
  return text;
}

function splitFlow(inner: string): string[] {
  const items: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") throw new Error(`nested flow collections are outside the subset: [${inner}]`);
    else if (c === ",") {
      items.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  items.push(inner.slice(start));
  return items;
}
