// `simkube-fn manifests` flags: every deployment option has one, each flag is in the usage, and the values
// reach the rendered objects (scaling and timeout knobs per function, resources, owner kinds, service mode).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { MANIFESTS_USAGE, OPTION_FLAGS, parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import {
  caBundleFromPem,
  ManifestsUsageError,
  runManifestsCommand,
} from "../../functions/cli/manifests/command.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildAllManifests } from "../../knative/manifests.js";
import { buildStack } from "../../knative/openfaas-stack.js";
import { DEFAULT_TUNING } from "../../knative/tuning.js";

function options(args: string[]) {
  const command = parseManifestsArgs(args);
  assert.notEqual(command.kind, "help");
  return command.kind === "help" ? assert.fail() : command.options;
}

describe("manifests flags", () => {
  it("every flag of every option is documented in the usage and accepted by the parser", () => {
    const flags = Object.values(OPTION_FLAGS).flat();
    assert.ok(flags.length >= 40);
    for (const flag of flags) {
      const documented =
        MANIFESTS_USAGE.includes(flag) ||
        MANIFESTS_USAGE.includes(flag.replace(/-(mutate-create|reschedule-delete)$/, "-FUNCTION"));
      assert.ok(documented, `${flag} is in the usage`);
      const value = ["--reschedule", "--without-webhook"].includes(flag) ? [] : ["x.y"];
      assert.doesNotThrow(() => {
        try {
          parseManifestsArgs([flag, ...value]);
        } catch (err) {
          // A value check (whole numbers, true|false) is fine; an unknown flag is not.
          if (!(err instanceof ManifestsUsageError) || /Unknown option/.test(err.message)) throw err;
        }
      }, flag);
    }
  });

  it("--help, -h; an unknown flag or a stray argument is a usage error", () => {
    assert.deepEqual(parseManifestsArgs(["--help"]), { kind: "help" });
    assert.deepEqual(parseManifestsArgs(["webhook", "-h"]), { kind: "help" });
    assert.throws(() => parseManifestsArgs(["--nope"]), ManifestsUsageError);
    assert.throws(() => parseManifestsArgs(["deploy"]), /only subcommand is "webhook"/);
    assert.throws(() => parseManifestsArgs(["--min-scale", "two"]), /whole number/);
    assert.throws(() => parseManifestsArgs(["--cluster-local", "yes"]), /true or false/);
    assert.throws(() => parseManifestsArgs(["--owner-resource", "widgets"]), /RESOURCE.GROUP/);
  });

  it("--allow-trace-location (repeatable) renders TRACE_ALLOWED_LOCATIONS for both platforms; unset, none", () => {
    const args = [
      "--webhook-mode",
      "service",
      "--allow-trace-location",
      "s3://traces/sims/",
      "--allow-trace-location",
      "/traces/",
    ];
    const o = options(args);
    const env = (manifests: unknown[]) =>
      JSON.stringify(manifests).match(/"name":"TRACE_ALLOWED_LOCATIONS","value":"([^"]*)"/)?.[1];
    assert.equal(env(buildAllManifests(o)), "s3://traces/sims/,/traces/");
    const stack = buildStack({ ...o, target: "openfaas" });
    for (const fn of Object.values(stack.functions)) {
      assert.equal(fn.environment.TRACE_ALLOWED_LOCATIONS, "s3://traces/sims/,/traces/");
    }
    assert.equal(env(buildAllManifests(options(["--webhook-mode", "service"]))), undefined);
  });

  it("per-function knobs reach the Knative annotations and the webhook timeouts", () => {
    const o = options([
      "--sim-name",
      "s",
      "--webhook-url-base",
      "https://fn.example.com",
      "--reschedule",
      "--min-scale-reschedule-delete",
      "1",
      "--timeout-reschedule-delete",
      "8",
      "--activation-scale-mutate-create",
      "3",
      "--scale-down-delay-mutate-create",
      "90s",
      "--timeout-mutate-create",
      "20",
      "--max-scale-mutate-create",
      "4",
    ]);
    const objects = buildAllManifests(o);
    const annotations = (fn: string) =>
      (
        objects.find((x) => x.kind === "Service" && x.metadata?.name === `simkube-fn-${fn}`) as unknown as {
          spec: { template: { metadata: { annotations: Record<string, string> } } };
        }
      ).spec.template.metadata.annotations;
    assert.deepEqual(
      [
        annotations("mutate-create")["autoscaling.knative.dev/min-scale"],
        annotations("reschedule-delete")["autoscaling.knative.dev/min-scale"],
      ],
      ["0", "1"],
    );
    assert.equal(annotations("mutate-create")["autoscaling.knative.dev/activation-scale"], "3");
    assert.equal(annotations("mutate-create")["autoscaling.knative.dev/scale-down-delay"], "90s");
    assert.equal(annotations("mutate-create")["autoscaling.knative.dev/max-scale"], "4");
    assert.equal(
      annotations("reschedule-delete")["autoscaling.knative.dev/scale-down-delay"],
      DEFAULT_TUNING["reschedule-delete"].scaleDownDelay,
    );
    const config = objects.find((x) => x.kind === "MutatingWebhookConfiguration") as unknown as {
      webhooks: { timeoutSeconds: number }[];
    };
    assert.deepEqual(
      config.webhooks.map((w) => w.timeoutSeconds),
      [20, 8],
    );
  });

  it("resources, owner kinds, driver users, service mode and the rest reach the resolved options", () => {
    const o = resolveOptions(
      options([
        "--sim-name",
        "s",
        "--webhook-mode",
        "service",
        "--webhook-service-namespace",
        "gw",
        "--webhook-service-name",
        "{function}-in",
        "--webhook-service-port",
        "8443",
        "--webhook-service-path",
        "/r",
        "--cpu-request",
        "50m",
        "--memory-limit",
        "1Gi",
        "--owner-resource",
        "widgets.example.com",
        "--owner-resource",
        "gadgets.example.com",
        "--driver-users",
        "a,b",
        "--cluster-local",
        "false",
        "--log-level",
        "debug",
        "--sequence-store",
        "memory",
        "--name",
        "fn2",
        "--openfaas-lang",
        "node24",
        "--scale-to-zero-duration",
        "30m",
        "--openfaas-handler-dir",
        "./h/",
      ]),
    );
    assert.deepEqual(o.webhookService, { namespace: "gw", name: "{function}-in", port: 8443, path: "/r" });
    assert.deepEqual(o.resources, { requests: { cpu: "50m" }, limits: { memory: "1Gi" } });
    assert.deepEqual(
      o.extraRules.map((r) => `${r.resources[0]}.${r.apiGroups[0]}:${r.verbs.join()}`),
      ["widgets.example.com:get", "gadgets.example.com:get"],
    );
    assert.deepEqual(o.driverUsers, ["a", "b"]);
    assert.equal(o.clusterLocal, false);
    assert.equal(o.logLevel, "debug");
    assert.equal(o.sequenceStore, "memory");
    assert.equal(o.name, "fn2");
    assert.equal(o.openfaasLang, "node24");
    assert.equal(o.scaleToZeroDuration, "30m");
    assert.equal(o.openfaasHandlerDir, "./h");
  });

  it("bad knob values are refused with the option named", () => {
    const base = ["--sim-name", "s", "--webhook-url-base", "https://x.example.com"];
    assert.throws(
      () => resolveOptions(options([...base, "--timeout-mutate-create", "31"])),
      /timeoutSeconds of mutate-create.*1 to 30/,
    );
    assert.throws(
      () => resolveOptions(options([...base, "--scale-down-delay-reschedule-delete", "2h"])),
      /0s to 1h/,
    );
    assert.throws(
      () => resolveOptions(options([...base, "--activation-scale-mutate-create", "0"])),
      /activationScale/,
    );
  });

  it("--ca-bundle takes a PEM file and base64s it; anything else is refused", () => {
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    assert.equal(Buffer.from(caBundleFromPem("ca.pem", pem), "base64").toString(), `${pem}\n`);
    assert.throws(() => caBundleFromPem("ca.pem", "not a cert"), /no PEM certificate/);
  });
});

