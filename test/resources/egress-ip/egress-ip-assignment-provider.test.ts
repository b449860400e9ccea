import { beforeEach, describe, expect, it, vi } from "vitest";
import type { EgressIPProvisioner } from "../../../provider/provisioners";
import { fakeProvisioner } from "../../support/fake-provisioners";
import { IpamError } from "../../../provider/core/ipam-error";
import { egressIpAssignmentProvider as provider } from "../../../provider/resources/egress-ip/egress-ip-assignment-provider";

vi.mock("../../../provider/provisioners/factory/create-provisioner", async (original) =>
  (await import("../../support/fake-provisioners")).withFakes(await original()),
);
// The stack's identity, without a `pulumi stack export` of a stack that does not exist here.
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));
// The stack's state, which has no other owner: every owner text is the plain `<identity> <URN>`.
vi.mock("../../../provider/ledger/stack/stack-ledger", async (original) => ({
  ...(await original<typeof import("../../../provider/ledger/stack/stack-ledger")>()),
  stackResources: async () => [],
}));

// A fault-injecting provisioner with observable hosts, in place of this process's "ovn".
const hosts = new Map<string, Set<string>>();
const calls: string[] = [];
let failNextAdd: Error | undefined;
let failNextCheck: Error | undefined;
let refusal: Error | undefined;
const fake: EgressIPProvisioner = {
  async conflicts() {
    if (refusal) throw refusal;
  },
  async findHostForNewIP(domain) {
    const candidates = [...hosts.keys()].filter((h) => h.startsWith(`${domain}/`));
    if (candidates.length === 0) throw new Error(`no host in failure domain "${domain}"`);
    return candidates.reduce((a, b) => (hosts.get(b)!.size < hosts.get(a)!.size ? b : a));
  },
  async addSpecifiedIP(ip, host) {
    calls.push(`add ${ip} ${host}`);
    const injected = failNextAdd;
    failNextAdd = undefined;
    if (injected) throw injected;
    hosts.get(host)!.add(ip);
  },
  async addRandomIP() {
    throw new Error("unused");
  },
  async removeIP(ip, host) {
    calls.push(`remove ${ip} ${host}`);
    hosts.get(host)?.delete(ip);
  },
  async moveIP(ip, from, to) {
    calls.push(`move ${ip} ${from} ${to}`);
    hosts.get(from)?.delete(ip);
    hosts.get(to)!.add(ip);
  },
  async checkIP(ip, host) {
    const injected = failNextCheck;
    failNextCheck = undefined;
    if (injected) throw injected;
    if (!hosts.get(host)?.has(ip)) throw new Error(`${ip} is not on ${host}`);
  },
  async assignCIDR() {},
  async hostServes(host, domain) {
    return hosts.has(host) && host.startsWith(`${domain}/`);
  },
};
fakeProvisioner("ovn", () => fake);

let n = 0;
const provisioner = () => ({ kind: "ovn" as const, context: `c${n++}` }); // fresh cached instance per test
const inputs = (over: Record<string, unknown> = {}) => ({
  stack: "org/p/s",
  owner: "urn:x",
  ip: "10.0.8.10",
  failureDomain: "zone-a",
  namespace: "team-a",
  provisioner: provisioner(),
  ...over,
});

beforeEach(() => {
  hosts.clear();
  for (const h of ["zone-a/n1", "zone-a/n2", "zone-b/n3"]) hosts.set(h, new Set());
  hosts.get("zone-a/n1")!.add("10.0.8.99");
  calls.length = 0;
  refusal = undefined;
});

