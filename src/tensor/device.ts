import { DTYPES, type DType } from "./dtype.js";

/** A device as PyTorch names it. ringtorch runs on one device, the CPU. */
export type Device = "cpu" | `cpu:${number}`;

/** What `.to(...)` may be given: a dtype, a device, or PyTorch's keywords `{ device, dtype }`. */
export type ToTarget = DType | Device | { device?: Device; dtype?: DType };

/**
 * The dtype a `.to(...)` call asks for (undefined: keep the dtype), after checking its device.
 * Tensor.to and Module.to both parse their arguments here, so that they accept and refuse the
 * same things: "cpu" (and "cpu:0") is accepted and changes nothing; a device that does not exist
 * here ("cuda", "mps", 0, which PyTorch reads as cuda:0) is an error, not a silent no-op.
 */
export function dtypeOfTo(where: string, target: unknown, dtype?: unknown): DType | undefined {
  let wanted: unknown;
  if (typeof target === "object" && target !== null && !ArrayBuffer.isView(target) && !Array.isArray(target)) {
    const known = ["device", "dtype"];
    for (const k of Object.keys(target)) {
      if (!known.includes(k)) throw new TypeError(`${where}: unknown option "${k}"; known options: device, dtype`);
    }
    const o = target as { device?: unknown; dtype?: unknown };
    if (o.device !== undefined) checkDevice(where, o.device);
    wanted = o.dtype;
  } else if (typeof target === "string" && (DTYPES as readonly string[]).includes(target)) {
    wanted = target;
  } else {
    checkDevice(where, target);
  }
  if (dtype !== undefined) {
    if (wanted !== undefined) throw new TypeError(`${where}: the dtype was given twice`);
    wanted = dtype;
  }
  if (wanted === undefined) return undefined;
  if (typeof wanted !== "string" || !(DTYPES as readonly string[]).includes(wanted)) {
    throw new TypeError(`${where}: unknown dtype ${JSON.stringify(wanted)}; expected one of ${DTYPES.join(", ")}`);
  }
  return wanted as DType;
}

/** Accepts "cpu" and "cpu:<n>"; anything else names a device this process does not have. */
export function checkDevice(where: string, device: unknown): void {
  if (typeof device === "string" && /^cpu(:\d+)?$/.test(device)) return;
  const shown = typeof device === "number" ? `${device} (PyTorch reads a number as cuda:${device})` : JSON.stringify(device) ?? String(device);
  throw new TypeError(`${where}: device ${shown} does not exist; ringtorch computes on the CPU, so use "cpu" or leave the device out (a dtype is one of ${DTYPES.join(", ")})`);
}
