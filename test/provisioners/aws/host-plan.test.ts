// The AWS host plan over a fixed inventory (a plain source, as EC2 would report it): eligible
// instances are those in the address's subnet with a free slot; the choice does not depend on
// the order addresses are planned in. End to end against moto: test/e2e/aws-host-choice.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Ec2Instance } from "../../../provider/provisioners/aws/ec2";
import { HostPlan, type HostPlanSource } from "../../../provider/provisioners/aws/host-plan";

const subnets: Record<string, string | string[]> = {
  "subnet-a": "10.0.1.0/24",
  "subnet-x": "10.0.4.0/24",
  "subnet-d": ["10.0.2.0/24", "2600:1f18:0:2::/64"],
};

/** An instance with its primary interface in `subnet`, carrying `secondaries` and `tags`. */
function instance(
  id: string,
  subnet: string,
  secondaries: string[] = [],
  type = "m5.large",
  tags: Record<string, string> = {},
): Ec2Instance {
  const v4 = [subnets[subnet]!].flat()[0]!;
  const primary = `${v4.split(".").slice(0, 3).join(".")}.${200 + Number(id.slice(-1))}`;
  return {
    id,
    state: "running",
    availabilityZone: "us-east-1a",
    instanceType: type,
    privateDnsName: "",
    interfaces: [
      {
        id: `eni-${id}`,
        subnetId: subnet,
        deviceIndex: 0,
        addresses: [{ ip: primary, primary: true }, ...secondaries.map((ip) => ({ ip, primary: false }))],
        tags,
      },
    ],
  };
}

/** `n` tags that are not this package's, as other tools and people put them on an interface. */
const otherTags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`team-${i}`, "x"]));

const source = (instances: Ec2Instance[]): HostPlanSource => ({
  eligible: async () => instances,
  subnetCidr: async (id) => subnets[id]!,
  // t3.nano here: the primary address alone fills an interface.
  ipsPerInterface: async (type) => ({ "t3.micro": 2, "t3.nano": 1 })[type] ?? 10,
  tagText: " tagged role=egress",
  region: "us-east-1",
  // DescribeInstances leaves interface tags out: the plan reads them apart, as EC2 would return them.
  interfaceTags: async (ids) =>
    new Map(
      instances
        .flatMap((i) => i.interfaces)
        .filter((n) => ids.includes(n.id))
        .map((n) => [n.id, Object.keys(n.tags ?? {})]),
    ),
});

describe("HostPlan", () => {
  it.each([
    [
      "the least loaded instance",
      [instance("i-1", "subnet-a", ["10.0.1.9"]), instance("i-2", "subnet-a")],
      "i-2",
    ],
    [
      "an instance of the address's subnet, though another is emptier",
      [instance("i-1", "subnet-a", ["10.0.1.9"]), instance("i-3", "subnet-x")],
      "i-1",
    ],
    [
      "an instance with a free slot, though a full one is emptier",
      [instance("i-1", "subnet-a", ["10.0.1.9"]), instance("i-2", "subnet-a", [], "t3.nano")],
      "i-1",
    ],
  ])("plans %s", async (_case, instances, want) => {
    expect(await new HostPlan(source(instances)).choose("10.0.1.10", "us-east-1a")).toBe(want);
  });

  it("refuses naming the zone, the address and why each instance cannot take it", async () => {
    const plan = new HostPlan(
      source([instance("i-3", "subnet-x"), instance("i-2", "subnet-a", ["10.0.1.8"], "t3.micro")]),
    );
    await expect(plan.choose("10.0.1.10", "us-east-1a")).rejects.toThrow(
      /no host in availability zone "us-east-1a" can take 10\.0\.1\.10: i-3 .*its interface eni-i-3 is in subnet-x \(10\.0\.4\.0\/24\); i-2 .*full \(t3\.micro: 2\/2\)/,
    );
  });

  it("counts the addresses it planned against a slot", async () => {
    const plan = new HostPlan(
      source([
        instance("i-1", "subnet-a", [], "t3.micro"),
        instance("i-2", "subnet-a", ["10.0.1.8", "10.0.1.9"]),
      ]),
    );
    expect(await plan.choose("10.0.1.10", "us-east-1a")).toBe("i-1");
    expect(await plan.choose("10.0.1.11", "us-east-1a")).toBe("i-2");
    plan.record("10.0.1.10", undefined); // taken off again: the slot is free
    expect(await plan.choose("10.0.1.12", "us-east-1a")).toBe("i-1");
  });

  // EC2 takes at most 50 tags on an interface, and each egress address puts one there (its owner
  // record, egress-ipam/<address>): before issue 54 a full interface passed preview and up failed
  // at CreateTags.
  it("passes over an instance whose interface has no room for another tag, though it is emptier", async () => {
    const plan = new HostPlan(
      source([
        instance("i-1", "subnet-a", [], "m5.large", otherTags(50)),
        instance("i-2", "subnet-a", ["10.0.1.9"]),
      ]),
    );
    expect(await plan.choose("10.0.1.10", "us-east-1a")).toBe("i-2");
  });

  it("counts the tags of the addresses it planned, of both families, and refuses naming the host and the count", async () => {
    const plan = new HostPlan(source([instance("i-1", "subnet-d", [], "m5.large", otherTags(47))]));
    for (const ip of ["10.0.2.10", "2600:1f18:0:2::10", "10.0.2.11"])
      expect(await plan.choose(ip, "us-east-1a")).toBe("i-1");
    const refusal = plan.choose("2600:1f18:0:2::11", "us-east-1a");
    await expect(refusal).rejects.toMatchObject({ code: "HOST_UNAVAILABLE" });
    await expect(refusal).rejects.toThrow(
      'no host in availability zone "us-east-1a" can take 2600:1f18:0:2::11: i-1 (us-east-1a): its interface ' +
        "eni-i-1 has 50/50 tags (EC2's limit; 3 of them egress-ipam/<address> records, one per egress address); " +
        "remove tags eni-i-1 does not need, or add a running instance",
    );
  });

  it("needs no new tag for an address whose record is on the interface already (a create retried)", async () => {
    const tags = { ...otherTags(49), "egress-ipam/10.0.1.10": "sha256:0" };
    const plan = new HostPlan(source([instance("i-1", "subnet-a", [], "m5.large", tags)]));
    expect(await plan.choose("10.0.1.10", "us-east-1a")).toBe("i-1");
    await expect(plan.choose("10.0.1.11", "us-east-1a")).rejects.toThrow(/eni-i-1 has 50\/50 tags/);
  });

  it("plans the same hosts whatever order the addresses come in", async () => {
    const instances = [
      instance("i-1", "subnet-a"),
      instance("i-2", "subnet-a"),
      instance("i-3", "subnet-a", ["10.0.1.9"]),
    ];
    const ips = Array.from({ length: 8 }, (_, i) => `10.0.1.${20 + i}`);
    const hostsIn = async (order: string[]) => {
      const plan = new HostPlan(source(instances));
      const out: Record<string, string> = {};
      for (const ip of order) out[ip] = await plan.choose(ip, "us-east-1a");
      return out;
    };
    const first = await hostsIn(ips);
    expect(new Set(Object.values(first)).size).toBeGreaterThan(1);
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(ips, { minLength: ips.length }), async (order) => {
        expect(await hostsIn(order)).toEqual(first);
      }),
      { numRuns: 50 },
    );
  });
});
