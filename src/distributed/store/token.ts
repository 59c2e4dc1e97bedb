import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The environment variable through which ringrun hands every rank the job's secret. */
export const STORE_TOKEN_ENV = "RINGTORCH_STORE_TOKEN";

/** Compares two secrets in time independent of where they differ (hashing first evens the lengths). */
export function tokensEqual(presented: Uint8Array | string, expected: Uint8Array | string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

export function generateToken(): string {
  return randomBytes(24).toString("hex");
}

export function checkTokenGiven(token: unknown, where: string): string {
  if (typeof token !== "string" || token.length === 0) {
    throw new Error(
      `${where}: a non-empty job token is required (pass {token} or set ${STORE_TOKEN_ENV}); ` +
        "the store and transports accept only peers that present it.",
    );
  }
  return token;
}
