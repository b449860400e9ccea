// The way out of a refused placement of a taken address, from a checkpoint: a table over who holds
// the address (an EgressIp's allocation over zones or families, an IpAllocation of the program's
// own, nobody) and what the pool has left. Never "exclude it from the pool": that is refused while an
// allocation holds it. (That each edit is accepted is run end to end: egress-ip-owners.cluster,
// aws-taken-address.)
import { describe, expect, it } from "vitest";
import { IpamError } from "../../../provider/allocator";
import type { CheckpointResource } from "../../../provider/ledger/stack/stack-checkpoint";
import { takenAddress, takenAddressOf } from "../../../provider/provisioners/taken-address";
import { adviceFrom } from "../../../provider/resources/egress-ip/taken-address-advice";

const dynamic = (kind: string) => `pulumi-nodejs:dynamic/egress-ipam:${kind}`;
const stackUrn = "urn:pulumi:test::p::";
const egressUrn = `${stackUrn}egress-ipam:index:EgressIp::team`;
const pool = (id: string, spec: Record<string, unknown>): CheckpointResource => ({
  urn: `${stackUrn}${dynamic("IpPool")}::${id}`,
  type: dynamic("IpPool"),
  outputs: { poolId: id, ...spec },
});
const allocation = (name: string, ip: string, poolId: string, parent?: string): CheckpointResource => {
  const urn = `${stackUrn}${parent ? "egress-ipam:index:EgressIp$" : ""}${dynamic("IpAllocation")}::${name}`;
  return {
    urn,
    type: dynamic("IpAllocation"),
    ...(parent ? { parent } : {}),
    outputs: { ip, poolId, owner: urn, ips: [ip], seq: 1 },
  };
};
const egressIp = (ips?: string[]): CheckpointResource => ({
  urn: egressUrn,
  type: "egress-ipam:index:EgressIp",
  outputs: ips ? { ips } : {},
});
const dual = JSON.stringify({
  cniVersion: "1.0.0",
  ipam: { type: "host-local", ranges: [[{ subnet: "10.0.3.0/24" }], [{ subnet: "fd00:3::/64" }]] },
});

interface Case {
  name: string;
  resources: CheckpointResource[];
  ip: string;
  adoptable?: boolean;
  namespace?: string;
  inUse?: string[];
  want: string;
}

