import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { EgressIPProvisioner } from "../../../provider/provisioners";
import { fakeProvisioner } from "../../support/fake-provisioners";
import { ipAllocationProvider as provider } from "../../../provider/resources/ip-allocation/ip-allocation-provider";
import { encodeHolder, urnPrefix } from "../../../provider/resources/pool/pool-queue-codec";
import { QueueFileWriter, type QueueFileRef } from "../../../provider/resources/pool/pool-queue-file";
import { readRecord } from "../../../provider/ledger/stack/allocation-record";

vi.mock("../../../provider/provisioners/factory/create-provisioner", async (original) =>
  (await import("../../support/fake-provisioners")).withFakes(await original()),
);

const POOL = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool";
const owner = (name: string) =>
  `urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;

// The ledger reads the stack through the CLI named by PULUMI_EGRESS_IPAM_CLI: an empty stack here.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "alloc-provider-"));
// A stack with a file `<stack with / as _>.json` in that directory exports that file instead.
fs.writeFileSync(
  path.join(dir, "pulumi"),
  `#!/bin/sh\nf="${dir}/$(echo "$4" | tr / _).json"\n` +
    `if [ -f "$f" ]; then cat "$f"; else echo '{"version":3,"deployment":{"resources":[]}}'; fi\n`,
  { mode: 0o755 },
);
const withCheckpoint = (stack: string, deployment: unknown) =>
  fs.writeFileSync(
    path.join(dir, `${stack.replaceAll("/", "_")}.json`),
    JSON.stringify({ version: 3, deployment }),
  );
process.env.PULUMI_EGRESS_IPAM_CLI = path.join(dir, "pulumi");
afterAll(() => delete process.env.PULUMI_EGRESS_IPAM_CLI);

// A provisioner that sees addresses in use outside Pulumi, registered under "ovn" in this process.
const observing: Partial<EgressIPProvisioner> = { usedAddresses: async () => ["10.0.8.2", "10.0.8.3"] };
fakeProvisioner("ovn", () => observing as EgressIPProvisioner);

let n = 0;
/**
 * Inputs as the program sends them: `stack`, `owner` and `queue` go into the `holder` input, the
 * rest are the allocation's own inputs.
 */
const news = ({ stack, owner: who, queue, ...over }: Record<string, unknown> = {}) => ({
  holder: {
    stack: stack ?? `org/proj/alloc-${n++}`,
    owner: who ?? owner("web"),
    ...(queue ? { queue } : {}),
  },
  pool: { id: POOL, ranges: [{ subnet: "10.0.8.0/24" }] },
  ...over,
});

