import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Proof of the job token without sending it: both sides of a connection exchange fresh nonces
 * and answer with an HMAC of them, keyed by the token. Used by the store's handshake
 * (store_server.ts / tcp_store.ts) and the transports' (engine/handshake.ts).
 *
 * Every proof names its role (`label`): a proof made as a server never passes as a client's, so
 * a peer cannot reflect one side's answer back at it. Every proof covers both nonces, so an
 * answer recorded on one connection is worthless on the next. The parts are length-prefixed, so
 * no two different (label, parts) lists hash the same bytes.
 */
export const NONCE_BYTES = 16;
export const PROOF_BYTES = 32;

export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

export function tokenProof(token: string, label: string, ...parts: (Uint8Array | string)[]): Buffer {
  const h = createHmac("sha256", token);
  for (const part of [label, ...parts]) {
    const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part;
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32LE(bytes.length);
    h.update(len).update(bytes);
  }
  return h.digest();
}

/** Constant-time comparison of a presented proof with the expected one (any length presented). */
export function proofMatches(presented: Uint8Array, expected: Buffer): boolean {
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
