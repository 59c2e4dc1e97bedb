import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A Hugging Face config.json as parsed: its own snake_case keys, so a file round-trips unchanged. */
export type HfConfig = Record<string, unknown>;

/** Reads `dir/config.json`; a missing or malformed file is an error that names the path. */
export function readConfig(dir: string, where: string): HfConfig {
  const path = join(dir, "config.json");
  if (!existsSync(path)) throw new Error(`${where}: no config.json in ${dir} (a Hugging Face model directory holds config.json and model.safetensors)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${where}: ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`${where}: ${path} must hold a JSON object`);
  return parsed as HfConfig;
}

/** A positive integer field of a config, or its default; anything else is an error naming the key. */
export function intField(config: HfConfig, key: string, fallback: number | undefined, where: string): number {
  const v = config[key] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new RangeError(`${where}: config.${key} must be a non-negative integer, got ${JSON.stringify(config[key])}`);
  return v;
}

export function numField(config: HfConfig, key: string, fallback: number, where: string): number {
  const v = config[key] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`${where}: config.${key} must be a number, got ${JSON.stringify(config[key])}`);
  return v;
}

export function strField(config: HfConfig, key: string, fallback: string, where: string): string {
  const v = config[key] ?? fallback;
  if (typeof v !== "string") throw new TypeError(`${where}: config.${key} must be a string, got ${JSON.stringify(config[key])}`);
  return v;
}
