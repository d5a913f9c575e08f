// `--pod-reads virtual-namespaces`: reschedule-delete may read pods only in the virtual namespaces it has
// checked, never cluster-wide. Its ClusterRole has no `get pods`; it may create RoleBindings and `bind` one
// ClusterRole, `<name>-virtual-pod-reads` (get pods). Before its first pod read in a namespace (which the
// steps have already found to be this Simulation's virtual namespace), it binds that role to its own
// ServiceAccount there. The pod-read-bindings policy (knative/pod-reads.ts) refuses any other
// binding: another namespace, another role, another subject.
//
// RBAC takes a moment to see a new binding (the authorizer reads bindings from an informer cache), so a 403
// on a pod read within a short window after the binding was made is retried; any other 403 is an answer.

import { LRUCache } from "lru-cache";
import { isAlreadyExists, type KubeApi, type KubeObject, kubeErrorOf } from "../../shared/kube/index.js";

/** POD_READ_ROLE and POD_READ_ACCOUNT, parsed (shared/config/config.ts). */
export interface PodReadSettings {
  /** The ClusterRole granting `get pods`, bound per virtual namespace. */
  role: string;
  /** This function's own ServiceAccount, the one subject the binding names. */
  account: { namespace: string; name: string };
}

export const RBAC_GROUP = "rbac.authorization.k8s.io";

/** The RoleBinding that lets the account read pods in one namespace; named after the role. Pure. */
export function podReadBinding(settings: PodReadSettings, namespace: string): KubeObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: "RoleBinding",
    metadata: { name: settings.role, namespace },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: settings.role },
    subjects: [
      { kind: "ServiceAccount", name: settings.account.name, namespace: settings.account.namespace },
    ],
  };
}

export interface PodReadGrants {
  /** The binding in this namespace exists (made now, or found made): the account may read its pods. */
  ensure(namespace: string): Promise<void>;
  /** `read`, with a 403 retried while a binding made here may not have reached the authorizer yet. */
  read<T>(namespace: string, read: () => Promise<T>): Promise<T>;
}

export interface PodReadGrantsOptions {
  /** How long a 403 after a new binding is retried. Default 2000 ms. */
  propagationMs?: number;
  /** Pause between those retries. Default 100 ms. */
  retryMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

function isForbidden(err: unknown): boolean {
  return kubeErrorOf(err)?.status === 403;
}

export function createPodReadGrants(
  kube: KubeApi,
  settings: PodReadSettings,
  options: PodReadGrantsOptions = {},
): PodReadGrants {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const propagationMs = options.propagationMs ?? 2_000;
  const retryMs = options.retryMs ?? 100;
  /** Per namespace: the binding's creation (shared by concurrent reviews), resolved with when it was made. */
  const bound = new LRUCache<string, Promise<number>>({ max: 10_000 });

  async function bind(namespace: string): Promise<number> {
    try {
      await kube.create(podReadBinding(settings, namespace));
    } catch (err) {
      // Made by another replica, or by this one before a restart: it may be just as new.
      if (!isAlreadyExists(err)) throw err;
    }
    return now();
  }

  return {
    async ensure(namespace) {
      let done = bound.get(namespace);
      if (done === undefined) {
        done = bind(namespace);
        bound.set(namespace, done);
        // A failure is not remembered: the next review tries again.
        done.catch(() => bound.delete(namespace));
      }
      await done;
    },
    async read(namespace, read) {
      for (;;) {
        try {
          return await read();
        } catch (err) {
          if (!isForbidden(err)) throw err;
          const since = await bound.get(namespace)?.catch(() => undefined);
          if (since === undefined || now() - since >= propagationMs) {
            // The binding may be gone (its namespace deleted and made again): the next review makes it anew.
            bound.delete(namespace);
            throw err;
          }
          await sleep(retryMs);
        }
      }
    },
  };
}

/** A pod read in `namespace`: through the grants' retry with `--pod-reads virtual-namespaces`, else as is. */
export function podReadIn<T>(
  grants: PodReadGrants | undefined,
  namespace: string,
  read: () => Promise<T>,
): () => Promise<T> {
  return grants ? () => grants.read(namespace, read) : read;
}