describe("IpAllocation provider: check", () => {
  it("plans the first free address and returns it with its details as inputs", async () => {
    const { inputs, failures } = await provider.check({}, news());
    expect(failures).toBeUndefined();
    expect(inputs).toMatchObject({
      ip: "10.0.8.2",
      ips: ["10.0.8.2"],
      cidr: "10.0.8.2/24",
      gateway: "10.0.8.1",
      poolId: POOL,
      owner: owner("web"),
      seq: 1,
    });
    expect(readRecord(inputs)).toEqual({ pool: POOL, owner: owner("web"), ips: ["10.0.8.2"], seq: 1 });
    // The program's holder input (stack, owner, queue) is not kept: stack and owner are plain values.
    expect(inputs.holder).toBeUndefined();
    expect(inputs.stack).toMatch(/^org\/proj\/alloc-/);
    // Of the pool, only its identity (poolId) is kept: not its ranges, in every holder.
    expect(inputs.pool).toBeUndefined();
  });

  it("reads the whole record earlier versions stored in allocation, and keeps its address", async () => {
    const olds = {
      stack: "org/proj/earlier",
      owner: owner("web"),
      ip: "10.0.8.7",
      ips: ["10.0.8.7"],
      poolId: POOL,
      allocation: { pool: POOL, owner: owner("web"), ips: ["10.0.8.7"], seq: 4 },
    };
    expect(readRecord(olds)).toEqual({ pool: POOL, owner: owner("web"), ips: ["10.0.8.7"], seq: 4 });
    const again = await provider.check(olds, news());
    expect(again.inputs).toMatchObject({ ip: "10.0.8.7", seq: 4 });
    expect(again.inputs).not.toHaveProperty("allocation");
  });

  it("keeps the previous address on a later check", async () => {
    const first = (await provider.check({}, news())).inputs;
    const again = await provider.check(first, news({ owner: first.owner }));
    expect(again.inputs.ip).toBe(first.ip);
    expect(again.inputs.seq).toBe(first.seq);
  });

  it.each([
    ["an address outside the pool", { ip: "10.0.9.1" }, "ip", /10\.0\.9\.1/, "NOT_IN_RANGE"],
    ["the gateway", { ip: "10.0.8.1" }, "ip", /10\.0\.8\.1/, "IP_UNAVAILABLE"],
    ["garbage", { ip: "10.0.8" }, "ip", /10\.0\.8/, "INVALID_ADDRESS"],
    ["adopt without an address", { adopt: true }, "adopt", /set ip/, "INVALID_INPUT"],
  ])("refuses %s, naming it", async (_what, over, property, reason, code) => {
    const { failures } = await provider.check({}, news(over));
    expect(failures).toEqual([{ property, reason: expect.stringMatching(reason), code }]);
  });

  it("never plans addresses the provisioner sees in use, and refuses requesting one unless adopted", async () => {
    const observed = { observeWith: { kind: "ovn" } };
    expect((await provider.check({}, news(observed))).inputs.ip).toBe("10.0.8.4");
    const { failures } = await provider.check({}, news({ ...observed, ip: "10.0.8.3" }));
    expect(failures?.[0]).toMatchObject({ property: "ip", reason: expect.stringMatching(/10\.0\.8\.3/) });
    expect((await provider.check({}, news({ ...observed, ip: "10.0.8.3", adopt: true }))).inputs.ip).toBe(
      "10.0.8.3",
    );
  });

  it("gives one address per family from a dual-stack pool", async () => {
    const cniConfig = JSON.stringify({
      cniVersion: "1.0.0",
      name: "net",
      ipam: { type: "host-local", ranges: [[{ subnet: "10.1.0.0/24" }], [{ subnet: "2001:db8:1::/64" }]] },
    });
    const { inputs } = await provider.check({}, news({ pool: { id: POOL, cniConfig } }));
    expect(inputs.ips).toEqual(["10.1.0.2", "2001:db8:1::2"]);
  });

  it("leaves the address unplanned while the pool is not known yet (preview of a dependent pool)", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const { inputs } = await provider.check({}, news({ pool: { id: POOL, ranges: unknown } }));
    expect(inputs.ip).toBeUndefined();
  });

  it("leaves the address unplanned while its family is not known yet, refusing nothing (preview)", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const { inputs, failures } = await provider.check({}, news({ family: unknown }));
    expect([inputs.ip, failures ?? []]).toEqual([undefined, []]);
  });
});

