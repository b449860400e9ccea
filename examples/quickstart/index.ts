// Quickstart: a pool and a handful of allocations. `pulumi preview` shows each address before
// anything is created; `pulumi up` assigns exactly those; a second `up` changes nothing.
import { IpAllocation, IpPool } from "pulumi-egress-ipam";

const pool = new IpPool("egress", {
  ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.99" }],
  exclude: ["10.0.8.13"],
});

// A fixed address for the firewall allow-list, and three planned by the pool (round-robin).
const gateway = new IpAllocation("nat-gateway", { pool, ip: "10.0.8.50" });
const teams = ["team-a", "team-b", "team-c"].map((team) => new IpAllocation(team, { pool }));

export const poolSize = pool.size;
export const natGateway = gateway.cidr;
export const teamIps = teams.map((t) => t.ip);
