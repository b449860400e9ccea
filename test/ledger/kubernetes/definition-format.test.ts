// The format of a shared pool's definition: which formats this version acts under, and what it takes
// for a rewrite by a version from before formats (the end-to-end cases are in
// test/e2e/shared-pool-format.cluster.test.ts).
import { describe, expect, it } from "vitest";
import { definitionFormat, droppedBy, formatOf } from "../../../provider/ledger/kubernetes/definition-format";
import { FakeConfigMaps } from "./fake-configmaps";

const written = { definition: "{}", stack: "org/net/prod", owner: "urn:pulumi:prod::net::IpPool::egress" };
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
};

describe("formatOf", () => {
  it.each([
    [{}, 0],
    [{ format: "1" }, 1],
  ])("%j is format %i", (extra, format) => {
    expect(formatOf("egress", "ipam", { ...written, ...extra })).toBe(format);
  });

  it.each(["2", "17", "01", "1.0", "", "one"])(
    "refuses format %j, naming the pool and the writer",
    (format) => {
      expect(codeOf(() => formatOf("egress", "ipam", { ...written, format }))).toBe("VERSION_MISMATCH");
      expect(() => formatOf("egress", "ipam", { ...written, format })).toThrow(
        new RegExp(
          `pool "egress".*stack org/net/prod.*knows format ${definitionFormat}.*upgrade pulumi-egress-ipam`,
        ),
      );
    },
  );
});

describe("droppedBy", () => {
  const pool = (roles: string[]) => {
    const fake = new FakeConfigMaps(0);
    for (const [i, role] of roles.entries()) {
      fake.objects.set(`egress.x${i}`, {
        metadata: {
          name: `egress.x${i}`,
          resourceVersion: "1",
          labels: { "egress-ipam/pool": "egress", "egress-ipam/role": role },
        },
        data: {},
      });
    }
    return { clients: fake.clients(), namespace: "ipam", pool: "egress" };
  };
  const markers = { markers: "26-28", markersReady: "26-28" };
  const quotas = { quotas: '{"default":2}' };

  it.each([
    ["with format: nothing, whatever the pool has", { format: "1" }, ["marker", "quota"], []],
    ["without format, with markers and quotas", { ...markers, ...quotas }, ["marker", "quota"], []],
    ["without format, of a pool with neither markers nor counters", {}, ["claim"], []],
    ["without markers beside marker objects", { ...quotas }, ["marker", "quota"], ["markers"]],
    ["without quotas beside quota counters", { ...markers }, ["marker", "quota"], ["quotas"]],
    ["without either beside both", {}, ["claim", "marker", "quota"], ["markers", "quotas"]],
  ])("a definition %s", async (_what, extra, roles, dropped) => {
    expect(await droppedBy({ ...pool(roles), data: { ...written, ...extra } })).toEqual(dropped);
  });

  it("refuses a newer format before it lists anything", async () => {
    await expect(droppedBy({ ...pool(["marker"]), data: { ...written, format: "2" } })).rejects.toMatchObject(
      {
        code: "VERSION_MISMATCH",
      },
    );
  });
});
