// The chart's templates come from the builders (knative/chart): the committed templates must be what the
// generator gives now (a builder changed without `npm run gen:chart` fails here), and an option a builder
// gains reaches the chart by regeneration alone, shown on a tiny builder of one ConfigMap.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Assignment } from "../../knative/chart/conditions.js";
import { emitFile, mergeFile, type TemplateFile } from "../../knative/chart/generate.js";
import { generateTemplates } from "../../knative/chart/main.js";
import type { Json } from "../../knative/chart/merge.js";
import { P } from "../../knative/chart/placeholders.js";

const TEMPLATES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../charts/simkube-fn/templates",
);

describe("charts/simkube-fn templates generated from the builders", () => {
  it("are what `npm run gen:chart` writes (no drift between knative/*.ts and the chart)", () => {
    for (const [file, text] of generateTemplates()) {
      const committed = readFileSync(path.join(TEMPLATES, file), "utf8");
      assert.ok(
        committed === text,
        `charts/simkube-fn/templates/${file} differs from what the builders give: run npm run gen:chart and commit it`,
      );
    }
  });
});

/** A builder of one ConfigMap; `withLogFormat` is the option a later version of it adds. */
function tinyBuilder(withLogFormat: boolean) {
  return (a: Assignment): Json[] | undefined => {
    const data: Record<string, Json> = { image: P.image.text };
    if (a.sim === "on") data.simulation = P.simName.text;
    if (withLogFormat && a.logFormat === "on") data.format = P.logFormat.text;
    const metadata = { name: `${P.name.text}-settings`, namespace: P.namespace.text };
    return [{ apiVersion: "v1", kind: "ConfigMap", metadata, data }];
  };
}

function tinyTemplate(withLogFormat: boolean): string {
  const t: TemplateFile = {
    file: "settings.yaml",
    what: "a test's ConfigMap",
    holds: () => true,
    core: ["sim"],
    local: ["logFormat"],
    render: tinyBuilder(withLogFormat),
  };
  return emitFile(t, mergeFile(t));
}

describe("the chart generator on a tiny builder", () => {
  it("turns placeholders into values and what depends on a switch into an if", () => {
    const text = tinyTemplate(false);
    assert.match(text, /name: \{\{ print \(\$full\) "-settings" \| toJson \}\}/);
    assert.match(text, /namespace: \{\{ \.Release\.Namespace \| toJson \}\}/);
    assert.match(
      text,
      /\{\{- if \.Values\.simName \}\}\n {2}simulation: \{\{ \.Values\.simName \| toJson \}\}\n\{\{- end \}\}/,
    );
    assert.doesNotMatch(text, /format/);
  });

  it("an option added to the builder appears in the chart by regeneration alone", () => {
    const before = tinyTemplate(false);
    const after = tinyTemplate(true);
    assert.notEqual(after, before);
    assert.match(
      after,
      /\{\{- if \.Values\.logFormat \}\}\n {2}format: \{\{ \.Values\.logFormat \| toJson \}\}\n\{\{- end \}\}/,
    );
    // Nothing else moved.
    assert.equal(after.replace(/\{\{- if \.Values\.logFormat \}\}\n.*\n\{\{- end \}\}\n/, ""), before);
  });
});
