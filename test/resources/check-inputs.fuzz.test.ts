// Every input of every resource's `check` (the code `pulumi preview` runs) given arbitrary JSON,
// as stack config, Pulumi YAML or another resource's output can give it: `check` never throws,
// every failure names a property and stays short whatever was given, and valid inputs still pass.
// Provisioners here are `none` or a config refused before any call (a real kind with a bad setting).
import * as fc from "fast-check";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { ProviderImpl } from "../../provider/resources/provider-props";
import { ipPoolProvider } from "../../provider/resources/ip-pool/ip-pool-provider";
import { ipAllocationProvider } from "../../provider/resources/ip-allocation/ip-allocation-provider";
import { egressIpAssignmentProvider } from "../../provider/resources/egress-ip/egress-ip-assignment-provider";
import { cidrAssignmentProvider } from "../../provider/resources/cidr-assignment/cidr-assignment-provider";

// The stack's identity, without a `pulumi stack export` of a stack that does not exist here.
vi.mock("../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));
// The stack ledger reads the stack through the CLI named by PULUMI_EGRESS_IPAM_CLI: an empty stack.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "check-fuzz-"));
fs.writeFileSync(
  path.join(dir, "pulumi"),
  `#!/bin/sh\necho '{"version":3,"deployment":{"resources":[]}}'\n`,
  {
    mode: 0o755,
  },
);
process.env.PULUMI_EGRESS_IPAM_CLI = path.join(dir, "pulumi");
// No cluster here: a Kubernetes kind's config must be refused before it is used.
process.env.KUBECONFIG = path.join(dir, "no-kubeconfig");
afterAll(() => {
  delete process.env.PULUMI_EGRESS_IPAM_CLI;
  fs.rmSync(dir, { recursive: true, force: true });
});

const stack = "o/p/dev";
const urn = (type: string, name: string) =>
  `urn:pulumi:dev::p::pulumi-nodejs:dynamic/egress-ipam:${type}::${name}`;
const pool = { ranges: [{ subnet: "10.9.0.0/24", gateway: "10.9.0.1" }], exclude: ["10.9.0.16/30"] };
const poolRef = { ...pool, id: urn("IpPool", "pool") };

/** One resource's check, with valid inputs and the names of the inputs a user gives. */
interface Subject {
  name: string;
  provider: ProviderImpl;
  valid: Record<string, unknown>;
  /** Inputs (paths into `valid`, dot-separated) that take arbitrary JSON. */
  inputs: string[];
}

// Provisioner configs of every kind. Those of kinds that would call a cloud or a cluster are
// refused before any call: a credential-like setting (aws), no kubeconfig here (Kubernetes kinds).
const provisioners = [
  { kind: "none", hosts: { a: ["h1", "h2"] } },
  { kind: "aws", region: "us-east-1", hostTags: { role: "egress" }, secretKey: "refused" },
  { kind: "ocp-static", nodeSelector: { worker: "" }, cloud: { kind: "aws", region: "us-east-1" } },
  { kind: "ocp-dynamic", zoneLabel: "topology.kubernetes.io/zone" },
  { kind: "ovn", context: "admin@nowhere", cluster: "ca sha256:0123456789abcdef" },
];
const settings = [
  "kind",
  "region",
  "endpoint",
  "hostTags",
  "hosts",
  "context",
  "cluster",
  "nodeSelector",
  "zoneLabel",
  "cloud",
  "cloud.region",
];

const base = {
  IpPool: { ...pool, reserved: ["10.9.0.5"], strategy: "lowest-free", stack, poolId: urn("IpPool", "pool") },
  IpAllocation: {
    holder: { stack, owner: urn("IpAllocation", "a") },
    pool: poolRef,
    ip: "10.9.0.9",
    adopt: false,
  },
  EgressIpAssignment: {
    ip: "10.9.0.9",
    failureDomain: "a",
    namespace: "team-a",
    adopt: false,
    stack,
    owner: urn("EgressIpAssignment", "e"),
  },
  CidrAssignment: { pool: poolRef, requestedHosts: ["h1"], stack, owner: urn("CidrAssignment", "c") },
};
const poolInputs = [
  "ranges",
  "ranges.0",
  "ranges.0.subnet",
  "ranges.0.rangeStart",
  "ranges.0.gateway",
  "cniConfig",
  "exclude",
  "exclude.0",
  "reserved",
  "strategy",
  "cloudReserved",
  "network",
  "static",
  "ledger",
  "ledger.name",
  "ledger.namespace",
  "ledger.lockDuration",
  "ledger.cluster",
];

const subjects: Subject[] = [
  { name: "IpPool", provider: ipPoolProvider, valid: base.IpPool, inputs: poolInputs },
  ...provisioners.flatMap((p): Subject[] => [
    {
      name: `IpAllocation (observeWith ${p.kind})`,
      provider: ipAllocationProvider,
      valid: { ...base.IpAllocation, observeWith: p },
      inputs: [
        "ip",
        "adopt",
        "nodeId",
        "observeWith",
        ...settings.map((k) => `observeWith.${k}`),
        ...poolInputs.map((k) => `pool.${k}`),
      ],
    },
    {
      name: `EgressIpAssignment (${p.kind})`,
      provider: egressIpAssignmentProvider,
      valid: { ...base.EgressIpAssignment, provisioner: p },
      inputs: [
        "ip",
        "failureDomain",
        "pinnedHost",
        "namespace",
        "adopt",
        "provisioner",
        ...settings.map((k) => `provisioner.${k}`),
      ],
    },
    {
      name: `CidrAssignment (${p.kind})`,
      provider: cidrAssignmentProvider,
      valid: { ...base.CidrAssignment, provisioner: p },
      inputs: [
        "requestedHosts",
        "requestedHosts.0",
        "failureDomain",
        "provisioner",
        ...settings.map((k) => `provisioner.${k}`),
        "pool.ranges",
        "pool.exclude",
      ],
    },
  ]),
];
const runs = 400;

/** `valid` with the value at `at` (dot-separated) set to `value`. */
function withValue(valid: Record<string, unknown>, at: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(valid);
  const keys = at.split(".");
  let o: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== "object") o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys.at(-1)!] = value;
  return copy;
}

