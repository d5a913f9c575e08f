// How `npm run bench` (run.ts) writes its figures: numbers and sizes as text, and the median every summary uses.

export function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);
}

export function mib(bytes: number | undefined): string {
  return bytes === undefined ? "n/a" : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function pinText(pin: string[]): string {
  return pin.length > 0 ? pin.join(" ") : "unpinned";
}
