// Discovery: /version, /api, /apis and the APIResourceLists clients (kubectl, client-node's
// KubernetesObjectApi) read to map a kind to its URL.

import type { JsonObject } from "../../shared/base/index.js";
import { apiVersionOf, type ResourceRegistry } from "./resources.js";
import type { Reply, ResourceInfo } from "./types.js";

const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function resourceEntries(r: ResourceInfo): JsonObject[] {
  // Namespaces have no DeleteCollection.
  const verbs =
    r.plural === "namespaces" ? ALL_VERBS.filter((v) => v !== "deletecollection") : [...ALL_VERBS];
  const entry: JsonObject = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs,
  };
  if (r.shortNames) entry.shortNames = r.shortNames;
  if (!r.statusSubresource) return [entry];
  const status = {
    name: `${r.plural}/status`,
    singularName: "",
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: ["get", "patch", "update"],
  };
  return [entry, status];
}

function apiResourceList(kinds: ResourceRegistry, gv: string): Reply | undefined {
  const list = kinds.all.filter((r) => apiVersionOf(r) === gv);
  if (list.length === 0) return undefined;
  const resources = list.flatMap(resourceEntries);
  return ok({ kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources });
}

function apiGroup(kinds: ResourceRegistry, name: string): JsonObject | undefined {
  const versions = [...new Set(kinds.all.filter((r) => r.group === name).map((r) => r.version))];
  const [preferred] = versions;
  if (!name || !preferred) return undefined;
  return {
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${preferred}`, version: preferred },
  };
}

const VERSION_INFO = { major: "1", minor: "31", gitVersion: "v1.31.0-fake", platform: "linux/amd64" };
const API_VERSIONS = {
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1:443" }],
};

function apisDiscovery(kinds: ResourceRegistry, group?: string, version?: string): Reply | undefined {
  if (group === undefined) {
    const groups = [...new Set(kinds.all.filter((r) => r.group).map((r) => r.group))];
    return ok({ kind: "APIGroupList", apiVersion: "v1", groups: groups.map((g) => apiGroup(kinds, g)) });
  }
  if (version === undefined) {
    const found = apiGroup(kinds, group);
    return found ? ok({ kind: "APIGroup", apiVersion: "v1", ...found }) : undefined;
  }
  return apiResourceList(kinds, `${group}/${version}`);
}

/**
 * The discovery document a GET path names, or undefined when the path is not a discovery path. `segments` are
 * the path's non-empty segments.
 */
export function discovery(kinds: ResourceRegistry, segments: string[]): Reply | undefined {
  const [root, a, b] = segments;
  if (root === "version" && segments.length === 1) return ok(VERSION_INFO);
  if (root === "api" && segments.length === 1) return ok(API_VERSIONS);
  if (root === "api" && a && segments.length === 2) return apiResourceList(kinds, a);
  if (root === "apis" && segments.length <= 3) return apisDiscovery(kinds, a, b);
  return undefined;
}
