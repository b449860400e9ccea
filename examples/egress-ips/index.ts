// Egress IPs for two tenant namespaces: one address per failure domain from a shared pool, each
// placed on a host. The `none` provisioner treats hosts as labels, so this runs anywhere. For EC2
// nodes use `{ kind: "aws", region: "us-east-1" }` and one pool per zone (a subnet lives in one
// zone): `pool: { "us-east-1a": poolA, "us-east-1b": poolB }` — see docs/provisioners.md#on-aws.
import { EgressIp, IpPool } from "pulumi-egress-ipam";

const pool = new IpPool("egress", {
  ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.200" }],
  cloudReserved: "aws",
});

const provisioner = {
  kind: "none" as const,
  hosts: { "us-east-1a": ["ip-10-0-8-5.ec2.internal"], "us-east-1b": ["ip-10-0-8-6.ec2.internal"] },
};
const failureDomains = ["us-east-1a", "us-east-1b"];

const teamA = new EgressIp("team-a", { pool, namespace: "team-a", failureDomains, provisioner });
const teamB = new EgressIp("team-b", { pool, namespace: "team-b", failureDomains, provisioner });

// What to put in the tenants' firewall allow-lists, and where each address lives.
export const teamAIps = teamA.ips;
export const teamAHosts = teamA.hosts;
export const teamBIps = teamB.ips;