const cases: Case[] = [
  {
    name: "an EgressIp over two zones: its whole ips, the other zone's address as it is",
    resources: [
      pool("a", { ranges: [{ subnet: "10.0.1.0/24" }] }),
      pool("b", { ranges: [{ subnet: "10.0.2.0/24" }] }),
      egressIp(),
      allocation("team-za", "10.0.1.4", "a", egressUrn),
      allocation("team-zb", "10.0.2.4", "b", egressUrn),
    ],
    ip: "10.0.2.4",
    want:
      'excluding 10.0.2.4 from the pool is refused while IpAllocation team-zb holds it: give the EgressIp team ips: ["10.0.1.4", "10.0.2.5"] ' +
      "(one per failure domain, in the order of failureDomains: za, zb) and run pulumi up, and the allocation moves to 10.0.2.5, " +
      "which nothing holds or uses (10.0.2.4 can be excluded from the pool afterwards); or take 10.0.2.4 off there and run pulumi up again",
  },
  {
    name: "the order of failureDomains from the EgressIp's recorded ips",
    resources: [
      pool("a", { ranges: [{ subnet: "10.0.1.0/24" }] }),
      pool("b", { ranges: [{ subnet: "10.0.2.0/24" }] }),
      egressIp(["10.0.2.4", "10.0.1.4"]),
      allocation("team-za", "10.0.1.4", "a", egressUrn),
      allocation("team-zb", "10.0.2.4", "b", egressUrn),
    ],
    ip: "10.0.1.4",
    want: 'give the EgressIp team ips: ["10.0.2.4", "10.0.1.5"] (one per failure domain, in the order of failureDomains: zb, za)',
  },
  {
    name: 'families "dual": one per domain and family, IPv4 first, the spare of the taken one\'s family',
    resources: [
      pool("d", { cniConfig: dual }),
      egressIp(),
      allocation("team-za-ipv6", "fd00:3::4", "d", egressUrn),
      allocation("team-za", "10.0.3.4", "d", egressUrn),
    ],
    ip: "fd00:3::4",
    want: 'give the EgressIp team ips: ["10.0.3.4", "fd00:3::5"] (one per failure domain and family (IPv4 first), in the order of failureDomains: za)',
  },
  {
    name: "past excluded, held and used addresses",
    resources: [
      pool("a", { ranges: [{ subnet: "10.0.1.0/28" }], exclude: ["10.0.1.5"] }),
      egressIp(),
      allocation("team-za", "10.0.1.4", "a", egressUrn),
      allocation("web", "10.0.1.6", "a"),
    ],
    ip: "10.0.1.4",
    inUse: ["10.0.1.7"],
    want: 'give the EgressIp team ips: ["10.0.1.8"] and run pulumi up, and the allocation moves to 10.0.1.8',
  },
  {
    name: "already where it would go, with a namespace: adopt: true on the EgressIp too",
    resources: [
      pool("a", { ranges: [{ subnet: "10.0.1.0/24" }] }),
      egressIp(),
      allocation("team-za", "10.0.1.4", "a", egressUrn),
    ],
    ip: "10.0.1.4",
    adoptable: true,
    namespace: "team",
    want: "(10.0.1.4 can be excluded from the pool afterwards); or set adopt: true on the EgressIp team to take 10.0.1.4 over where it is; or take 10.0.1.4 off there",
  },
  {
    name: "an IpAllocation of the program's own: its ip",
    resources: [pool("a", { ranges: [{ subnet: "10.0.1.0/24" }] }), allocation("web", "10.0.1.4", "a")],
    ip: "10.0.1.4",
    adoptable: true,
    want: 'give IpAllocation web ip: "10.0.1.5" and run pulumi up, and the allocation moves to 10.0.1.5, which nothing holds or uses (10.0.1.4 can be excluded from the pool afterwards); or set adopt: true on the EgressIpAssignment to take 10.0.1.4 over where it is',
  },
  {
    name: "an address no allocation of the stack holds, already in place: adopt or free it",
    resources: [],
    ip: "10.0.1.4",
    adoptable: true,
    want: "set adopt: true on the EgressIpAssignment to take 10.0.1.4 over where it is; take 10.0.1.4 off there and run pulumi up again",
  },
  {
    name: "an address no allocation of the stack holds: free it",
    resources: [],
    ip: "10.0.1.4",
    want: "take 10.0.1.4 off there and run pulumi up again",
  },
  {
    name: "a full pool: widen it",
    resources: [
      pool("a", { ranges: [{ subnet: "10.0.1.0/30" }] }),
      egressIp(),
      allocation("team-za", "10.0.1.1", "a", egressUrn),
    ],
    ip: "10.0.1.1",
    inUse: ["10.0.1.2"],
    want: "excluding 10.0.1.1 from the pool is refused while IpAllocation team-za holds it, and its pool has no address that nothing holds or uses: widen the pool; or take 10.0.1.1 off there and run pulumi up again",
  },
];

describe("adviceFrom", () => {
  it.each(cases)("$name", async (c) => {
    const advice = await adviceFrom(
      c.resources,
      { namespace: c.namespace },
      { ip: c.ip, adoptable: c.adoptable ?? false },
      { inUse: async () => c.inUse ?? [], claims: async () => [] },
    );
    expect(advice).toContain(c.want);
    expect(advice).not.toMatch(/exclude (it|\S+) from the pool/);
  });
});

describe("takenAddressOf", () => {
  it("finds the refusal itself, or one a step that undid what came before wrapped as its cause", () => {
    const refused = takenAddress("10.0.1.4", "EgressIP x already has it", true);
    const wrapped = new IpamError("ADDRESS_IN_USE", "a step failed: …; undone", { cause: refused });
    expect(takenAddressOf(refused)).toEqual({ ip: "10.0.1.4", adoptable: true });
    expect(takenAddressOf(wrapped)).toEqual({ ip: "10.0.1.4", adoptable: true });
  });

  it("is undefined for any other error, and for one wrapped under another code", () => {
    const refused = takenAddress("10.0.1.4", "EgressIP x already has it");
    expect(takenAddressOf(new IpamError("ADDRESS_IN_USE", "no marker"))).toBeUndefined();
    expect(takenAddressOf(new IpamError("PROVISIONER_FAILED", "x", { cause: refused }))).toBeUndefined();
    expect(takenAddressOf(new Error("x"))).toBeUndefined();
  });
});
