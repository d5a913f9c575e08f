import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Unpackr } from "msgpackr";
import { stringify } from "yaml";
import { hashPodText } from "../../functions/cli/hash-pod.js";
import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { hashJson, podSpecHash, stableSpec } from "../../shared/hash/pod-hash.js";
import { SipHasher13 } from "../../shared/hash/siphash.js";

const EMPTY_POD_SPEC_HASH = "17506812802394981455"; // SimKube testutils EMPTY_POD_SPEC_HASH
const NODE_SELECTOR_POD_SPEC_HASH = "18161541283955474812"; // sk-driver mutation test, nodeSelector boo=far
const BARE_POD_HASH = "2151974655102796215"; // pod_lifecycles key in bare-pods.sktrace

// SimKube's example traces live outside the repo (never copied in): dist/test/unit -> repo/.. or cwd/..
function findSharedTrace(name: string): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [
    resolve(here, "../../../../shared/data/simkube-traces", name),
    resolve(here, "../../../shared/data/simkube-traces", name),
    resolve(process.cwd(), "../shared/data/simkube-traces", name),
  ].find((p) => existsSync(p));
}

type Json = Record<string, unknown>;

// msgpack maps arrive as Map (keys may be non-strings); the hash takes plain JSON objects.
function toPlain(value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toPlain(v)]));
  if (Array.isArray(value)) return value.map(toPlain);
  return value;
}

function readTrace(path: string): Json {
  const unpackr = new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false });
  return toPlain(unpackr.unpack(readFileSync(path))) as Json;
}

function appliedObjects(trace: Json): Json[] {
  return (trace.events as Json[]).flatMap((event) => event.applied_objs as Json[]);
}

function tracePods(): Json[] | undefined {
  const path = findSharedTrace("bare-pods.sktrace");
  return path ? appliedObjects(readTrace(path)).filter((obj) => obj.kind === "Pod") : undefined;
}

// Specs with what stableSpec changes (identity, ports, token volumes and mounts, nulls, missing lists) mixed
// with arbitrary JSON, keys beyond ASCII among them, so the pod-spec path is held to the general one.
function generatedSpec(random: () => number): Json {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const keys = ["a", "name", "image", "é", "\u{FF61}", "\u{1F600}", "Z", "", "ports", "volumeMounts", "k8s"];
  const scalar = (): unknown =>
    pick<unknown>([
      null,
      true,
      false,
      0,
      -7,
      2.5,
      2 ** 60,
      "",
      "kube-api-access-x",
      "text",
      "😀",
      "\u{FF61}",
    ]);
  const value = (depth: number): unknown => {
    const kind = depth > 2 ? 0 : Math.floor(random() * 3);
    if (kind === 0) return scalar();
    if (kind === 1) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    const obj: Json = {};
    const size = Math.floor(random() * (random() < 0.1 ? 20 : 5));
    for (let i = 0; i < size; i++) obj[`${pick(keys)}${i % 3 === 0 ? i : ""}`] = value(depth + 1);
    return obj;
  };
  const mounts = (): unknown =>
    pick([
      undefined,
      null,
      [],
      [
        { name: "kube-api-access-ab", mountPath: "/t" },
        { name: "data", x: null },
      ],
    ]);
  const container = (): Json => {
    const out: Json = { name: pick(["app", "é", null]), image: "img" };
    for (const [key, chance] of [
      ["ports", 0.5],
      ["volumeMounts", 0.6],
      ["extra", 0.5],
    ] as const) {
      if (random() < chance) out[key] = key === "volumeMounts" ? mounts() : value(1);
    }
    return out;
  };
  const spec: Json = {};
  const optional: Array<[string, () => unknown]> = [
    ["containers", () => pick([null, [], Array.from({ length: 1 + Math.floor(random() * 3) }, container)])],
    ["initContainers", () => pick([null, [container()]])],
    ["volumes", () => pick([null, [], [{ name: "kube-api-access-q" }, { name: "v", emptyDir: {} }, 3]])],
    ["nodeName", () => "node-1"],
    ["serviceAccountName", () => "sa"],
    ["serviceAccount", () => null],
    ["nodeSelector", () => value(1)],
    ["affinity", () => value(0)],
    ["\u{FF61}", () => value(1)],
    ["\u{1F600}", () => scalar()],
  ];
  for (const [key, make] of optional) if (random() < 0.5) spec[key] = make();
  return spec;
}

