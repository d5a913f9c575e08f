// One scalar of a generated template: literal YAML when the builders' output holds no placeholder, else a
// Helm expression that builds the same text from the values (a placeholder inside a CEL string literal
// becomes the value quoted for CEL, as the builders' celString quotes it). Pure.

import { DERIVED, N, P, type Placeholder } from "./placeholders.js";

const STRINGS: readonly Placeholder[] = Object.values(P);
const NUMBERS = new Map<number, string>(Object.values(N).map((x) => [x.value, x.helm]));
const BY_TEXT = new Map<string, Placeholder>(STRINGS.map((p) => [p.text, p]));
const DERIVED_BY_TEXT = new Map(DERIVED.map((d) => [d.text, d.helm]));

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Any placeholder text: derived text first (it may contain digits that look like a number placeholder). */
const ANY = new RegExp(
  [...DERIVED.map((d) => escapeRegExp(d.text)), "zq[a-z]+?qz", ...[...NUMBERS.keys()].map(String)].join("|"),
  "g",
);
const CEL_LITERAL = /'(?:[^'\\]|\\.)*'/g;

type Piece = { literal: string } | { helm: string };

function helmOf(match: string): string {
  const helm = DERIVED_BY_TEXT.get(match) ?? BY_TEXT.get(match)?.helm ?? NUMBERS.get(Number(match));
  if (helm === undefined) throw new Error(`unknown placeholder ${match} in the builders' output`);
  return /^[0-9]+$/.test(match) ? `toString (${helm})` : helm;
}

function plainPieces(text: string): Piece[] {
  const pieces: Piece[] = [];
  let last = 0;
  for (const m of text.matchAll(ANY)) {
    if (m.index > last) pieces.push({ literal: text.slice(last, m.index) });
    pieces.push({ helm: helmOf(m[0]) });
    last = m.index + m[0].length;
  }
  if (last < text.length) pieces.push({ literal: text.slice(last) });
  return pieces;
}

function celLiteral(literal: string): Piece {
  const inner = literal.slice(1, -1);
  const list = BY_TEXT.get(inner)?.celList;
  if (list) return { helm: list };
  const raw = inner.replaceAll("\\'", "'").replaceAll("\\\\", "\\");
  return { helm: `include "simkube-fn.celString" (${concat(plainPieces(raw))})` };
}

/** The pieces of `text`; CEL string literals holding a placeholder are quoted by Helm. */
export function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let last = 0;
  for (const m of text.matchAll(CEL_LITERAL)) {
    if (!hasPlaceholder(m[0])) continue;
    out.push(...plainPieces(text.slice(last, m.index)), celLiteral(m[0]));
    last = m.index + m[0].length;
  }
  out.push(...plainPieces(text.slice(last)));
  return out.filter((p) => !("literal" in p) || p.literal !== "");
}

export function hasPlaceholder(text: string): boolean {
  return new RegExp(ANY.source).test(text);
}

function goString(s: string): string {
  return JSON.stringify(s);
}

/** A string expression joining `pieces`. */
export function concat(parts: readonly Piece[]): string {
  const args = parts.map((p) => ("literal" in p ? goString(p.literal) : `(${p.helm})`));
  return args.length === 1 && !("literal" in (parts[0] as Piece))
    ? (parts[0] as { helm: string }).helm
    : `print ${args.join(" ")}`;
}

const KEYWORD = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

/** A YAML scalar for a literal string, plain where that reads back as the same string. */
function literalString(s: string): string {
  if (/^[A-Za-z/][A-Za-z0-9._/-]*$/.test(s) && !KEYWORD.test(s)) return s;
  return JSON.stringify(s);
}

/** The YAML (or template) text of one scalar value. */
export function scalar(value: null | boolean | number | string): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    const helm = NUMBERS.get(value);
    return helm === undefined ? String(value) : `{{ ${helm} }}`;
  }
  if (value.includes("{{") || value.includes("}}")) throw new Error(`template braces in ${value}`);
  if (!hasPlaceholder(value)) return literalString(value);
  return `{{ ${concat(pieces(value))} | toJson }}`;
}