describe("IpAllocation provider: checks in any order plan in program order", () => {
  // Holders a..f of one pool as the program created them: b requests an address, d's requested
  // address comes from another resource (not known to the others), e sees addresses in use.
  const names = ["a", "b", "c", "d", "e", "f"];
  const queued = [
    { owner: owner("a") },
    { owner: owner("b"), ip: "10.0.8.4" },
    { owner: owner("c") },
    { owner: owner("d"), ip: null },
    { owner: owner("e"), observer: 0 },
    { owner: owner("f") },
  ];
  const own: Record<string, Record<string, unknown>> = {
    b: { ip: "10.0.8.4" },
    d: { ip: "10.0.8.40" },
    e: { observeWith: { kind: "ovn" } },
  };
  const lines = queued.map((h, k, all) => encodeHolder(h, urnPrefix(h.owner), all[k - 1]?.owner));
  /** The queue of each holder as a program sends it: every line so far (inline), or its place in a file. */
  const queuesIn = (form: "inline" | "file") => {
    if (form === "inline") {
      return lines.map((_, i) => ({
        observers: [{ kind: "ovn" }],
        holders: lines.slice(0, i + 1).join("\n"),
      }));
    }
    // A program appends every line before the checks of later holders arrive; a new file per run.
    const writer = new QueueFileWriter();
    return lines.map((line) => ({ observers: [{ kind: "ovn" }], ...writer.append(line) }));
  };

  async function planIn(
    order: number[],
    deployment?: unknown,
    form: "inline" | "file" = "inline",
  ): Promise<Record<string, unknown>> {
    const stack = `org/proj/order-${n++}`;
    if (deployment) withCheckpoint(stack, deployment);
    const queues = queuesIn(form);
    const planned: Record<string, unknown> = {};
    for (const i of order) {
      const name = names[i]!;
      const checked = await provider.check(
        {},
        { ...news({ stack, owner: owner(name), queue: queues[i] }), ...own[name] },
      );
      expect(checked.failures).toBeUndefined();
      expect(checked.inputs).not.toHaveProperty("holder");
      planned[name] = checked.inputs.ip;
    }
    return planned;
  }

  // Round-robin: requested addresses do not move the cursor. The observer sees .2 and .3 in use.
  const programOrder = {
    a: "10.0.8.2",
    b: "10.0.8.4",
    c: "10.0.8.3",
    d: "10.0.8.40",
    e: "10.0.8.5",
    f: "10.0.8.6",
  };

  const orders = [
    [0, 1, 2, 3, 4, 5],
    [5, 4, 3, 2, 1, 0],
    [3, 5, 0, 4, 2, 1],
    [4, 1, 5, 2, 0, 3],
  ];
  it.each((["inline", "file"] as const).flatMap((form) => orders.map((order) => [form, order] as const)))(
    "with the queue %s, in the order %j",
    async (form, order) => {
      expect(await planIn(order, undefined, form)).toEqual(programOrder);
    },
  );

  // c's create was interrupted in an earlier deployment: its checked inputs, with .9 planned, are
  // in pending_operations. c takes .9 back, in whatever order the checks come.
  const interrupted = {
    resources: [],
    pending_operations: [
      {
        type: "creating",
        resource: {
          urn: owner("c"),
          type: "pulumi-nodejs:dynamic/egress-ipam:IpAllocation",
          inputs: { allocation: { pool: POOL, owner: owner("c"), ips: ["10.0.8.9"], seq: 1 } },
        },
      },
    ],
  };
  it.each(
    (["inline", "file"] as const).flatMap((form) =>
      [
        [0, 1, 2, 3, 4, 5],
        [5, 4, 3, 2, 1, 0],
        [2, 5, 0, 4, 1, 3],
      ].map((order) => [form, order] as const),
    ),
  )(
    "with an interrupted create taking its address back, the queue %s, in the order %j",
    async (form, order) => {
      // The cursor is .9 (c's record): the others continue after it.
      expect(await planIn(order, interrupted, form)).toEqual({
        a: "10.0.8.10",
        b: "10.0.8.4",
        c: "10.0.8.9",
        d: "10.0.8.40",
        e: "10.0.8.11",
        f: "10.0.8.12",
      });
    },
  );

  it("leaves a later automatic holder unplanned while an earlier one's observer is not known yet (preview), as that holder's own check does", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const stack = `org/proj/order-${n++}`;
    const holders = [{ owner: owner("x"), observer: 0 }, { owner: owner("y") }]
      .map((h, k, all) => encodeHolder(h, urnPrefix(h.owner), all[k - 1]?.owner))
      .join("\n");
    const x = await provider.check(
      {},
      news({ stack, owner: owner("x"), observeWith: { kind: "aws", region: unknown } }),
    );
    expect(x.inputs.ip).toBeUndefined();
    const y = await provider.check(
      {},
      news({
        stack,
        owner: owner("y"),
        queue: { observers: [{ kind: "aws", region: unknown }], holders },
      }),
    );
    expect(y.failures).toBeUndefined();
    // Not 10.0.8.2: up plans x first, which takes it.
    expect(y.inputs.ip).toBeUndefined();
  });

  // The queue file is the program's side channel: one the provider cannot read as the input says
  // fails the check, naming the file and the way out, and plans nothing.
  it.each<[string, (ref: QueueFileRef) => QueueFileRef, RegExp]>([
    [
      "a file that is gone",
      (ref) => ({ ...ref, file: `${ref.file}.gone` }),
      /queue .*\.gone, written by the program, .*ENOENT.*one machine as one user.*EGRESS_IPAM_POOL_QUEUE=inline/,
    ],
    [
      "a file shorter than the input says",
      (ref) => ({ ...ref, lines: ref.lines + 1, bytes: ref.bytes + 20 }),
      /has \d+ bytes where the program wrote \d+/,
    ],
    [
      "a line naming another holder",
      (ref) => ({ ...ref, lines: 1, bytes: Buffer.byteLength(`${lines[0]}\n`) }),
      /names .*IpAllocation::a at line 1 where .*IpAllocation::b was written/,
    ],
  ])("refuses %s", async (_, change, message) => {
    const writer = new QueueFileWriter();
    const refs = lines.slice(0, 2).map((line) => writer.append(line));
    const stack = `org/proj/order-${n++}`;
    const b = await provider.check(
      {},
      {
        ...news({ stack, owner: owner("b"), queue: { observers: [], ...change(refs[1]!) } }),
        ip: "10.0.8.4",
      },
    );
    expect(b.failures).toEqual([
      { property: "pool", reason: expect.stringMatching(message), code: "INVALID_STATE" },
    ]);
    expect(b.inputs.ip).toBe("10.0.8.4");
    expect(b.inputs.seq).toBeUndefined();
  });

  it("treats an observeWith that resolved to nothing as none", async () => {
    const holders = encodeHolder({ owner: owner("z"), observer: 0 }, urnPrefix(owner("z")));
    const z = await provider.check(
      {},
      news({ owner: owner("z"), observeWith: null, queue: { observers: [null], holders } }),
    );
    expect(z.failures).toBeUndefined();
    expect(z.inputs.ip).toBe("10.0.8.2");
  });

  it("refuses an ip that came from an output and resolved to nothing, saying what to do", async () => {
    const holders = encodeHolder({ owner: owner("w"), ip: null }, urnPrefix(owner("w")));
    const w = await provider.check({}, news({ owner: owner("w"), queue: { observers: [], holders } }));
    expect(w.failures).toEqual([
      {
        property: "ip",
        reason: expect.stringMatching(/resolved to nothing.*plain string/),
        code: "INVALID_INPUT",
      },
    ]);
  });
});

describe("IpAllocation provider: diff", () => {
  const olds = { poolId: POOL, ips: ["10.0.8.2"], adopt: false };
  it.each([
    ["nothing changed", olds, { changes: false, replaces: [] }],
    ["another pool", { ...olds, poolId: "urn:other" }, { changes: true, replaces: ["pool"] }],
    ["another address", { ...olds, ips: ["10.0.8.9"] }, { changes: true, replaces: ["ip"] }],
    ["adopt turned on", { ...olds, adopt: true }, { changes: true, replaces: [] }],
    ["not planned yet", { ips: undefined }, { changes: true, replaces: [] }],
  ])("%s", async (_what, next, expected) => {
    expect(await provider.diff("10.0.8.2", olds, next)).toEqual(expected);
  });
});
