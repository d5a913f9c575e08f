// A plain BigInt SipHash-1-3: slow and obviously right. The unit tests check the 32-bit-halves hasher
// against it; the hash bench measures what the fast version saves.

const MASK = (1n << 64n) - 1n;
const rotl = (x: bigint, b: bigint) => ((x << b) | (x >> (64n - b))) & MASK;
export function referenceSipHash13(input: ArrayLike<number>, k0 = 0n, k1 = 0n): bigint {
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const round = () => {
    v0 = (v0 + v1) & MASK;
    v1 = rotl(v1, 13n) ^ v0;
    v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & MASK;
    v3 = rotl(v3, 16n) ^ v2;
    v0 = (v0 + v3) & MASK;
    v3 = rotl(v3, 21n) ^ v0;
    v2 = (v2 + v1) & MASK;
    v1 = rotl(v1, 17n) ^ v2;
    v2 = rotl(v2, 32n);
  };
  const full = input.length - (input.length % 8);
  const word = (at: number, n: number) => {
    let m = 0n;
    for (let i = n - 1; i >= 0; i--) m = (m << 8n) | BigInt(input[at + i] as number);
    return m;
  };
  for (let i = 0; i < full; i += 8) {
    const m = word(i, 8);
    v3 ^= m;
    round();
    v0 ^= m;
  }
  const b = (BigInt(input.length & 0xff) << 56n) | word(full, input.length - full);
  v3 ^= b;
  round();
  v0 ^= b;
  v2 ^= 0xffn;
  round();
  round();
  round();
  return v0 ^ v1 ^ v2 ^ v3;
}
