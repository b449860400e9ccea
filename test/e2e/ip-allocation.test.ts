import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

describe("IpPool and IpAllocation with the real engine", () => {
  const h = Harness.create("alloc");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (names: string[]) => async () => {
    const pool = new IpPool("pool", {
      ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.20" }],
    });
    const out: Record<string, unknown> = { size: pool.size };
    for (const name of names) out[name] = new IpAllocation(name, { pool }).ip;
    return out;
  };
  afterAll(() => h.dispose());

  it("shows the planned IPs at preview, and up assigns exactly those", async () => {
    await h.program(program(["a", "b", "c"]));
    const preview = await h.preview();
    const planned = ["a", "b", "c"].map((n) => preview.planned(n)?.ip);
    expect(planned).toEqual(["10.0.8.10", "10.0.8.11", "10.0.8.12"]);
    const up = await h.up();
    expect(["a", "b", "c"].map((n) => up.outputs[n]?.value)).toEqual(planned);
    expect(up.outputs.size?.value).toBe("11");
  });

  it("changes nothing on a second up", async () => {
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({});
  });

  it("does not hand a released IP out again at once (round-robin across deployments)", async () => {
    await h.program(program(["a", "c", "d"]));
    const preview = await h.preview();
    expect(preview.planned("d")?.ip).toBe("10.0.8.13");
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 1, delete: 1 });
    expect(up.outputs.d?.value).toBe("10.0.8.13");
  });

  it("refresh finds no drift in allocations and reports the pool's holders and free count", async () => {
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges)).toEqual({});
    const pool = (await h.resources()).find((r) => r.type.endsWith("IpPool"))!;
    expect(pool.outputs?.free).toBe("8");
    expect((pool.outputs?.allocations as { ip: string }[]).map((a) => a.ip)).toEqual([
      "10.0.8.10",
      "10.0.8.12",
      "10.0.8.13",
    ]);
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({});
  });

  it("pins type tokens, output names and IDs (public API) and stores a small provider", async () => {
    const resources = (await h.resources()).filter((r) => r.type.includes("egress-ipam"));
    const byType = Object.fromEntries(resources.map((r) => [r.type, r]));
    expect(Object.keys(byType).sort()).toEqual([
      "pulumi-nodejs:dynamic/egress-ipam:IpAllocation",
      "pulumi-nodejs:dynamic/egress-ipam:IpPool",
    ]);
    const alloc = resources.find((r) => r.urn.endsWith("::d"))!;
    expect(alloc.id).toBe("10.0.8.13");
    expect(alloc.outputs).toMatchObject({
      ip: "10.0.8.13",
      ips: ["10.0.8.13"],
      cidr: "10.0.8.13/24",
      gateway: "10.0.8.1",
      poolId: "urn:pulumi:test::alloc::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool",
      // The record: pool, owner and addresses are the resource's own poolId, owner and ips.
      owner: alloc.urn,
      seq: 4,
    });
    // Nothing stored twice or nested: not the pool's ranges, not a second copy of the record, not
    // the program's holder input (its queue is for check only).
    for (const props of [alloc.inputs, alloc.outputs]) {
      for (const key of ["pool", "allocation", "holder"]) expect(props).not.toHaveProperty(key);
    }
    const pool = byType["pulumi-nodejs:dynamic/egress-ipam:IpPool"]!;
    expect(pool.id).toBe("pool");
    expect(pool.outputs).toMatchObject({
      size: "11",
      rangeSets: [
        [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.20", gateway: "10.0.8.1" }],
      ],
    });
    // The provider in state is a require of the kind's shim module, stored twice per resource.
    const shims = { IpAllocation: "ip-allocation", IpPool: "ip-pool" } as Record<string, string>;
    for (const r of resources) {
      for (const props of [r.inputs, r.outputs]) {
        const provider = String(props?.__provider);
        const shim = shims[r.type.split(":").at(-1)!];
        expect(provider).toContain(`require("pulumi-egress-ipam/shims/${shim}")`);
        expect(provider.length).toBeLessThan(512);
      }
    }
  });

  it("destroys everything", async () => {
    const destroy = await h.destroy();
    expect(changesOf(destroy.summary.resourceChanges)).toEqual({ delete: 5 });
  });
});

