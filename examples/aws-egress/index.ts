// Egress IPs on AWS: each tenant namespace gets one address per availability zone, as a secondary
// private IP of a node in that zone. The node subnets are looked up by tag with @pulumi/aws; a
// subnet lives in one zone, so each zone gets a pool over its own subnet.
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const region = config.require("region");
const zones = config.requireObject<string[]>("zones");
const tenants = config.requireObject<string[]>("tenants");
const subnetTag = config.get("subnetTag") ?? "egress-ipam";
const hostTags = config.getObject<Record<string, string>>("hostTags") ?? {};
// Only for an EC2 endpoint other than the region's default (a VPC endpoint).
const ec2Endpoint = config.get("ec2Endpoint");

const pools: Record<string, IpPool> = {};
for (const zone of zones) {
  const subnet = aws.ec2.getSubnetOutput({
    filters: [
      { name: "tag-key", values: [subnetTag] },
      { name: "availability-zone", values: [zone] },
    ],
  });
  // cloudReserved: the five addresses AWS keeps in every subnet are never planned.
  pools[zone] = new IpPool(`egress-${zone}`, {
    ranges: [{ subnet: subnet.cidrBlock }],
    cloudReserved: "aws",
  });
}

const provisioner = {
  kind: "aws" as const,
  region,
  hostTags,
  ...(ec2Endpoint ? { endpoint: ec2Endpoint } : {}),
};
const egress = tenants.map(
  (namespace) => new EgressIp(namespace, { pool: pools, namespace, failureDomains: zones, provisioner }),
);

// The addresses to put in each tenant's firewall allow-lists, and the node carrying each.
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
export const egressHosts = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.hosts]));
