// Every relative link in README.md and docs/*.md lands: the file exists, and an anchor names a heading of the
// target page. Moving or renaming a section without fixing the links to it fails here.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  brokenLink,
  headingAnchor,
  pageAnchors,
  pageLinks,
  type Repository,
} from "../support/markdown-links.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

const onDisk: Repository = {
  exists: (file) => existsSync(path.join(REPO, file)),
  read: (file) => readFileSync(path.join(REPO, file), "utf8"),
};

/** The pages checked: the README and every page under docs/. */
function pages(): string[] {
  const docs = readdirSync(path.join(REPO, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs.sort()];
}

/** A repository held in memory, for the checker's own tests. */
function inMemory(files: Record<string, string>): Repository {
  return {
    exists: (file) => file in files || Object.keys(files).some((f) => f.startsWith(`${file}/`)),
    read: (file) => files[file] ?? "",
  };
}

describe("the checker", () => {
  it("makes anchors as GitHub does", () => {
    assert.equal(
      headingAnchor("A real local cluster (`simkube-fn cluster up`)"),
      "a-real-local-cluster-simkube-fn-cluster-up",
    );
    assert.equal(
      headingAnchor("Replaying a trace on the local cluster (`replay --cluster local`)"),
      "replaying-a-trace-on-the-local-cluster-replay---cluster-local",
    );
    assert.equal(
      headingAnchor("One deployment for every Simulation (`SIM_NAME` unset)"),
      "one-deployment-for-every-simulation-sim_name-unset",
    );
    assert.equal(
      headingAnchor("mutate-create (SimKube's `mutate_pod`)"),
      "mutate-create-simkubes-mutate_pod",
    );
    assert.equal(headingAnchor("See [the run](#run)"), "see-the-run");
  });

  it("numbers repeated headings and ignores headings in code blocks", () => {
    const anchors = pageAnchors(
      '# Top\n## Notes\n```sh\n# not a heading\n```\n## Notes\n<a id="here"></a>\n',
    );
    assert.deepEqual([...anchors].sort(), ["here", "notes", "notes-1", "top"]);
  });

  it("finds inline links and reference definitions, not links in code blocks", () => {
    const text =
      "See [a](docs/a.md#x) and [`b`](../b.md).\n```\n[c](c.md)\n```\n[ref]: https://example.com/x\n";
    assert.deepEqual(pageLinks(text), [
      { target: "docs/a.md#x", line: 1 },
      { target: "../b.md", line: 1 },
      { target: "https://example.com/x", line: 5 },
    ]);
  });

  it("reports a missing file, a missing anchor, and an anchor into a file that is not Markdown", () => {
    const repo = inMemory({
      "README.md": "# Top\n",
      "docs/a.md": "# A\n## Two words\n",
      "examples/s.yaml": "",
    });
    const check = (page: string, target: string) => brokenLink(page, { target, line: 1 }, repo);
    assert.equal(check("README.md", "docs/a.md#two-words"), undefined);
    assert.equal(check("docs/a.md", "../README.md#top"), undefined);
    assert.equal(check("docs/a.md", "#a"), undefined);
    assert.equal(check("README.md", "examples/s.yaml"), undefined);
    assert.equal(check("README.md", "examples"), undefined);
    assert.equal(check("README.md", "https://example.com/#whatever"), undefined);
    assert.match(check("README.md", "docs/b.md") ?? "", /no such file \(docs\/b\.md\)/);
    assert.match(check("README.md", "docs/a.md#two") ?? "", /docs\/a\.md has no heading #two/);
    assert.match(check("docs/a.md", "#gone") ?? "", /docs\/a\.md has no heading #gone/);
    assert.match(check("docs/a.md", "README.md") ?? "", /no such file \(docs\/README\.md\)/);
    assert.match(check("README.md", "examples/s.yaml#x") ?? "", /not Markdown/);
    assert.match(check("README.md", "../outside.md") ?? "", /no such file/);
  });
});

describe("README.md and docs/*.md", () => {
  it("has the pages the README links to", () => {
    assert.ok(pages().length > 1, "docs/ holds pages");
  });

  for (const page of pages()) {
    it(`${page}: every relative link and anchor lands`, () => {
      const links = pageLinks(onDisk.read(page));
      const broken = links.map((link) => brokenLink(page, link, onDisk)).filter((why) => why !== undefined);
      assert.deepEqual(broken, []);
    });
  }
});