describe("state written by earlier versions", () => {
  const h = Harness.create("earlier");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const names = ["a", "b", "c"];
  const program = async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.0.9.0/28" }] });
    return Object.fromEntries(names.map((n) => [n, new IpAllocation(n, { pool }).ip]));
  };
  // The provider text versions up to this one stored: six serialized functions that require
  // pulumi-egress-ipam/runtime, with the kind in their environment.
  const sixFunctions = fs.readFileSync(path.join(__dirname, "fixtures", "six-function-provider.txt"), "utf8");
  afterAll(() => h.dispose());

  it("keeps working: the six-function provider and the allocation: { seq } record", async () => {
    await h.program(program);
    const first = await h.up();
    const ips = names.map((n) => first.outputs[n]?.value);
    expect(ips).toEqual(["10.0.9.2", "10.0.9.3", "10.0.9.4"]);

    // Rewrite the checkpoint as the previous version left it (file backend, edited directly).
    const file = h.checkpointFile;
    const checkpoint = JSON.parse(fs.readFileSync(file, "utf8"));
    const resources = checkpoint.checkpoint.latest.resources as {
      type: string;
      inputs?: Record<string, unknown>;
      outputs?: Record<string, unknown>;
    }[];
    for (const r of resources.filter((r) => r.type.includes("egress-ipam"))) {
      const kind = r.type.split(":").at(-1)!;
      for (const props of [r.inputs!, r.outputs!]) {
        props.__provider = sixFunctions.replaceAll('"KIND"', JSON.stringify(kind));
        if (typeof props.seq === "number") {
          props.allocation = { seq: props.seq };
          delete props.seq;
        }
      }
    }
    fs.writeFileSync(file, JSON.stringify(checkpoint));
    const rewritten = await h.resources();
    expect(rewritten.find((r) => r.urn.endsWith("::b"))?.outputs).toMatchObject({ allocation: { seq: 2 } });

    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const preview = await h.preview();
    expect(names.map((n) => preview.op(n))).toEqual(["same", "same", "same"]);
    expect(names.map((n) => preview.planned(n)?.ip)).toEqual(ips);
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({});
    expect(names.map((n) => up.outputs[n]?.value)).toEqual(ips);

    // The next holder continues the round-robin after the earlier records.
    names.push("d");
    const more = await h.up();
    expect(changesOf(more.summary.resourceChanges)).toEqual({ create: 1 });
    expect(more.outputs.d?.value).toBe("10.0.9.5");
    // The stack, the pool and four allocations.
    expect(changesOf((await h.destroy()).summary.resourceChanges)).toEqual({ delete: 6 });
  });
});

describe("a name freed by a rename", () => {
  const h = Harness.create("freed-name");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  // `web` is renamed `web2` (with an alias, so it keeps its address); later the alias is dropped
  // and a new `web` is declared: a new resource, which plans an address of its own.
  const program = (allocations: [string, string[]][]) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.0.9.0/24", rangeStart: "10.0.9.10" }] });
    const out: Record<string, unknown> = {};
    for (const [name, aliases] of allocations) {
      out[name] = new IpAllocation(name, { pool }, { aliases: aliases.map((a) => ({ name: a })) }).ip;
    }
    return out;
  };
  afterAll(() => h.dispose());

  it("is a new holder: preview and up give it another address than the renamed one's", async () => {
    await h.program(program([["web", []]]));
    expect((await h.up()).outputs.web?.value).toBe("10.0.9.10");
    await h.program(program([["web2", ["web"]]]));
    const renamed = await h.up();
    expect(changesOf(renamed.summary.resourceChanges)).toEqual({});
    expect(renamed.outputs.web2?.value).toBe("10.0.9.10");

    await h.program(
      program([
        ["web2", []],
        ["web", []],
      ]),
    );
    const preview = await h.preview();
    expect(preview.op("web2")).toBe("same");
    expect(preview.planned("web")?.ip).toBe("10.0.9.11");
    const up = await h.up();
    expect(up.outputs.web2?.value).toBe("10.0.9.10");
    expect(up.outputs.web?.value).toBe("10.0.9.11");
  });
});

describe("an earlier holder whose observer is not known at preview", () => {
  const h = Harness.create("unknown-observer");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const pulumi = h.pkg<typeof import("@pulumi/pulumi")>("@pulumi/pulumi");
  afterAll(() => h.dispose());

  it("leaves a later automatic holder unknown at preview instead of showing an address up does not give", async () => {
    await h.program(async () => {
      const pool = new IpPool("pool", { ranges: [{ subnet: "10.0.10.0/24", rangeStart: "10.0.10.10" }] });
      // A provisioner config made from another resource's output: unknown at preview, known at up.
      const host = pulumi.runtime.isDryRun() ? pulumi.output(pulumi.unknown as unknown as string) : "h1";
      const observeWith = pulumi.output(host).apply((h) => ({ kind: "none" as const, hosts: { a: [h] } }));
      const first = new IpAllocation("first", { pool, observeWith });
      const fixed = new IpAllocation("fixed", { pool, ip: "10.0.10.12" });
      const second = new IpAllocation("second", { pool });
      return { first: first.ip, fixed: fixed.ip, second: second.ip };
    });
    const preview = await h.preview();
    expect(preview.planned("fixed")?.ip).toBe("10.0.10.12");
    expect(preview.planned("second")?.ip).toBeUndefined();
    const up = await h.up();
    expect([up.outputs.first?.value, up.outputs.second?.value]).toEqual(["10.0.10.10", "10.0.10.11"]);
    // Once the earlier holder holds its address, the later ones are exact at preview again.
    const again = await h.preview();
    expect(again.op("second")).toBe("same");
  });

  it("counts an earlier holder's requested address at preview whatever its observer", async () => {
    await h.program(async () => {
      const pool = new IpPool("pool2", { ranges: [{ subnet: "10.0.11.0/24", rangeStart: "10.0.11.10" }] });
      const host = pulumi.runtime.isDryRun() ? pulumi.output(pulumi.unknown as unknown as string) : "h1";
      const observeWith = pulumi.output(host).apply((h) => ({ kind: "none" as const, hosts: { a: [h] } }));
      const fixed = new IpAllocation("fixed2", { pool, ip: "10.0.11.10", observeWith });
      const later = new IpAllocation("later", { pool });
      return { fixed: fixed.ip, later: later.ip };
    });
    expect((await h.preview()).planned("later")?.ip).toBe("10.0.11.11");
    expect((await h.up()).outputs.later?.value).toBe("10.0.11.11");
  });
});