describe("runManifestsCommand", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-ca-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const caFile = path.join(dir, "ca.pem");
  writeFileSync(caFile, pem);

  async function run(args: string[]): Promise<string> {
    let text = "";
    assert.equal(await runManifestsCommand(args, (t) => (text += t)), 0);
    return text;
  }

  it("makes no path secret: refuses a deployment without --path-secret or --path-secret-from", async () => {
    await assert.rejects(
      runManifestsCommand(["--platform", "kind", "--sim-name", "s"], () => {}),
      /manifests makes no path secret, so the same flags always render the same YAML: give --path-secret S/,
    );
  });

  it("the same flags print byte-identical YAML, the given secret in the Secret and the webhook paths", async () => {
    const secret = "0123456789abcdef".repeat(4);
    for (const platform of [
      ["kind"],
      ["managed", "--domain", "fn.example.com"],
      ["kubernetes", "--ca-bundle", caFile],
    ]) {
      const args = ["--platform", ...platform, "--sim-name", "s", "--reschedule", "--path-secret", secret];
      const first = await run(args);
      assert.equal(await run(args), first, `${platform[0]}: a second render differs`);
      const docs = parseAllDocuments(first).map((d) => d.toJSON());
      assert.equal(docs.find((d) => d.kind === "Secret").stringData["path-secret"], secret);
      for (const webhook of docs.find((d) => d.kind === "MutatingWebhookConfiguration").webhooks) {
        const { service, url } = webhook.clientConfig;
        assert.ok((service?.path ?? url).endsWith(`/${secret}`));
      }
    }
    const stack = [
      "--platform",
      "openfaas",
      "--webhook-gateway-url",
      "https://gw.example.com",
      "--target",
      "openfaas-stack",
      "--path-secret-from",
      "fn-path",
    ];
    assert.equal(await run(stack), await run(stack));
  });

  it("reads --ca-bundle's PEM file into every webhook's caBundle", async () => {
    const text = await run([
      "webhook",
      "--platform",
      "managed",
      "--domain",
      "fn.example.com",
      "--sim-name",
      "s",
      "--path-secret",
      "0123456789abcdef01234567",
      "--ca-bundle",
      caFile,
    ]);
    const config = parseAllDocuments(text)[0]?.toJSON();
    assert.equal(Buffer.from(config.webhooks[0].clientConfig.caBundle, "base64").toString(), pem);
  });

  it("--help prints the usage; the per-simulation webhook needs the deployment's path secret; an unreadable CA file is named", async () => {
    assert.match(await run(["--help"]), /--platform kind\|k3s\|managed\|openfaas/);
    await assert.rejects(
      runManifestsCommand(["webhook", "--platform", "kind", "--sim-name", "s"], () => {}),
      /needs the deployment's --path-secret/,
    );
    await assert.rejects(
      runManifestsCommand(
        ["--platform", "kind", "--sim-name", "s", "--ca-bundle", path.join(dir, "absent.pem")],
        () => {},
      ),
      (err: unknown) => err instanceof ManifestsUsageError && /cannot read .*absent\.pem/.test(err.message),
    );
  });

  it("--path-secret-from names an existing Secret: no Secret printed, the functions read that one, nothing generated", async () => {
    const docs = parseAllDocuments(
      await run(["--platform", "kind", "--reschedule", "--path-secret-from", "team-path-secret"]),
    ).map((d) => d.toJSON());
    assert.equal(docs.filter((d) => d.kind === "Secret").length, 0);
    const services = docs.filter((d) => d.kind === "Service" && d.apiVersion === "serving.knative.dev/v1");
    assert.equal(services.length, 2);
    for (const service of services) {
      const env = service.spec.template.spec.containers[0].env;
      assert.deepEqual(env.at(-1), {
        name: "WEBHOOK_PATH_SECRET",
        valueFrom: { secretKeyRef: { name: "team-path-secret", key: "path-secret" } },
      });
      // No value, so no digest: a rendering that knows no secret cannot roll the pods on its change.
      assert.equal(
        service.spec.template.metadata.annotations["simkube.io/webhook-path-secret-sha256"],
        undefined,
      );
    }
  });

  it("--path-secret-from with a webhook configuration takes the value too, for the webhook paths", async () => {
    const secret = "0123456789abcdef0123456789abcdef";
    const args = ["--platform", "kind", "--sim-name", "s", "--path-secret-from", "team-path-secret"];
    await assert.rejects(
      runManifestsCommand(args, () => {}),
      /give its value as pathSecret too/,
    );
    const docs = parseAllDocuments(await run([...args, "--path-secret", secret])).map((d) => d.toJSON());
    assert.equal(docs.filter((d) => d.kind === "Secret").length, 0);
    const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration");
    assert.equal(config.webhooks[0].clientConfig.service.path, `/${secret}`);
    await assert.rejects(
      runManifestsCommand(["--platform", "kind", "--path-secret-from", "Not_A_Name"], () => {}),
      /pathSecretFrom "Not_A_Name" is not a Secret name/,
    );
  });

  it("--path-secret-from reaches OpenFaaS's stack.yml secrets", () => {
    const stack = buildStack(
      options(["--target", "openfaas-stack", "--path-secret-from", "team-path-secret"]),
    ) as { functions: Record<string, { secrets?: string[]; environment?: Record<string, string> }> };
    const fn = stack.functions["simkube-fn-mutate-create"];
    assert.deepEqual(fn?.secrets, ["team-path-secret"]);
    assert.equal(fn?.environment?.WEBHOOK_PATH_SECRET_FILE, "/var/openfaas/secrets/path-secret");
  });
});
