// Webmesh-style node addresses: every node ID gets one host prefix (/32, or /128 in an IPv6
// network) of the mesh network, the lowest free one, and keeps it. The ledger is shared through a
// Kubernetes namespace, so the same node ID gets the same address from any stack, and fixed
// assignments (`static`) are honoured.
import * as pulumi from "@pulumi/pulumi";
import { IpAllocation, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const nodes = config.requireObject<string[]>("nodes");
const context = config.get("context"); // kubeconfig context; default: the current one

const mesh = new IpPool("mesh", {
  network: config.require("network"),
  static: config.getObject<Record<string, string>>("static") ?? {},
  ledger: {
    kind: "kubernetes",
    name: config.get("meshName") ?? "mesh",
    namespace: config.require("ledgerNamespace"),
    ...(context ? { context } : {}),
  },
});

const addresses = nodes.map((nodeId) => new IpAllocation(nodeId, { pool: mesh, nodeId }));
export const nodePrefixes = Object.fromEntries(nodes.map((n, i) => [n, addresses[i]!.prefix]));
