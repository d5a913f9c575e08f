// The real node's addresses, all inside 198.18.0.0/15 (RFC 2544's benchmarking range, which collides with no
// real network). Each node gets an index: its veth link is 198.19.<i>.0/30 (host side .1, node side .2), its
// pods 198.18.<i>.0/24 on a bridge inside the node's network namespace. The Service range is the same for every
// cluster (ClusterIPs exist only in each node's own iptables), so it is the one /24 no index can take.

export const SERVICE_CIDR = "198.19.255.0/24";
/** The `kubernetes` Service's ClusterIP: the first address of SERVICE_CIDR (the API server's own SAN). */
export const KUBERNETES_SERVICE_IP = "198.19.255.1";
export const MAX_NODE_INDEX = 254;

export interface NodeAddresses {
  index: number;
  /** The veth end left in the host's namespace; its name is also the lock on the index. */
  hostVeth: string;
  /** The veth end inside the node's namespace. */
  nodeVeth: string;
  /** The API server listens here; the node reaches it over the veth. */
  hostIp: string;
  /** The kubelet's node IP. */
  nodeIp: string;
  /** Prefix length of the veth link. */
  linkPrefix: number;
  podCidr: string;
  podGateway: string;
  /** The bridge the CNI plugin creates inside the node's namespace. */
  bridge: string;
}

export function nodeAddresses(index: number): NodeAddresses {
  if (!Number.isInteger(index) || index < 0 || index > MAX_NODE_INDEX)
    throw new RangeError(`real node index must be an integer from 0 to ${MAX_NODE_INDEX}, got ${index}`);
  return {
    index,
    hostVeth: `skfn-node${index}`,
    nodeVeth: "eth0",
    hostIp: `198.19.${index}.1`,
    nodeIp: `198.19.${index}.2`,
    linkPrefix: 30,
    podCidr: `198.18.${index}.0/24`,
    podGateway: `198.18.${index}.1`,
    bridge: "skfn-br0",
  };
}

/** Every index once, starting at `start` (a random start keeps concurrent clusters from racing for index 0). */
export function indexOrder(start: number): number[] {
  const count = MAX_NODE_INDEX + 1;
  const first = ((Math.trunc(start) % count) + count) % count;
  return Array.from({ length: count }, (_, i) => (first + i) % count);
}
