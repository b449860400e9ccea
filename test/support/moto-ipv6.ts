// IPv6 for a moto world: an Amazon-provided /56 on the VPC and a /64 of it on each subnet, as a
// dual-stack VPC on AWS has them; and the CNI config of a zone's dual-stack pool over its subnet.
import {
  AssociateSubnetCidrBlockCommand,
  AssociateVpcCidrBlockCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { formatPrefix, parsePrefix } from "../../provider/allocator/prefix";
import type { World } from "./moto";

/**
 * Associates an IPv6 block with the world's VPC and the i-th /64 of it with the subnet of the i-th
 * zone. Returns each zone's /64.
 */
export async function addIpv6Blocks(
  ec2: EC2Client,
  world: World,
  zones: string[],
): Promise<Record<string, string>> {
  const vpc = await ec2.send(
    new AssociateVpcCidrBlockCommand({ VpcId: world.vpcId, AmazonProvidedIpv6CidrBlock: true }),
  );
  const block = parsePrefix(vpc.Ipv6CidrBlockAssociation!.Ipv6CidrBlock!);
  const v6: Record<string, string> = {};
  for (const [i, zone] of zones.entries()) {
    v6[zone] = formatPrefix(6, block.network + (BigInt(i) << 64n), 64);
    await ec2.send(
      new AssociateSubnetCidrBlockCommand({ SubnetId: world.subnetIds[zone], Ipv6CidrBlock: v6[zone] }),
    );
  }
  return v6;
}

/** A CNI host-local config of two range sets: the subnet's IPv4 CIDR and its IPv6 /64 (JSON text, for `IpPool.cniConfig`). */
export const dualStackCniConfig = (v4: string, v6: string): string =>
  JSON.stringify({
    cniVersion: "1.0.0",
    ipam: { type: "host-local", ranges: [[{ subnet: v4 }], [{ subnet: v6 }]] },
  });

/** The address `suffix` (hex) of an IPv6 /64 given as `<prefix>::/64`. */
export const inSubnet6 = (subnet: string, suffix: string): string => `${subnet.split("::/")[0]}::${suffix}`;
