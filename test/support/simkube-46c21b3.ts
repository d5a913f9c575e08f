// SimKube's sources at commit 46c21b3, as the drift test reads them: where the folder is, the SHA-256 of
// every file the tests read or docs/differences-from-simkube.md cites, and a reader for insta's snapshots
// of serde_json values (Rust's Debug form). The folder lies beside the repository, at
// ../shared/data/simkube-46c21b3; clones without it skip the tests that need it (CI has it).

import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const SIMKUBE_COMMIT = "46c21b3733d1dd002ff24634d2b207991f67bc5a";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const SIMKUBE_DIR = path.resolve(REPO, "../shared/data/simkube-46c21b3");

/**
 * The SHA-256 of each file read, as reviewed against the page. A changed hash means the file changed: re-read
 * it against docs/differences-from-simkube.md and the replay below, then update the hash.
 */
export const SIMKUBE_FILE_SHA256: Readonly<Record<string, string>> = {
  "sk-core/src/k8s/owners.rs": "c659f49c55ab5f63296ad9f644a260644c7637f8bb49fd5cec4e551249f1c767",
  "sk-core/src/k8s/pod_ext.rs": "d2e4c28ec05f6790208ed9ca96e501f9e8c6e3a0cf4f48a9c8fbf6b635cb234a",
  "sk-ctrl/src/objects.rs": "fc4bc3fbfbb6a637d1372a6c703ce7d706dd4ca4a2e29cfea1aa9f0291404ed9",
  "sk-driver/src/main.rs": "8a8c15f80c596ff1b91badafb5f94197b75691540add52916c126dba4e3eb5c2",
  "sk-driver/src/mutation.rs": "72ac461ae6d2f5d9ae150ee4bad3de6eaffcb9bfbb3f2b6bb5f44e87c1ef0fd3",
  "sk-driver/src/runner.rs": "9353e99d81999e7911ea9adc51727221c6b7e225f0f0bf2d72b9bbd95c056f96",
  "sk-driver/src/util.rs": "99e27988fd7b8f449616da6bc7b6799665d15ec890ed9f400190b31a293aef77",
  "sk-driver/src/tests/helpers.rs": "5494ce9b0fbcb71f5d156688b45559f7f4e9714f78f6b9aacb53541326cc9c68",
  "sk-driver/src/tests/mutation_test.rs": "06bc20a9f0a62867f9c4c70c946ec3f98dfa5f9a595ad548a6278d432e210126",
  "sk-driver/src/tests/snapshots/sk_driver__tests__mutation_test__itest__mutation_handler_create@false.snap":
    "c45401507f728dc44b27e5c2722994e7846a7fffae194a61a8fc0dff2b2e8d33",
  "sk-driver/src/tests/snapshots/sk_driver__tests__mutation_test__itest__mutation_handler_create@true.snap":
    "9c0467978c8e49d5f8cce2c649e8174a6e7681edba78ca0377b9f5bff9e27631",
  "sk-driver/src/tests/snapshots/sk_driver__tests__mutation_test__itest__mutation_handler_delete.snap":
    "6dfe1abe5727a34aa19a65abdd6187ca3eff040533b63cdff04ed223a8dd84ac",
  "sk-driver/src/tests/snapshots/sk_driver__tests__mutation_test__itest__mutation_handler_delete_client_error.snap":
    "6dfe1abe5727a34aa19a65abdd6187ca3eff040533b63cdff04ed223a8dd84ac",
};

/**
 * Files the page cites that the folder does not hold: their citations were checked by hand against the
 * commit on GitHub and are not re-checked here. A file that appears in the folder must move to the table.
 */
export const SIMKUBE_CITED_NOT_IN_FOLDER: readonly string[] = [
  "Cargo.toml",
  "sk-core/src/k8s/util.rs",
  "sk-ctrl/src/controller.rs",
  "sk-store/src/pod_owners_map.rs",
  "sk-store/src/trace.rs",
];

/**
 * For each of the page's links into a file the folder holds (`[key]: …/blob/<commit>/<file>#L<a>-L<b>`), a
 * piece of SimKube's code the cited lines must hold: what the page says is there. A link moved to the wrong
 * lines, or a file changed under it, fails.
 */
