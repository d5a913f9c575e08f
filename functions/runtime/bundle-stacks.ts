// Stack traces that name the TypeScript source, for code run from a bundle: the CLI's, which the launcher runs
// through vm.Script (functions/cli/launcher.ts), and OpenFaaS's handler.js, which the template require()s
// (openfaas/own-stacks.ts). Node applies source maps only to modules it loads itself, and only with its own
// source-map support on, which reads and parses every map when the module loads (+13 ms of CPU per cold start,
// measured). This reads the bundle's map only when a stack is first formatted: a start that logs no stack
// never pays for it.

import { readFileSync } from "node:fs";
import path from "node:path";
import { mappingLookup } from "./source-map-lookup.js";

/** What a stack line needs of a V8 call site (NodeJS.CallSite), so the mapping can be tested without V8. */
export interface Frame {
  getFileName(): string | undefined | null;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getFunctionName(): string | null;
  toString(): string;
}

/** The map's entry for a 1-based line and column, or undefined where the map has none. */
type Lookup = (line: number, column: number) => { file: string; line: number; column: number } | undefined;

/**
 * A lookup over a source map's payload, resolving source paths against the map's folder. Only `mappings` and
 * `sources` are kept (source-map-lookup.ts says why node:module's SourceMap is not used).
 */
export function lookupIn(payload: unknown, mapDir: string): Lookup {
  const { mappings, sources } = payload as { mappings?: unknown; sources?: unknown };
  if (typeof mappings !== "string" || !Array.isArray(sources)) throw new Error("not a source map");
  const find = mappingLookup(
    mappings,
    sources.map((s) => (typeof s === "string" ? s : "")),
  );
  return (line, column) => {
    const origin = find(line - 1, column - 1);
    if (!origin?.source) return undefined;
    return {
      file: path.resolve(mapDir, origin.source.replace(/^file:\/\//, "")),
      line: origin.line + 1,
      column: origin.column + 1,
    };
  };
}

/**
 * One stack line: frames in `bundleFile` as their original position, the rest as V8 writes them.
 * `firstLineOffset`: columns the launcher's wrapper adds before the bundle's first line.
 */
export function formatFrame(
  frame: Frame,
  bundleFile: string,
  lookup: Lookup,
  firstLineOffset: number,
): string {
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  if (frame.getFileName() !== bundleFile || line === null || column === null) return `    at ${frame}`;
  const original = lookup(line, line === 1 ? column - firstLineOffset : column);
  if (!original) return `    at ${frame}`;
  const where = `${original.file}:${original.line}:${original.column}`;
  const name = frame.getFunctionName();
  return name ? `    at ${name} (${where})` : `    at ${where}`;
}

function headerOf(error: unknown): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return "Error";
  }
}

/** Installs the mapping for every stack formatted from now on; the map file is read once, when first needed. */
export function mapBundleStacks(bundleFile: string, firstLineOffset: number): void {
  let lookup: Lookup | null | undefined;
  const load = (): Lookup | null => {
    try {
      return lookupIn(JSON.parse(readFileSync(`${bundleFile}.map`, "utf8")), path.dirname(bundleFile));
    } catch {
      return null; // no map beside the bundle: stacks stay as V8 writes them
    }
  };
  Error.prepareStackTrace = (error, frames) => {
    lookup ??= load();
    const lines = lookup
      ? frames.map((f) => formatFrame(f, bundleFile, lookup as Lookup, firstLineOffset))
      : frames.map((f) => `    at ${f}`);
    return [headerOf(error), ...lines].join("\n");
  };
}
