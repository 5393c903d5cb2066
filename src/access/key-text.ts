/**
 * What an API key is (D18): `wk_` and 32 letters or digits, made from crypto randomness, and
 * kept only as its sha256 (keys are 190 bits of randomness, so a fast hash is enough).
 */
import { createHash, randomBytes } from "node:crypto";

export const KEY_PREFIX = "wk_";
export const KEY_BODY = 32;
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** D18: the whole shape of a key. Anything else is refused before any lookup. */
export const KEY_SHAPE = /^wk_[A-Za-z0-9]{32}$/;

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Uniform random characters from [A-Za-z0-9], by rejection sampling of crypto bytes. */
export function randomAlphanumeric(n: number): string {
  let out = "";
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248) out += ALPHANUMERIC[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** A key's id made from `seed`, the same for the same seed: `key_` and 12 of [A-Za-z0-9] read from its sha256. */
export function keyIdFrom(seed: string): string {
  const digest = createHash("sha256").update(seed).digest();
  return `key_${[...digest.subarray(0, 12)].map((b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("")}`;
}

export function newKey(): string {
  return KEY_PREFIX + randomAlphanumeric(KEY_BODY);
}

/**
 * How a key is shown where it is listed (the key tool's list, the dashboard): its first characters and an ellipsis, or a
 * dash for a key made before they were kept (KeyRecord.prefix).
 */
export function shownPrefix(prefix: string | null | undefined): string {
  return prefix ? `${prefix}…` : "—";
}
