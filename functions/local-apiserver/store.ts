// The object store: one map keyed by group/resource/namespace/name and one global resourceVersion, as etcd
// behind a single apiserver would keep them. Writes through the API and seeding by tests both land here.

import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../shared/kube/index.js";
import { clone, metaOf, str, timestamp } from "./objects.js";
import { apiVersionOf, type ResourceRegistry } from "./resources.js";
import type { FakeStore, ObjectKey, ResourceInfo } from "./types.js";

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private revision = 1000;

  constructor(
    private readonly kinds: ResourceRegistry,
    private readonly now: () => Date,
  ) {}

  nextRevision(): string {
    return String(++this.revision);
  }

  currentRevision(): string {
    return String(this.revision);
  }

  private key(res: ResourceInfo, namespace: string | undefined, name: string): string {
    return `${res.group}/${res.plural}/${res.namespaced ? (namespace ?? "") : ""}/${name}`;
  }

  /** The stored object itself (callers copy before handing it out or changing it). */
  get(res: ResourceInfo, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(this.key(res, namespace, name));
  }

  /** Stores a copy of obj as is (the caller has set its resourceVersion). */
  save(res: ResourceInfo, namespace: string | undefined, name: string, obj: KubeObject): void {
    this.objects.set(this.key(res, namespace, name), clone(obj));
  }

  delete(res: ResourceInfo, namespace: string | undefined, name: string): boolean {
    return this.objects.delete(this.key(res, namespace, name));
  }

  /** Objects of a kind (in one namespace, or all), sorted by namespace/name. */
  list(res: ResourceInfo, namespace: string | undefined): KubeObject[] {
    const prefix = `${res.group}/${res.plural}/${res.namespaced && namespace ? `${namespace}/` : ""}`;
    const out: KubeObject[] = [];
    for (const [key, obj] of this.objects) if (key.startsWith(prefix)) out.push(obj);
    return out.sort((a, b) =>
      `${a.metadata?.namespace ?? ""}/${a.metadata?.name}`.localeCompare(
        `${b.metadata?.namespace ?? ""}/${b.metadata?.name}`,
      ),
    );
  }

  /** Seeding: writes an object with no admission or validation, filling the system fields. */
  put<T extends KubeObject = KubeObject>(input: KubeObject): T {
    const res = this.kinds.resolve(input.kind ?? "", input.apiVersion);
    const obj: KubeObject = clone(input);
    obj.apiVersion ??= apiVersionOf(res);
    const meta = metaOf(obj);
    const name = str(meta.name);
    if (!name) throw new Error("fake-apiserver: store.put needs metadata.name");
    if (res.namespaced) {
      meta.namespace ??= "default";
      this.ensureNamespace(String(meta.namespace));
    } else delete meta.namespace;
    meta.uid ??= randomUUID();
    meta.creationTimestamp ??= timestamp(this.now());
    meta.resourceVersion = this.nextRevision();
    if (res.plural === "namespaces") {
      obj.status ??= { phase: "Active" };
      obj.spec ??= { finalizers: ["kubernetes"] };
    }
    this.save(res, str(meta.namespace), name, obj);
    return clone(obj) as T;
  }

  ensureNamespace(name: string): void {
    if (this.get(this.kinds.namespaces(), undefined, name)) return;
    this.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
    });
  }

  /** What the namespace controller ends with: the namespace and everything in it disappear. */
  finalizeNamespace(name: string): void {
    for (const [key, obj] of this.objects) {
      const res = this.kinds.all.find((r) => key.startsWith(`${r.group}/${r.plural}/`));
      if (res?.namespaced && obj.metadata?.namespace === name) this.objects.delete(key);
    }
    this.delete(this.kinds.namespaces(), undefined, name);
    this.revision += 1;
  }

  /** The tests' view: objects addressed by ObjectKey, always copies. */
  facade(): FakeStore {
    return {
      put: <T extends KubeObject>(object: KubeObject) => this.put<T>(object),
      get: <T extends KubeObject>(key: ObjectKey) => {
        const { res, namespace } = this.locate(key);
        const obj = this.get(res, namespace, key.name);
        return obj ? (clone(obj) as T) : undefined;
      },
      list: <T extends KubeObject>(kind: string, namespace?: string) =>
        this.list(this.kinds.resolve(kind), namespace).map((o) => clone(o) as T),
      update: <T extends KubeObject>(key: ObjectKey, change: (object: T) => void) =>
        this.updateInPlace(key, change),
      remove: (key) => {
        const { res, namespace } = this.locate(key);
        return this.delete(res, namespace, key.name);
      },
      resourceVersion: () => this.currentRevision(),
    };
  }

  private locate(key: ObjectKey): { res: ResourceInfo; namespace: string | undefined } {
    const res = this.kinds.resolve(key.kind, key.apiVersion);
    return { res, namespace: key.namespace ?? (res.namespaced ? "default" : undefined) };
  }

  private updateInPlace<T extends KubeObject>(key: ObjectKey, change: (object: T) => void): T {
    const { res, namespace } = this.locate(key);
    const current = this.get(res, namespace, key.name);
    if (!current)
      throw new Error(`fake-apiserver: no ${res.plural} ${namespace ?? ""}/${key.name} to update`);
    const next = clone(current) as T;
    change(next);
    const meta = metaOf(next);
    meta.name = key.name;
    if (res.namespaced) meta.namespace = namespace;
    meta.resourceVersion = this.nextRevision();
    this.save(res, namespace, key.name, next);
    return next;
  }
}
