// Where a position of a bundle came from, read from its source map's `mappings` one generated line at a time.
//
// Why not node:module's SourceMap: it decodes every segment into an array of its own when it is made. For the
// serve bundle's map (0.97 MB of mappings) that held about 20 MiB of V8 heap from the first stack a function
// logged (a refused API connection is enough) to the end of the process: measured with a refused API, RSS
// 110.4 MiB with it against 75.5 MiB with this (docs/performance.md). Here one pass notes where each generated line starts and the running values there (a few numbers
// per line), and a lookup decodes only the lines it needs. The answers are findEntry's: the segment at or
// before the position (the last such, on this line or an earlier one), or none.

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) DIGITS[BASE64.charCodeAt(i)] = i;
const COMMA = 44;

/** A segment's original position; 0-based, as source maps count. */
export interface Origin {
  source: string;
  line: number;
  column: number;
}

/** 0-based generated line and column; undefined where the map says nothing (or a segment names no source). */
export type MappingLookup = (line: number, column: number) => Origin | undefined;

/** The running values a generated line starts with (they carry over from line to line; columns do not). */
interface LineStart {
  at: number;
  end: number;
  source: number;
  line: number;
  column: number;
  name: number;
}

/** A reader of one line's segments: its values after each `next()`. */
class Segments {
  at: number;
  generated = 0;
  /** False for a segment that has only a generated column. */
  mapped = false;
  source: number;
  line: number;
  column: number;
  name: number;

  constructor(
    private readonly text: string,
    start: LineStart,
    private readonly end: number,
  ) {
    this.at = start.at;
    this.source = start.source;
    this.line = start.line;
    this.column = start.column;
    this.name = start.name;
  }

  /** Reads the next segment of the line; false at its end. */
  next(): boolean {
    if (this.at < this.end && this.text.charCodeAt(this.at) === COMMA) this.at++;
    if (this.at >= this.end) return false;
    this.generated += this.vlq();
    this.mapped = !this.atSeparator();
    if (this.mapped) {
      this.source += this.vlq();
      this.line += this.vlq();
      this.column += this.vlq();
      if (!this.atSeparator()) this.name += this.vlq();
    }
    return true;
  }

  private atSeparator(): boolean {
    return this.at >= this.end || this.text.charCodeAt(this.at) === COMMA;
  }

  /** One base64 VLQ value: 5 bits per digit, low digit first, the sign in the lowest bit. */
  private vlq(): number {
    let result = 0;
    let shift = 0;
    let digit: number;
    do {
      digit = DIGITS[this.text.charCodeAt(this.at++)] ?? -1;
      if (digit < 0) throw new Error(`invalid source map mappings at ${this.at - 1}`);
      result += (digit & 31) * 2 ** shift;
      shift += 5;
    } while (digit & 32);
    const magnitude = Math.floor(result / 2);
    return result % 2 ? -magnitude : magnitude;
  }
}

/** Where each generated line starts in `mappings`, with the values carried into it. */
function lineStarts(mappings: string): LineStart[] {
  const starts: LineStart[] = [];
  let state: LineStart = { at: 0, end: 0, source: 0, line: 0, column: 0, name: 0 };
  for (;;) {
    const found = mappings.indexOf(";", state.at);
    const end = found === -1 ? mappings.length : found;
    state.end = end;
    starts.push(state);
    if (found === -1) return starts;
    const segments = new Segments(mappings, state, end);
    while (segments.next()) {
      // Only the running values matter here.
    }
    const { source, line, column, name } = segments;
    state = { at: end + 1, end: 0, source, line, column, name };
  }
}

/** What a lookup needs of a segment. */
interface Found {
  generated: number;
  mapped: boolean;
  source: number;
  line: number;
  column: number;
}

/** The line's segment at or before `column` (the last of equal columns); any column when `column` is undefined. */
function segmentOn(mappings: string, start: LineStart, column: number | undefined): Found | undefined {
  const segments = new Segments(mappings, start, start.end);
  let best: Found | undefined;
  while (segments.next()) {
    if (column !== undefined && segments.generated > column) continue;
    if (best && segments.generated < best.generated) continue;
    const { generated, mapped, source, line } = segments;
    best = { generated, mapped, source, line, column: segments.column };
  }
  return best;
}

/** A lookup over a source map's `mappings` and `sources`; the line starts are found on the first lookup. */
export function mappingLookup(mappings: string, sources: readonly string[]): MappingLookup {
  let starts: LineStart[] | undefined;
  return (line, column) => {
    starts ??= lineStarts(mappings);
    if (line < 0) return undefined;
    for (let l = Math.min(line, starts.length - 1); l >= 0; l--) {
      const found = segmentOn(mappings, starts[l] as LineStart, l === line ? column : undefined);
      if (!found) continue;
      const source = found.mapped ? sources[found.source] : undefined;
      return source === undefined ? undefined : { source, line: found.line, column: found.column };
    }
    return undefined;
  };
}