export const SIMKUBE_CITED_CODE: Readonly<Record<string, string>> = {
  owners: "GVK::from_owner_ref(rf)",
  m40: "pod_counts: Mutex<HashMap<u64, usize>>",
  m96: "owners.iter().any(|o| o.name == ctx.root_name)",
  m108: "could not reschedule pod; allowing old pod to be deleted",
  m114: "pod.metadata.deletion_timestamp.is_none()",
  m141: "add_node_selector_tolerations(pod, &mut patches)",
  m154: "!pod.labels_contains_key(KWOK_STAGE_COMPLETE_KEY)",
  m172: "filtered_owners.is_empty() && pod_is_running(pod)",
  m309: "abs_end_ts.to_rfc3339()",
  m315: "compute_step_size(speed, *start_ts, *end_ts)",
  m331: "parse::<usize>().unwrap()",
  m342: "None => mut_data.count(hash)",
  m200: 'json!({"key": VIRTUAL_NODE_TOLERATION_KEY, "operator": "Exists", "effect": "NoSchedule"})',
  main86: "sim_api.get(&opts.sim_name)",
  main90: 'format!("{name}-root")',
  runner201: "if ns_api.get_opt(&virtual_ns).await?.is_none()",
  stepsize: "(normal_step_duration / speed) as i64",
  podext31: "fn stable_spec(&self)",
  o125: "build_global_object_meta(&ctx.webhook_name",
  o126: "CERT_MANAGER_INJECT_ANNOTATION_KEY",
  o142: "object.metadata.namespace.startsWith('{}-')",
  o146: "if let Some(true) = sim.spec.reschedule_interrupted_bare_pods",
  o157: "admissionv1::MutatingWebhook",
  o159: "name: ctx.driver_svc.clone()",
  o168: 'failure_policy: Some("Fail".into())',
  o169: 'operations.join("-").to_ascii_lowercase()',
  o170: 'side_effects: "None".into()',
  o175: 'resources: Some(vec!["pods".into(), "pods/status".into()])',
};

/** Why the tests that read SimKube skip, or undefined when they can run. In CI a missing folder fails. */
export function simkubeMissing(): string | undefined {
  if (existsSync(path.join(SIMKUBE_DIR, "sk-driver/src/mutation.rs"))) return undefined;
  const why = `SimKube's sources at ${SIMKUBE_COMMIT.slice(0, 7)} are not beside the repository (../shared/data/simkube-46c21b3)`;
  if (process.env.CI === "true") throw new Error(`${why}; CI must have them`);
  return `${why}: skipped`;
}

export function readSimkube(file: string): string {
  return readFileSync(path.join(SIMKUBE_DIR, file), "utf8");
}

export function sha256OfSimkube(file: string): string {
  return createHash("sha256")
    .update(readFileSync(path.join(SIMKUBE_DIR, file)))
    .digest("hex");
}

/** An insta snapshot's body: the text after its `---` front matter. */
export function snapshotBody(text: string): string {
  const parts = text.split(/^---$/m);
  if (parts.length < 3) throw new Error("not an insta snapshot: no front matter");
  return parts.slice(2).join("---").trim();
}

/**
 * A serde_json::Value as Rust's `{:#?}` prints it: `Object { "k": String("v"), }`, `Array [ ... ]`,
 * `Number(1)`, `Bool(true)`, `Null`.
 */
export function parseDebugJson(text: string): unknown {
  let at = 0;
  const skip = () => {
    while (at < text.length && /[\s,]/.test(text[at] ?? "")) at++;
  };
  const expect = (word: string) => {
    skip();
    if (!text.startsWith(word, at)) throw new Error(`expected ${word} at ${at}: ${text.slice(at, at + 30)}`);
    at += word.length;
  };
  const quoted = (): string => {
    skip();
    const match = /^"((?:[^"\\]|\\.)*)"/.exec(text.slice(at));
    if (!match) throw new Error(`expected a string at ${at}`);
    at += match[0].length;
    return JSON.parse(match[0]) as string;
  };
  const value = (): unknown => {
    skip();
    const rest = text.slice(at);
    if (rest.startsWith("Object {")) {
      at += "Object {".length;
      const out: Record<string, unknown> = {};
      for (skip(); text[at] !== "}"; skip()) {
        const key = quoted();
        expect(":");
        out[key] = value();
      }
      at++;
      return out;
    }
    if (rest.startsWith("Array [")) {
      at += "Array [".length;
      const out: unknown[] = [];
      for (skip(); text[at] !== "]"; skip()) out.push(value());
      at++;
      return out;
    }
    const scalar = /^(String|Number|Bool)\(((?:"(?:[^"\\]|\\.)*")|[^)]*)\)/.exec(rest);
    if (scalar) {
      at += scalar[0].length;
      return JSON.parse(scalar[2] ?? "null");
    }
    if (rest.startsWith("Null")) {
      at += 4;
      return null;
    }
    throw new Error(`cannot read a value at ${at}: ${rest.slice(0, 30)}`);
  };
  const out = value();
  skip();
  if (at !== text.length) throw new Error(`trailing text at ${at}`);
  return out;
}

/** The fields of a Debug-printed kube AdmissionResponse that say what the driver answered. */
export interface DebugAnswer {
  uid: string;
  allowed: boolean;
  patch: boolean;
  code: number;
  message: string;
}

export function parseDebugAnswer(text: string): DebugAnswer {
  const field = (name: string) => {
    const found = new RegExp(`^\\s*${name}: (.*?),?$`, "m").exec(
      text.slice(text.indexOf("AdmissionResponse")),
    );
    if (!found) throw new Error(`no ${name} in the snapshot's AdmissionResponse`);
    return found[1] ?? "";
  };
  return {
    uid: JSON.parse(field("uid")) as string,
    allowed: field("allowed") === "true",
    patch: field("patch") !== "None",
    code: Number(field("code")),
    message: JSON.parse(field("message")) as string,
  };
}
