export function sha256(bytes: Uint8Array): Uint8Array {
  const h = new Bun.CryptoHasher("sha256");
  h.update(bytes);
  return h.digest() as Uint8Array;
}

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
