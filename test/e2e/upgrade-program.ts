// An IPv4 stack as users have it: pools, allocations, a block, an EgressIp over two zones (none).
type Pkg = typeof import("../../provider/index");

export const upgradeProgram = (pkg: Pkg) => async () => {
  const { IpPool, IpAllocation, PrefixAllocation, EgressIp } = pkg;
  const pool = new IpPool("egress", {
    ranges: [{ subnet: "10.7.0.0/24", rangeStart: "10.7.0.10" }],
    exclude: ["10.7.0.64/28"],
    reserved: ["10.7.0.50"],
  });
  const web = new IpAllocation("web", { pool });
  const fixed = new IpAllocation("fixed", { pool, ip: "10.7.0.50" });
  const vpcs = new IpPool("vpcs", {
    ranges: [{ subnet: "10.64.0.0/12" }],
    prefixLengths: { min: 16, max: 24, default: 16 },
    strategy: "lowest-free",
  });
  const prod = new PrefixAllocation("prod", { pool: vpcs });
  const team = new EgressIp("team-a", {
    pool,
    namespace: "team-a",
    failureDomains: ["zone-a", "zone-b"],
    provisioner: { kind: "none", hosts: { "zone-a": ["node-1", "node-2"], "zone-b": ["node-3"] } },
  });
  return { web: web.ip, fixed: fixed.ip, prod: prod.cidr, ips: team.ips, hosts: team.hosts };
};
