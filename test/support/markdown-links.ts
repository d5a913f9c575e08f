// Relative links in the project's Markdown, and whether each one lands: the file exists and, when the link
// names an anchor, the target page has a heading with that anchor. Anchors are made as GitHub makes them
// (github-slugger): the heading's text, lower-cased, punctuation dropped, spaces turned into hyphens, and a
// repeated anchor numbered -1, -2, ... Pure: the caller reads the files.

/** One link found in a page: where it points, and the line it is on (1-based). */
export type MarkdownLink = { target: string; line: number };

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ text: line, line: i + 1 });
  });
  return out;
}

/** A heading's visible text: links reduced to their text, then GitHub's anchor rules. */
export function headingAnchor(heading: string): string {
  const visible = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
  return visible
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page offers: one per heading (numbered when repeated), plus explicit `<a id|name="...">`. */
export function pageAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = headingAnchor(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? "");
  }
  return anchors;
}

/** Inline links `[text](target)` and reference definitions `[key]: target`, outside code blocks. */
export function pageLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text: line, line: n } of proseLines(text)) {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: m[1] ?? "", line: n });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line)?.[1];
    if (definition !== undefined) links.push({ target: definition, line: n });
  }
  return links;
}

/** Whether a target leaves the repository (a URL with a scheme, or protocol-relative). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}

/** What a page needs from the repository to check one relative link. */
export type Repository = {
  /** Whether the repository-relative path exists (a file or a folder). */
  exists(path: string): boolean;
  /** A Markdown page's text, repository-relative path. */
  read(path: string): string;
};

/** Resolves `target` against the folder of `from` (both repository-relative, `/`-separated). */
export function resolveRelative(from: string, target: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const step of target.split("/")) {
    if (step === "" || step === ".") continue;
    if (step === "..") parts.pop();
    else parts.push(step);
  }
  return parts.join("/");
}

/** Why one page's relative link does not land, or undefined when it does. */
export function brokenLink(page: string, link: MarkdownLink, repo: Repository): string | undefined {
  if (isExternal(link.target)) return undefined;
  const hash = link.target.indexOf("#");
  const pathPart = decodeURIComponent(hash < 0 ? link.target : link.target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
  const file = pathPart === "" ? page : resolveRelative(page, pathPart);
  const where = `${page}:${link.line}: ${link.target}`;
  if (file === "" || file.startsWith("..") || !repo.exists(file)) return `${where}: no such file (${file})`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith(".md")) return `${where}: an anchor into a file that is not Markdown`;
  return pageAnchors(repo.read(file)).has(anchor) ? undefined : `${where}: ${file} has no heading #${anchor}`;
}
