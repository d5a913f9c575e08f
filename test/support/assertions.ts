import assert from "node:assert/strict";

/** Sequence numbers must be exactly 0..n-1: no duplicate, no gap (in any order). */
export function assertExactRange(numbers: number[], label: string, start = 0): void {
  const sorted = [...numbers].sort((a, b) => a - b);
  assert.deepEqual(
    sorted,
    sorted.map((_, i) => start + i),
    `${label}: expected exactly ${start}..${start + numbers.length - 1}`,
  );
}
