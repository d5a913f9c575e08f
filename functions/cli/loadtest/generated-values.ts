// Random ids and names in Kubernetes' formats, and timestamps relative to the teardown's clock. Every value is
// drawn from the caller's seeded random function, so a seed always gives the same values.

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

export function hex(random: () => number, length: number): string {
  let out = "";
  while (out.length < length)
    out += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}

export function uuid(random: () => number): string {
  const h = hex(random, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// Kubernetes' generateName suffix alphabet (no vowels, no ambiguous characters).
export const SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const SUFFIX_CHARS = SUFFIX_ALPHABET.split("");
export function nameSuffix(random: () => number, length = 5): string {
  let out = "";
  for (let i = 0; i < length; i++) out += pick(random, SUFFIX_CHARS);
  return out;
}

export function iso(date: Date, offsetSeconds: number): string {
  return new Date(date.getTime() + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