describe("EgressIpAssignment provider", () => {
  it("plans the least-loaded host in the domain at check, or the pinned one, and keeps it later", async () => {
    const news = inputs();
    expect((await provider.check({}, news)).inputs.host).toBe("zone-a/n2");
    expect((await provider.check({}, { ...news, pinnedHost: "zone-a/n1" })).inputs.host).toBe("zone-a/n1");
    const olds = { ...news, host: "zone-a/n1" };
    expect((await provider.check(olds, news)).inputs.host).toBe("zone-a/n1");
  });

  it("plans another host when the kept one no longer serves the domain, but never moves a pinned one", async () => {
    const news = inputs();
    const olds = { ...news, host: "zone-a/gone" };
    expect((await provider.check(olds, news)).inputs.host).toBe("zone-a/n2");
    const pinned = { ...news, pinnedHost: "zone-a/gone" };
    expect((await provider.check(olds, pinned)).inputs.host).toBe("zone-a/gone");
  });

  it("reports a domain without hosts and credentials in the config as check failures", async () => {
    const { failures } = await provider.check({}, inputs({ failureDomain: "zone-z" }));
    expect(failures).toEqual([
      { property: "failureDomain", reason: 'no host in failure domain "zone-z"', code: "PROVISIONER_FAILED" },
    ]);
    const secret = await provider.check(
      {},
      inputs({ provisioner: { kind: "ovn", awsSecretAccessKey: "x" } }),
    );
    expect(secret.failures?.[0]).toMatchObject({ property: "provisioner.awsSecretAccessKey" });
    expect(secret.failures?.[0]?.reason).toMatch(/credential/);
  });

  it("refuses what the address cannot share before it chooses a host, so a full domain does not hide it", async () => {
    refusal = new IpamError("SCOPE_CONFLICT", "EgressIp x gives 10.0.8.10 to the Pods EgressIp y serves");
    const { failures } = await provider.check({}, inputs({ failureDomain: "zone-z" }));
    expect(failures).toHaveLength(1);
    expect(failures?.[0]).toMatchObject({ property: "provisioner", code: "SCOPE_CONFLICT" });
    expect(failures?.[0]?.reason).toContain("EgressIp y serves");
  });

  it.each([
    ["no answer", { cause: new TypeError("fetch failed") }],
    ["503", { cause: { code: 503, body: '{"reason":"ServiceUnavailable","message":"etcd"}' } }],
    ["403", { cause: { code: 403, body: '{"reason":"Forbidden","message":"nope"}' } }],
  ])("fails a refresh whose check got %s, instead of recording the address missing", async (_what, opts) => {
    const { inputs: checked } = await provider.check({}, inputs());
    const { id, outs } = await provider.create(checked);
    failNextCheck = new Error("reading NetNamespace team-a failed", opts);
    await expect(provider.read(id, outs)).rejects.toThrow("reading NetNamespace team-a failed");
    expect(await provider.read(id, outs)).toEqual({ id, props: outs });
  });

  it("places on create, finds drift on refresh, and the next update puts the address back", async () => {
    const { inputs: checked } = await provider.check({}, inputs());
    const { id, outs } = await provider.create(checked);
    expect(id).toBe("10.0.8.10");
    expect(hosts.get("zone-a/n2")!.has("10.0.8.10")).toBe(true);
    expect(await provider.read(id, outs)).toEqual({ id, props: outs });

    hosts.get("zone-a/n2")!.delete("10.0.8.10"); // removed behind our back
    const refreshed = await provider.read(id, outs);
    expect(refreshed.props).toMatchObject({ host: "", placement: { state: "missing", from: "zone-a/n2" } });
    expect(refreshed.inputs?.host).toBe("");

    const { inputs: replanned } = await provider.check(
      refreshed.inputs,
      inputs({ provisioner: checked.provisioner }),
    );
    const diff = await provider.diff(id, refreshed.props, replanned);
    expect(diff).toEqual({ changes: true, replaces: [] });
    await provider.update(id, refreshed.props, replanned);
    expect(hosts.get(replanned.host)!.has("10.0.8.10")).toBe(true);
  });

  it("moves on a host change, replaces on an address change, and removes on delete", async () => {
    const olds = { ...inputs(), host: "zone-a/n1", placement: { state: "assigned" } };
    hosts.get("zone-a/n1")!.add("10.0.8.10");
    const moved = { ...olds, host: "zone-a/n2" };
    expect(await provider.diff("10.0.8.10", olds, moved)).toEqual({ changes: true, replaces: [] });
    await provider.update("10.0.8.10", olds, moved);
    expect(calls).toEqual(["move 10.0.8.10 zone-a/n1 zone-a/n2"]);
    expect(await provider.diff("10.0.8.10", olds, { ...olds, ip: "10.0.8.11" })).toEqual({
      changes: true,
      replaces: ["ip"],
    });
    await provider.delete("10.0.8.10", moved);
    expect(hosts.get("zone-a/n2")!.has("10.0.8.10")).toBe(false);
  });

  it("fails create when placement fails, leaving nothing placed", async () => {
    const { inputs: checked } = await provider.check({}, inputs());
    failNextAdd = new Error("PrivateIpAddressLimitExceeded (injected)");
    await expect(provider.create(checked)).rejects.toThrow("PrivateIpAddressLimitExceeded");
    expect([...hosts.values()].some((ips) => ips.has("10.0.8.10"))).toBe(false);
  });
});

