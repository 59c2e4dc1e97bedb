/**
 * CSV (RFC 4180), streamed: quoted fields may hold the delimiter, "" for a quote, and newlines;
 * \n and \r\n both end a record; empty lines are skipped. With a header (the default) records are
 * objects keyed by it, and a record with another number of fields is an error naming its line.
 */
import { checkOptions } from "../util/options.js";
import { readTextChunks } from "./text_lines.js";

export interface CsvOptions {
  /** First record names the columns (default true): records are objects; false: arrays. */
  header?: boolean;
  delimiter?: string;
  chunkSize?: number;
}

export async function* readCsv(path: string, options: CsvOptions = {}): AsyncGenerator<Record<string, string> | string[]> {
  checkOptions("readCsv", options, ["header", "delimiter", "chunkSize"]);
  const delimiter = options.delimiter ?? ",";
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === "\n" || delimiter === "\r") throw new RangeError(`readCsv: delimiter must be one character other than a quote or newline, got ${JSON.stringify(delimiter)}`);
  let header: string[] | null = null;
  const useHeader = options.header ?? true;
  for await (const { fields, line } of csvRecords(path, delimiter, options.chunkSize)) {
    if (useHeader && header === null) {
      header = fields;
      continue;
    }
    if (header !== null) {
      if (fields.length !== header.length) throw new RangeError(`${path}:${line}: the record starting on line ${line} has ${fields.length} fields, but the header has ${header.length} (${header.join(delimiter)})`);
      const rec: Record<string, string> = {};
      header.forEach((h, i) => (rec[h] = fields[i]));
      yield rec;
    } else yield fields;
  }
}

/** Every record of a CSV file in an array. */
export async function loadCsv(path: string, options: CsvOptions = {}): Promise<(Record<string, string> | string[])[]> {
  const out: (Record<string, string> | string[])[] = [];
  for await (const r of readCsv(path, options)) out.push(r);
  return out;
}

/** Records as field arrays with the line each starts on; a state machine fed chunk by chunk. */
async function* csvRecords(path: string, delimiter: string, chunkSize?: number): AsyncGenerator<{ fields: string[]; line: number }> {
  let fields: string[] = [];
  let field = "";
  let inQuotes = false;
  let quoteClosed = false; // just after a field's closing quote
  let fieldStarted = false;
  let line = 1;
  let recordLine = 1;
  let quoteLine = 0;
  let pendingCR = false;
  const endField = () => {
    fields.push(field);
    field = "";
    quoteClosed = false;
    fieldStarted = false;
  };
  for await (const chunk of readTextChunks(path, { chunkSize })) {
    const out: { fields: string[]; line: number }[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (pendingCR) {
        pendingCR = false;
        if (c === "\n") continue;
      }
      if (inQuotes) {
        if (c === '"') {
          if (chunk[i + 1] === '"') {
            field += '"';
            i++;
          } else if (i + 1 === chunk.length) {
            // A quote at a chunk's end: whether it is "" or a closing quote shows in the next chunk.
            quoteClosed = true;
            inQuotes = false;
          } else {
            inQuotes = false;
            quoteClosed = true;
          }
        } else {
          if (c === "\n") line++;
          field += c;
        }
        continue;
      }
      if (c === '"') {
        if (quoteClosed && fieldStarted) {
          // "" split across chunks: the quote closed at the end of the last chunk was an escaped quote.
          field += '"';
          inQuotes = true;
          quoteClosed = false;
          continue;
        }
        if (fieldStarted) throw new SyntaxError(`${path}:${line}: a quote inside an unquoted field on line ${line}; quote the whole field and double the quote ("")`);
        inQuotes = true;
        fieldStarted = true;
        quoteLine = line;
        continue;
      }
      if (c === delimiter) {
        endField();
        continue;
      }
      if (c === "\n" || c === "\r") {
        if (c === "\r") pendingCR = true;
        if (fields.length > 0 || fieldStarted || field.length > 0) {
          endField();
          out.push({ fields, line: recordLine });
        }
        fields = [];
        line++;
        recordLine = line;
        continue;
      }
      if (quoteClosed) throw new SyntaxError(`${path}:${line}: text after a closing quote on line ${line}; a quoted field must end at a delimiter or the end of the line`);
      field += c;
      fieldStarted = true;
    }
    yield* out;
  }
  if (inQuotes) throw new SyntaxError(`${path}:${quoteLine}: a quoted field opened on line ${quoteLine} is never closed`);
  if (fields.length > 0 || fieldStarted || field.length > 0) {
    endField();
    yield { fields, line: recordLine };
  }
}