// Arbitrary JSON, with long strings and the values users get wrong most often weighted in.
const anyValue = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("x".repeat(100_000), "\u001b[31mred\u001b[0m\n", "", "10.9.0.0/24"),
  },
  { weight: 1, arbitrary: fc.constantFrom({}, [], [[]], [{}], null, 0, -1, 1e300, true) },
);
const limit = 600;
const crash =
  /TypeError|ReferenceError|RangeError|is not a function|is not iterable|Cannot read prop|Cannot convert|\[object Object\]/;

it.each([
  ["IpPool", ipPoolProvider, base.IpPool],
  ["IpAllocation", ipAllocationProvider, { ...base.IpAllocation, observeWith: provisioners[0] }],
  [
    "EgressIpAssignment",
    egressIpAssignmentProvider,
    { ...base.EgressIpAssignment, provisioner: provisioners[0] },
  ],
  ["CidrAssignment", cidrAssignmentProvider, { ...base.CidrAssignment, provisioner: provisioners[0] }],
] as const)("%s: valid inputs pass", async (_name, provider, valid) => {
  const result = await provider.check({}, structuredClone(valid) as Record<string, unknown>);
  expect(result.failures ?? []).toEqual([]);
});

describe.each(subjects)("$name check with arbitrary inputs", ({ provider, valid, inputs }) => {
  it("never throws; every failure names a property, is short and is no crash", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...inputs), anyValue), { minLength: 1, maxLength: 3 }),
        async (changes) => {
          let news = valid;
          for (const [at, value] of changes) news = withValue(news, at, value);
          const result = await provider.check({}, news);
          for (const f of result.failures ?? []) {
            expect(f.property, f.reason).toMatch(/\S/);
            expect(f.reason.length, f.reason.slice(0, 300)).toBeLessThanOrEqual(limit);
            expect(f.reason).not.toMatch(crash);
          }
        },
      ),
      { numRuns: runs },
    );
  });
});

