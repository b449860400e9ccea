// VPC address plans: every environment gets a /16 carved from a /8, and every availability zone a
// /24 subnet carved from its environment's /16. `pulumi preview` shows every CIDR before anything
// exists; they never overlap, and adding an environment or a zone moves none of them.
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { IpPool, PrefixAllocation } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const environments = config.requireObject<string[]>("environments");
const zones = config.requireObject<string[]>("zones");

// The pool's rule: every block of it is a /16 (a length outside the rule is refused at preview).
const space = new IpPool("vpc-space", {
  ranges: [{ subnet: config.get("supernet") ?? "10.0.0.0/8" }],
  prefixLengths: { min: 16, max: 16, default: 16 },
});

// The CIDRs by environment, and by environment and zone: what the VPCs and subnets get.
export const vpcCidrs: Record<string, pulumi.Output<string>> = {};
export const subnetCidrs: Record<string, Record<string, pulumi.Output<string>>> = {};
for (const env of environments) {
  const block = new PrefixAllocation(env, { pool: space });
  const vpc = new aws.ec2.Vpc(env, { cidrBlock: block.cidr, tags: { Name: env } });
  // A child pool over the environment's /16, planned at preview from the /16 planned above.
  const subnets = new IpPool(`${env}-subnets`, {
    ranges: [{ subnet: block.cidr }],
    prefixLengths: { min: 24, max: 28, default: 24 },
  });
  const cidrs: Record<string, pulumi.Output<string>> = {};
  for (const zone of zones) {
    const subnet = new PrefixAllocation(`${env}-${zone}`, { pool: subnets });
    new aws.ec2.Subnet(`${env}-${zone}`, {
      vpcId: vpc.id,
      cidrBlock: subnet.cidr,
      availabilityZone: zone,
      tags: { Name: `${env}-${zone}` },
    });
    cidrs[zone] = subnet.cidr;
  }
  vpcCidrs[env] = block.cidr;
  subnetCidrs[env] = cidrs;
}
