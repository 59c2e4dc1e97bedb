/**
 * Parquet rows, streamed a row group at a time, through hyparquet (a dependency-free reader:
 * plain, dictionary and delta encodings, snappy built in). Other codecs (zstd, gzip, brotli) need
 * hyparquet-compressors passed as `compressors`.
 */
import { checkOptions } from "../util/options.js";

export interface ParquetOptions {
  /** Columns to read (all when omitted). */
  columns?: string[];
  /** Rows per read (default: one row group at a time). */
  batchSize?: number;
  /** Extra decompressors keyed by codec name (hyparquet-compressors). */
  compressors?: Record<string, (input: Uint8Array, outputLength: number) => Uint8Array>;
}

export async function* readParquet(path: string, options: ParquetOptions = {}): AsyncGenerator<Record<string, unknown>> {
  checkOptions("readParquet", options, ["columns", "batchSize", "compressors"]);
  // Loaded on first use, so that importing ringtorch does not load the Parquet reader.
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import("hyparquet");
  const file = await asyncBufferFromFile(path);
  let metadata;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw new Error(`${path}: not a readable Parquet file (${(e as Error).message})`);
  }
  const names = new Set(metadata.schema.slice(1).map((s) => s.name));
  for (const c of options.columns ?? []) if (!names.has(c)) throw new RangeError(`${path}: no column ${JSON.stringify(c)}; columns: ${[...names].join(", ")}`);
  const ranges: [number, number][] = [];
  let start = 0;
  for (const g of metadata.row_groups) {
    const n = Number(g.num_rows);
    const step = options.batchSize ?? n;
    for (let s = 0; s < n; s += step) ranges.push([start + s, start + Math.min(n, s + step)]);
    start += n;
  }
  for (const [rowStart, rowEnd] of ranges) {
    const rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, columns: options.columns, compressors: options.compressors as never });
    yield* rows as Record<string, unknown>[];
  }
}