// Replacing a placement of the same address: the old one goes first only where both write to a
// common object; otherwise the new one is made first and the namespace is never without it.
describe("EgressIpAssignment provider: order of a replacement", () => {
  const at = (provisioner: Record<string, unknown>, namespace = "team-a") => ({
    ip: "10.0.8.2",
    host: "n1",
    namespace,
    provisioner,
  });
  const staticSdn = { kind: "ocp-static" };
  const staticAws = { kind: "ocp-static", cloud: { kind: "aws", region: "us-east-1" } };
  it.each([
    ["ocp-static → ovn", staticSdn, { kind: "ovn" }, false],
    ["ocp-dynamic → ovn", { kind: "ocp-dynamic" }, { kind: "ovn" }, false],
    ["none → ovn", { kind: "none" }, { kind: "ovn" }, false],
    [
      "ocp-static with cloud → ovn (CloudPrivateIPConfig moves the EC2 address)",
      staticAws,
      { kind: "ovn" },
      true,
    ],
    ["ocp-static → ocp-dynamic (both write the NetNamespace)", staticSdn, { kind: "ocp-dynamic" }, true],
    ["ovn with other settings", { kind: "ovn" }, { kind: "ovn", context: "other" }, true],
    ["aws → ocp-static with cloud", { kind: "aws", region: "us-east-1" }, staticAws, true],
  ])("%s", async (_what, from, to, deleteFirst) => {
    const result = await provider.diff("10.0.8.2", at(from), at(to));
    expect(result.replaces).toEqual(["provisioner"]);
    expect(Boolean(result.deleteBeforeReplace)).toBe(deleteFirst);
  });
});

// Every pair of configs that put the address on EC2 (aws; ocp-static and cilium with cloud: aws;
// ovn, whose CloudPrivateIPConfig does on a cloud): the new placement's create finds the address
// there under the same owner tag and does nothing, so the old one must go first. A config that
// leaves EC2 alone (cilium, ocp-static without cloud, antrea, none) shares nothing with aws.
describe("EgressIpAssignment provider: a replacement between configs that both place on EC2 deletes first", () => {
  const cloud = { kind: "aws", region: "us-east-1" };
  const onEc2: [string, Record<string, unknown>][] = [
    ["aws", { kind: "aws", region: "us-east-1" }],
    ["ocp-static with cloud", { kind: "ocp-static", cloud }],
    ["cilium with cloud", { kind: "cilium", cloud }],
    ["ovn", { kind: "ovn" }],
  ];
  const offEc2: [string, Record<string, unknown>][] = [
    ["cilium", { kind: "cilium" }],
    ["ocp-static", { kind: "ocp-static" }],
    ["antrea", { kind: "antrea" }],
    ["none", { kind: "none" }],
  ];
  const at = (provisioner: Record<string, unknown>) => ({
    ip: "10.0.8.2",
    host: "n1",
    namespace: "team-a",
    provisioner,
  });
  const pairs = onEc2.flatMap(([a, from]) =>
    onEc2.filter(([b]) => b !== a).map(([b, to]) => [`${a} → ${b}`, from, to, true] as const),
  );
  const apart = [
    ...offEc2.map(([b, to]) => [`aws → ${b}`, onEc2[0]![1], to, false] as const),
    ...offEc2.map(([b, from]) => [`${b} → aws`, from, onEc2[0]![1], false] as const),
  ];
  it.each([...pairs, ...apart])("%s", async (_what, from, to, deleteFirst) => {
    const result = await provider.diff("10.0.8.2", at(from), at(to));
    expect(result.replaces).toEqual(["provisioner"]);
    expect(Boolean(result.deleteBeforeReplace)).toBe(deleteFirst);
  });
});