const typicalPod = (): Json => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "the-pod", namespace: "test-namespace" },
  spec: {
    nodeName: "node-1",
    serviceAccount: "default",
    serviceAccountName: "default",
    containers: [
      {
        name: "app",
        image: "nginx:1.27",
        ports: [{ containerPort: 80, protocol: "TCP" }],
        volumeMounts: [
          { name: "kube-api-access-x7k2p", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
          { name: "data", mountPath: "/data" },
        ],
      },
    ],
    initContainers: [
      {
        name: "init",
        image: "busybox",
        ports: [{ containerPort: 9000 }],
        volumeMounts: [
          { name: "kube-api-access-x7k2p", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
        ],
      },
    ],
    volumes: [
      { name: "data", emptyDir: {} },
      { name: "kube-api-access-x7k2p", projected: { defaultMode: 420 } },
    ],
  },
});

describe("podSpecHash: SimKube's vectors", () => {
  test("empty spec", () => {
    assert.equal(podSpecHash({ spec: {} }), EMPTY_POD_SPEC_HASH);
  });

  test("nodeSelector boo=far", () => {
    assert.equal(podSpecHash({ spec: { nodeSelector: { boo: "far" } } }), NODE_SELECTOR_POD_SPEC_HASH);
  });

  test("every pod in bare-pods.sktrace hashes to its pod_lifecycles key", (t) => {
    const pods = tracePods();
    if (!pods) return t.skip("bare-pods.sktrace not found under ../shared/data/simkube-traces");
    assert.equal(pods.length, 4);
    for (const pod of pods) assert.equal(podSpecHash(pod), BARE_POD_HASH);
    const trace = readTrace(findSharedTrace("bare-pods.sktrace") as string);
    const keys = Object.values(trace.pod_lifecycles as Record<string, Json>).flatMap((byHash) =>
      Object.keys(byHash),
    );
    assert.deepEqual(new Set(keys), new Set([BARE_POD_HASH]));
  });

  test("raw spec hashes of cronjob and dsb-scaling traces equal their index entries (nulls kept)", (t) => {
    const names = ["cronjob.sktrace", "dsb-scaling.sktrace"];
    if (!names.every(findSharedTrace)) return t.skip("traces not found under ../shared/data/simkube-traces");
    let checked = 0;
    for (const name of names) {
      const trace = readTrace(findSharedTrace(name) as string);
      // The index holds jsonutils::hash_option(spec) of each object's last applied version.
      const last = new Map<string, Json>();
      for (const obj of appliedObjects(trace)) {
        const meta = obj.metadata as Json;
        last.set(`${obj.apiVersion}.${obj.kind} ${meta.namespace}/${meta.name}`, obj);
      }
      for (const [gvk, byName] of Object.entries(trace.index as Record<string, Record<string, bigint>>)) {
        for (const [nsName, hash] of Object.entries(byName)) {
          const obj = last.get(`${gvk} ${nsName}`);
          assert.ok(obj, `${gvk} ${nsName} in the index but never applied`);
          assert.equal(hashJson(obj.spec), BigInt(hash).toString(), `${gvk} ${nsName}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 20, `only ${checked} objects checked`);
  });
});

// Expected values from rustc with std's DefaultHasher over a std-only model of serde_json::Value
// (number variants hashed untagged, object keys in BTreeMap<String, _> order).
describe("hashJson: Rust's Hash of a serde_json value", () => {
  test("a mix of every type, null inside an array", () => {
    assert.equal(hashJson({ a: 1, b: [true, false, null], c: -5, d: 2.5, e: "x" }), "15034228282364743297");
  });

  test("keys sort by UTF-8 bytes, not UTF-16 units (U+FF61 before an astral emoji)", () => {
    const obj = { z: 1, é: 2, "\u{FF61}": 3, "😀": 4, A: 5, aa: 6, a: 7, "": 8 };
    assert.equal(hashJson(obj), "7768397435651771873");
    // Insertion order does not matter.
    const reversed = Object.fromEntries(Object.entries(obj).reverse());
    assert.equal(hashJson(reversed), "7768397435651771873");
  });

  test("floats hash their IEEE-754 bits, -0 as +0", () => {
    assert.equal(hashJson([-0, 1e300, -1.5, 0.1]), "1740490177117085189");
    assert.equal(hashJson(-0), hashJson(0));
    assert.equal(hashJson(0), "13646096770106105413"); // 8 zero bytes, same as null
    assert.equal(hashJson(1e20), "456412115418804439"); // integral but beyond u64: an f64, as serde_json reads it
  });

  test("integers: negative as i64, u64 up to 2^64-1 via bigint", () => {
    const ints = [-1, -(2n ** 63n), 2n ** 64n - 1n, 2 ** 53, 0];
    assert.equal(hashJson(ints), "17004553870594937571");
    assert.equal(hashJson([-1, -(2 ** 63), 2n ** 64n - 1n, 2n ** 53n, 0n]), "17004553870594937571");
  });

  test("a JS number with an integral value is an integer (1.0 cannot be told from 1)", () => {
    assert.equal(hashJson(JSON.parse("1.0")), hashJson(1));
    assert.notEqual(hashJson(1.5), hashJson(1));
  });

  test("nested arrays hash their elements only, no lengths", () => {
    assert.equal(hashJson([[1, [2, []]], []]), "18088007599891946824");
    assert.equal(hashJson([[1, [2, []]], []]), hashJson([1, 2]));
  });

  test("objects: null members are hashed, undefined ones skipped; empty object and null", () => {
    assert.equal(hashJson({ a: null }), "5750303950507140471");
    assert.equal(hashJson({ a: null, b: undefined }), "5750303950507140471");
    assert.equal(hashJson({}), "15130871412783076140");
    assert.equal(hashJson(null), "13646096770106105413");
    assert.equal(hashJson(undefined), hashJson(null)); // hash_option(None)
    assert.equal(hashJson({ outer: { inner: "v", list: ["a", "b"] } }), "6744957765293884058");
  });

  test("values that are not JSON are refused", () => {
    assert.throws(() => hashJson(Number.NaN), RangeError);
    assert.throws(() => hashJson({ a: Number.POSITIVE_INFINITY }), RangeError);
    assert.throws(() => hashJson({ f: () => 1 }), /cannot hash a function/);
    assert.throws(() => hashJson(new Date(0)), /cannot hash a Date/);
    assert.throws(() => hashJson(new Map([["a", 1]])), /cannot hash a Map/);
    assert.equal(hashJson(Object.assign(Object.create(null), { a: null })), "5750303950507140471");
  });

  test("a refused value halfway through leaves the next hash unaffected", () => {
    assert.throws(() => hashJson({ a: "long enough to be buffered", b: Number.NaN }), RangeError);
    assert.equal(hashJson({ a: null }), "5750303950507140471");
    assert.equal(podSpecHash({ spec: {} }), EMPTY_POD_SPEC_HASH);
  });
});

describe("stableSpec", () => {
  test("drops node and service-account identity, container ports, kube-api-access volumes and mounts", () => {
    assert.deepEqual(stableSpec(typicalPod().spec), {
      containers: [
        {
          name: "app",
          image: "nginx:1.27",
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        },
      ],
      initContainers: [
        {
          name: "init",
          image: "busybox",
          ports: [{ containerPort: 9000 }], // SimKube strips ports from regular containers only
          volumeMounts: [],
        },
      ],
      volumes: [{ name: "data", emptyDir: {} }],
    });
  });

  test("fills the lists SimKube always serializes, and leaves initContainers out when absent", () => {
    assert.deepEqual(stableSpec({}), { containers: [], volumes: [] });
    assert.deepEqual(stableSpec({ containers: [{ name: "a" }], volumes: null, initContainers: null }), {
      containers: [{ name: "a", volumeMounts: [] }],
      volumes: [],
    });
  });

  test("removes null members at every depth, as the typed PodSpec does", () => {
    const spec = {
      hostname: null,
      affinity: { nodeAffinity: null },
      containers: [{ name: "a", args: null }],
    };
    assert.deepEqual(stableSpec(spec), {
      affinity: {},
      containers: [{ name: "a", volumeMounts: [] }],
      volumes: [],
    });
  });

  test("leaves ephemeral containers and non-matching names alone", () => {
    const spec = {
      ephemeralContainers: [
        { name: "debug", ports: [{ containerPort: 1 }], volumeMounts: [{ name: "kube-api-access-z" }] },
      ],
      volumes: [{ name: "my-kube-api-access" }, { name: "kube-api-accessor" }, { projected: {} }],
    };
    const stable = stableSpec(spec);
    assert.deepEqual(stable.ephemeralContainers, spec.ephemeralContainers);
    // A prefix match, as SimKube's starts_with: "kube-api-accessor" goes too; unnamed entries stay.
    assert.deepEqual(stable.volumes, [{ name: "my-kube-api-access" }, { projected: {} }]);
  });

  test("is pure: the input is not mutated and the result shares nothing mutable with it", () => {
    const pod = typicalPod();
    const before = structuredClone(pod);
    const stable = stableSpec(pod.spec);
    assert.deepEqual(pod, before);
    ((stable.volumes as Json[])[0] as Json).name = "changed";
    ((stable.containers as Json[])[0] as Json).image = "changed";
    assert.deepEqual(pod, before);
  });

  test("hashJson(stableSpec(spec)) equals podSpecHash, nulls included", (t) => {
    const specs: unknown[] = [
      {},
      typicalPod().spec,
      { hostname: null, affinity: { nodeAffinity: null }, containers: [{ name: "a", args: null }] },
      ...(tracePods() ?? []).map((pod) => pod.spec),
    ];
    if (!tracePods()) t.diagnostic("bare-pods.sktrace not found: checked built-in specs only");
    for (const spec of specs) assert.equal(hashJson(stableSpec(spec)), podSpecHash({ spec }));
  });

  test("hashJson(stableSpec(spec)) equals podSpecHash for 400 generated specs", () => {
    const random = seededRandom(20261203);
    for (let i = 0; i < 400; i++) {
      const spec = generatedSpec(random);
      assert.equal(podSpecHash({ spec }), hashJson(stableSpec(spec)), JSON.stringify(spec));
    }
  });

  test("refuses specs of the wrong shape", () => {
    assert.throws(() => stableSpec(null), /pod spec must be an object, got null/);
    assert.throws(() => stableSpec([]), /pod spec must be an object, got an array/);
    assert.throws(() => stableSpec("x"), /pod spec must be an object, got a string/);
    assert.throws(() => stableSpec({ containers: {} }), /spec.containers must be an array/);
    assert.throws(() => stableSpec({ containers: ["x"] }), /spec.containers\[0\] must be an object/);
    assert.throws(() => stableSpec({ volumes: "x" }), /spec.volumes must be an array/);
    assert.throws(
      () => stableSpec({ initContainers: [{ volumeMounts: 1 }] }),
      /spec.initContainers\[0\].volumeMounts must be an array/,
    );
  });
});

describe("podSpecHash", () => {
  test("ignores what SimKube ignores, sees the rest", () => {
    const base = podSpecHash(typicalPod());
    const other = typicalPod();
    const spec = other.spec as Json;
    spec.nodeName = "virtual-node-7";
    spec.serviceAccountName = "builder";
    delete spec.serviceAccount;
    ((spec.volumes as Json[])[1] as Json).name = "kube-api-access-abcde";
    const app = (spec.containers as Json[])[0] as Json;
    app.ports = [];
    ((app.volumeMounts as Json[])[0] as Json).name = "kube-api-access-abcde";
    spec.hostname = null;
    assert.equal(podSpecHash(other), base);

    app.image = "nginx:1.28";
    assert.notEqual(podSpecHash(other), base);
  });

  test("keys beyond ASCII are taken in UTF-8 order, whatever order they came in", () => {
    // U+FF61 sorts after an astral character by UTF-16 units and before it by UTF-8 bytes.
    const selector: Record<string, string> = { z: "1", "\u{FF61}": "2", "\u{1F600}": "3", a: "4" };
    const spec = {
      nodeSelector: selector,
      containers: [{ name: "a", env: [{ name: "\u00e9", value: "x" }] }],
    };
    const reversed = { ...spec, nodeSelector: Object.fromEntries(Object.entries(selector).reverse()) };
    assert.equal(podSpecHash({ spec }), hashJson(stableSpec(spec)));
    assert.equal(podSpecHash({ spec: reversed }), podSpecHash({ spec }));
    // Taken in the order of UTF-16 units (JS's default sort) they would hash otherwise, so the spec tells.
    const utf16 = new SipHasher13();
    for (const key of Object.keys(selector).sort()) utf16.writeStr(key).writeStr(selector[key] ?? "");
    assert.notEqual(utf16.finishDecimal(), hashJson(selector));
  });

  test("a pod without a spec is an error", () => {
    assert.throws(() => podSpecHash({}), { message: "pod has no spec" });
    assert.throws(() => podSpecHash({ spec: null }), { message: "pod has no spec" });
    assert.throws(() => podSpecHash({ spec: 3 }), /pod spec must be an object/);
  });
});

describe("hashPodText (functions/cli/hash-pod.ts)", () => {
  const tracePod = (): Json => tracePods()?.[0] ?? typicalPod();
  const expected = () => podSpecHash(tracePod());

  test("a Pod as JSON", (t) => {
    if (!tracePods()) t.diagnostic("bare-pods.sktrace not found: using a built-in pod");
    assert.equal(hashPodText(JSON.stringify(tracePod(), null, 2)), expected());
    if (tracePods()) assert.equal(hashPodText(JSON.stringify(tracePod())), BARE_POD_HASH);
  });

  test("a Pod as YAML, with a comment, document marker and BOM", () => {
    assert.equal(hashPodText(stringify(tracePod())), expected());
    assert.equal(hashPodText(`\uFEFF# from kubectl\n---\n${stringify(tracePod())}`), expected());
  });

  test("YAML is read as kubectl reads it: 0644 is octal, dates stay strings", () => {
    const yamlPod = [
      "apiVersion: v1",
      "kind: Pod",
      "spec:",
      "  containers:",
      "  - name: app",
      "    env:",
      "    - name: SINCE",
      "      value: 2024-01-01",
      "  volumes:",
      "  - name: cfg",
      "    configMap: {name: cfg, defaultMode: 0644}",
    ].join("\n");
    const jsonSpec = {
      containers: [{ name: "app", env: [{ name: "SINCE", value: "2024-01-01" }] }],
      volumes: [{ name: "cfg", configMap: { name: "cfg", defaultMode: 420 } }],
    };
    assert.equal(hashPodText(yamlPod), podSpecHash({ spec: jsonSpec }));
  });

  test("integers beyond 2^53 are exact in JSON and YAML", () => {
    const exact = podSpecHash({ spec: { activeDeadlineSeconds: 9007199254740993n } });
    assert.notEqual(exact, podSpecHash({ spec: { activeDeadlineSeconds: 9007199254740992 } }));
    assert.equal(hashPodText('{"kind":"Pod","spec":{"activeDeadlineSeconds":9007199254740993}}'), exact);
    assert.equal(hashPodText("kind: Pod\nspec:\n  activeDeadlineSeconds: 9007199254740993\n"), exact);
    // The exact re-read of JSON keeps everything else as JSON.parse would.
    const json =
      '{"kind":"Pod",\n "spec":{"activeDeadlineSeconds":9007199254740993,"hostname":"h\\u00e9\\/x","priority":-1.5e1}}';
    const spec = { activeDeadlineSeconds: 9007199254740993n, hostname: "hé/x", priority: -15 };
    assert.equal(hashPodText(json), podSpecHash({ spec }));
  });

  test("a kind-less object with a spec is taken as a Pod", () => {
    assert.equal(hashPodText('{"spec": {}}'), EMPTY_POD_SPEC_HASH);
    assert.equal(hashPodText("spec:\n  nodeSelector:\n    boo: far\n"), NODE_SELECTOR_POD_SPEC_HASH);
  });

  const bad: [string, string, RegExp][] = [
    ["empty input", "  \n", /empty input/],
    ["only a document marker", "---\n", /empty input/],
    ["broken JSON", '{"kind": "Pod",', /input is not valid JSON/],
    ["broken YAML", "spec: [1\n", /input is not valid YAML/],
    ["a JSON array", "[]", /expected a Pod object, got an array/],
    ["a scalar", "42", /expected a Pod object, got a number/],
    ["a List", '{"apiVersion": "v1", "kind": "List", "items": []}', /expected a single Pod, got a List/],
    ["a PodList", "kind: PodList\nitems: []\n", /expected a single Pod, got a PodList/],
    ["another kind", "kind: Deployment\nspec: {}\n", /expected kind Pod, got "Deployment"/],
    ["a wrong apiVersion", "apiVersion: apps/v1\nkind: Pod\nspec: {}\n", /expected apiVersion v1/],
    [
      "two documents",
      "kind: Pod\nspec: {}\n---\nkind: Pod\nspec: {}\n",
      /expected one Pod, got 2 YAML documents/,
    ],
    ["a Pod without spec", '{"kind": "Pod", "metadata": {"name": "x"}}', /^pod has no spec$/],
    ["a bare PodSpec", "containers: []\n", /bare PodSpec/],
    ["a spec that is not an object", "kind: Pod\nspec: nope\n", /pod spec must be an object, got a string/],
  ];
  for (const [name, text, message] of bad) {
    test(`refuses ${name}`, () => {
      assert.throws(
        () => hashPodText(text),
        (err: unknown) => err instanceof Error && message.test(err.message),
      );
    });
  }
});
