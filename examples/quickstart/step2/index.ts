// Quickstart, step 2: the pool grows by a second range (an in-place update) and a fourth team gets
// an address. The existing allocations keep theirs; preview shows the new one before `up`.
import { IpAllocation, IpPool } from "pulumi-egress-ipam";

const pool = new IpPool("egress", {
  ranges: [
    { subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.99" },
    { subnet: "10.0.9.0/24", rangeStart: "10.0.9.10", rangeEnd: "10.0.9.99" },
  ],
  exclude: ["10.0.8.13"],
});

const gateway = new IpAllocation("nat-gateway", { pool, ip: "10.0.8.50" });
const teams = ["team-a", "team-b", "team-c", "team-d"].map((team) => new IpAllocation(team, { pool }));

export const poolSize = pool.size;
export const natGateway = gateway.cidr;
export const teamIps = teams.map((t) => t.ip);