// A change of aws's elasticIps is compared per address: only an assignment whose own Elastic IP
// changes is updated (its old one detached, its new one attached where the address stays); the
// others have no change, and none is ever replaced for it.
describe("EgressIpAssignment provider: an elasticIps change updates only the addresses whose Elastic IP changed", () => {
  const aws = (elasticIps?: unknown) => ({
    kind: "aws",
    region: "us-east-1",
    ...(elasticIps === undefined ? {} : { elasticIps }),
  });
  const at = (ip: string, elasticIps?: unknown) => ({
    ip,
    host: "i-1",
    namespace: "team-a",
    provisioner: aws(elasticIps),
  });
  const adoptA = { adopt: { "10.0.8.2": "eipalloc-0aaaaaaaa" } };
  it.each([
    ["none → allocate", undefined, "allocate", "10.0.8.2", true],
    ["allocate → none", "allocate", undefined, "10.0.8.2", true],
    [
      "allocate → adopt, for the adopted address",
      "allocate",
      { ...adoptA, allocate: true },
      "10.0.8.2",
      true,
    ],
    [
      "allocate → adopt another address with allocate: true",
      "allocate",
      { ...adoptA, allocate: true },
      "10.0.8.3",
      false,
    ],
    ["allocate → adopt another address without allocate", "allocate", adoptA, "10.0.8.3", true],
    ["adopt → another allocation", adoptA, { adopt: { "10.0.8.2": "eipalloc-0bbbbbbbb" } }, "10.0.8.2", true],
    [
      "an adopt entry added for another address",
      adoptA,
      { adopt: { ...adoptA.adopt, "10.0.8.3": "eipalloc-0cc0cc0cc" } },
      "10.0.8.2",
      false,
    ],
    ["none → allocate, for an IPv6 address (it gets none)", undefined, "allocate", "fd00::2", false],
  ])("%s", async (_what, from, to, ip, changes) => {
    const result = await provider.diff(ip, at(ip, from), at(ip, to));
    expect(result).toEqual({ changes, replaces: [] });
  });

  it("still replaces for a placement setting changed with it", async () => {
    const olds = at("10.0.8.2", "allocate");
    const endpoint = { ...olds, provisioner: { ...olds.provisioner, endpoint: "http://127.0.0.1:4566" } };
    expect(await provider.diff("10.0.8.2", olds, endpoint)).toMatchObject({
      changes: true,
      replaces: ["provisioner"],
    });
  });

  // Which hosts may carry the address is decided again at check: the host stays while it still
  // qualifies, and a move is an update (shown at preview), never a new placement.
  it.each([
    ["aws hostTags", { kind: "aws", region: "us-east-1" }, { hostTags: { role: "egress" } }],
    ["none hosts", { kind: "none", hosts: { za: ["a1"] } }, { hosts: { za: ["a1", "a2"] } }],
    ["ovn nodeSelector", { kind: "ovn" }, { nodeSelector: { egress: "yes" } }],
    ["ovn zoneLabel", { kind: "ovn" }, { zoneLabel: "zone" }],
    [
      "ocp-static cloud hostTags",
      { kind: "ocp-static", cloud: { kind: "aws", region: "us-east-1" } },
      { cloud: { kind: "aws", region: "us-east-1", hostTags: { a: "b" } } },
    ],
  ])("a change of %s is an update", async (_what, from, change) => {
    const olds = { ...at("10.0.8.2"), provisioner: from };
    const news = { ...olds, provisioner: { ...from, ...change } };
    expect(await provider.diff("10.0.8.2", olds, news)).toEqual({ changes: true, replaces: [] });
  });
});