// The messages of the common mistakes, as preview shows them.
describe("check messages for common mistakes", () => {
  const long = "x".repeat(100_000);
  it.each([
    [
      "a string where a list belongs",
      ipPoolProvider,
      { ...base.IpPool, exclude: "10.9.0.5" },
      "exclude",
      'must be a list of CIDRs or addresses (a list), not a string; got "10.9.0.5"',
      "INVALID_INPUT",
    ],
    [
      "a number for a CIDR",
      ipPoolProvider,
      { ...base.IpPool, ranges: [{ subnet: 10 }] },
      "ranges[0].subnet",
      "must be a CIDR such as 10.0.0.0/24 (a string), not a number; got 10",
      "INVALID_INPUT",
    ],
    [
      "an unknown strategy",
      ipPoolProvider,
      { ...base.IpPool, strategy: "random" },
      "strategy",
      'unknown strategy "random"; use round-robin or lowest-free',
      "INVALID_INPUT",
    ],
    [
      "a ledger without a name",
      ipPoolProvider,
      { ...base.IpPool, ledger: { kind: "kubernetes", namespace: "ipam" } },
      "ledger.name",
      "is required: give a name",
      "INVALID_INPUT",
    ],
    [
      "a misspelt range setting",
      ipPoolProvider,
      { ...base.IpPool, ranges: [{ subnet: "10.9.0.0/24", rangestart: "10.9.0.5" }] },
      "ranges[0].rangestart",
      "is not a setting of a range; it takes subnet, rangeStart, rangeEnd, gateway",
      "INVALID_INPUT",
    ],
    [
      "an object for a list of statics",
      ipPoolProvider,
      { ...base.IpPool, static: ["10.9.0.1"] },
      "static",
      'must be node IDs mapped to their addresses (an object of names to values), not a list; got ["10.9.0.1"]',
      "INVALID_INPUT",
    ],
    [
      "a provisioner given as its kind",
      egressIpAssignmentProvider,
      { ...base.EgressIpAssignment, provisioner: "aws" },
      "provisioner",
      'must be a provisioner config such as { kind: "aws", region: "us-east-1" } (an object), not a string; got "aws"',
      "INVALID_INPUT",
    ],
    [
      "an unknown provisioner kind",
      cidrAssignmentProvider,
      { ...base.CidrAssignment, provisioner: { kind: "gcp" } },
      "provisioner.kind",
      'unknown provisioner kind "gcp"; use one of none, aws, ocp-static, ocp-dynamic, ovn, antrea, cilium',
      "INVALID_CONFIG",
    ],
    [
      "adopt as a word",
      egressIpAssignmentProvider,
      { ...base.EgressIpAssignment, provisioner: provisioners[0], adopt: "yes" },
      "adopt",
      'must be true or false; got "yes"',
      "INVALID_INPUT",
    ],
    [
      "hosts as one host",
      cidrAssignmentProvider,
      { ...base.CidrAssignment, provisioner: provisioners[0], requestedHosts: "h1" },
      "requestedHosts",
      'must be a list of host names (a list), not a string; got "h1"',
      "INVALID_INPUT",
    ],
    [
      "a 100 KB address",
      ipAllocationProvider,
      { ...base.IpAllocation, ip: long },
      "ip",
      `must be an IPv4 or IPv6 address of at most 100 characters (got 100000); got "${"x".repeat(78)}…`,
      "INVALID_INPUT",
    ],
  ] as const)("%s", async (_what, provider, news, property, reason, code) => {
    const result = await provider.check({}, structuredClone(news) as Record<string, unknown>);
    expect(result.failures).toEqual([{ property, reason, code }]);
  });
});
