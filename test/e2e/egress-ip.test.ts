import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

describe("EgressIp with the none provisioner", () => {
  const h = Harness.create("egress");
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const provisioner = {
    kind: "none" as const,
    hosts: { "zone-a": ["node-a1"], "zone-b": ["node-b1", "node-b2"] },
  };
  const program = (domains: string[], host?: string) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.40.0.0/24" }] });
    const egress = new EgressIp("team-a", {
      pool,
      namespace: "team-a",
      failureDomains: domains,
      provisioner,
      host,
    });
    return { ips: egress.ips, hosts: egress.hosts };
  };
  afterAll(() => h.dispose());
  /** The zone-b host the first up did not choose: pinning it moves both addresses. */
  let other = "";

  it("shows one address per failure domain and its host at preview, then places them", async () => {
    await h.program(program(["zone-a", "zone-b"]));
    const preview = await h.preview();
    expect(preview.planned("team-a-zone-a")).toMatchObject({ ip: "10.40.0.2" });
    expect(preview.planned("team-a-zone-b")).toMatchObject({ ip: "10.40.0.3" });
    const up = await h.up();
    expect(up.outputs.ips?.value).toEqual(["10.40.0.2", "10.40.0.3"]);
    expect((up.outputs.hosts?.value as string[])[0]).toBe("node-a1");
    const b = (up.outputs.hosts?.value as string[])[1]!;
    expect(["node-b1", "node-b2"]).toContain(b);
    other = b === "node-b1" ? "node-b2" : "node-b1";
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    // Type tokens and output names are public API.
    const resources = await h.resources();
    const assignment = resources.find((r) => r.urn.endsWith("EgressIpAssignment::team-a-zone-a"))!;
    expect(assignment.type).toBe("pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment");
    expect(assignment.id).toBe("10.40.0.2");
    expect(assignment.outputs).toMatchObject({
      ip: "10.40.0.2",
      host: "node-a1",
      failureDomain: "zone-a",
      placement: { state: "assigned" },
    });
    expect(resources.some((r) => r.type === "egress-ipam:index:EgressIp")).toBe(true);
  });

  it("moves the addresses in place when the host is pinned, keeping the addresses", async () => {
    await h.program(program(["zone-a", "zone-b"], other));
    const preview = await h.preview();
    expect(preview.op("EgressIpAssignment::team-a-zone-a")).toBe("update");
    expect(preview.op("EgressIpAssignment::team-a-zone-b")).toBe("update");
    expect(preview.op("IpAllocation::team-a-zone-a")).toBe("same");
    const up = await h.up();
    expect(up.outputs.ips?.value).toEqual(["10.40.0.2", "10.40.0.3"]);
    expect(up.outputs.hosts?.value).toEqual([other, other]);
  });

  it("releases the address of a dropped failure domain, and destroy leaves nothing", async () => {
    await h.program(program(["zone-a"], other));
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ delete: 2 });
    expect(up.outputs.ips?.value).toEqual(["10.40.0.2"]);
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
  });
});
