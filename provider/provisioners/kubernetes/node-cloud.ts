import { shared } from "../../core/process-registry";
import { shown } from "../../core/text";
import type { KubeClients } from "../../kube/kube-config";
import { isNotFound, kubeFailure } from "../../kube/kube-errors";
import { awsProvisioner } from "../aws/aws-provisioner";
import type { AwsProvisionerConfig } from "../config/aws-provisioner-config";
import type { AdoptPresent, EgressIPProvisioner, Placement } from "../egress-ip-provisioner";
import type { KubeNode } from "./nodes";

// The cloud side of a Kubernetes kind whose Nodes run on AWS (`cloud: { kind: "aws" }` of
// ocp-static and cilium): each address is also a secondary private IP of its Node's instance.

/** The instance ID in an AWS providerID (`aws:///us-east-1a/i-0abc` → `i-0abc`). */
export function awsInstanceId(providerID: string | undefined): string | undefined {
  return /^aws:\/\/\/[^/]*\/(i-[0-9a-f]+)$/.exec(providerID ?? "")?.[1];
}

/** The cloud side of a kind: the EC2 provisioner acting for the owner, and how to find a Node's instance. */
export interface NodeCloud {
  /** The aws provisioner (one per process for these settings), as a view for the owner. */
  cloud: EgressIPProvisioner;
  /** The EC2 instance of a node: from its providerID, else its name (the private DNS name on AWS). */
  instanceOf(host: string): Promise<string>;
  /** Why a Node cannot carry an address here ("" when it can): it has no AWS instance. */
  unusable(node: KubeNode): string;
  /** The secondary IPs of the instances inside `cidrs`, each on the Node of its instance (see {@link EgressIPProvisioner.cloudPlacements}). */
  placements(cidrs: string[], signal?: AbortSignal): Promise<Placement[]>;
}

/** The cloud side for `cloud` (undefined without one). */
export function nodeCloud(
  cloud: AwsProvisionerConfig | undefined,
  kube: KubeClients,
  owner: string | undefined,
  adoptPresent: AdoptPresent | undefined,
): NodeCloud | undefined {
  if (!cloud) return undefined;
  const base = shared("node-cloud", JSON.stringify(cloud), () => awsProvisioner(cloud));
  // The instance side acts for the same owner: the interface records it in a tag.
  return {
    cloud: owner === undefined ? base : base.forOwner(owner, adoptPresent),
    async instanceOf(host) {
      try {
        return awsInstanceId((await kube.core.readNode({ name: host })).spec?.providerID) ?? host;
      } catch (err) {
        if (isNotFound(err)) return host;
        throw kubeFailure(`reading Node ${host} (its instance)`, err, kube);
      }
    },
    unusable: (node) =>
      awsInstanceId(node.providerID) ? "" : `no AWS providerID (got ${shown(node.providerID ?? "")})`,
    async placements(cidrs, signal) {
      const [seen, nodes] = await Promise.all([
        base.placements!(cidrs, signal),
        kube.core.listNode().catch((err: unknown) => Promise.reject(kubeFailure("listing Nodes", err, kube))),
      ]);
      // State names a host by its Node: the instance ID stays an alias.
      const nodeOf = new Map<string, string>();
      for (const n of nodes.items) {
        const id = awsInstanceId(n.spec?.providerID);
        if (id && n.metadata?.name) nodeOf.set(id, n.metadata.name);
      }
      return seen.map((p) => {
        const node = nodeOf.get(p.host);
        return node ? { ...p, host: node, aliases: [p.host, ...(p.aliases ?? [])] } : p;
      });
    },
  };
}
