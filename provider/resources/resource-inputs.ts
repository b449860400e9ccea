import { provisionerKinds } from "../provisioners/config/provisioner-config";
import { flag, integer, listOf, mapOf, record, text, type Shape } from "./input-shape";

// The inputs each resource's `check` receives, by shape: what its class passes (user arguments and
// the values the class adds), checked before any other code reads them: types, lists, objects and
// lengths. The meaning of each value (a known strategy or kind, a valid CIDR, a known context, a
// free address) is checked after, by the code that owns it, all problems at once as before.

const address = text("an IPv4 or IPv6 address", 100);
const cidr = text("a CIDR such as 10.0.0.0/24", 100);
const cidrOrAddress = text("a CIDR or an address", 100);
const name = text("a name");

const range = record(
  "a range",
  { subnet: cidr, rangeStart: address, rangeEnd: address, gateway: address },
  {
    required: ["subnet"],
  },
);

/** The pool option `ledger`. */
const ledger = record(
  "a ledger",
  {
    kind: text('"kubernetes"', 40),
    name,
    namespace: name,
    context: name,
    kubeconfig: text("a kubeconfig (its YAML or JSON text)", 1_000_000),
    cluster: text('a cluster such as "ca sha256:0123456789abcdef"', 300),
    lockDuration: text('a duration such as "10s"', 40),
    lockAcquireTimeout: text('a duration such as "30s"', 40),
  },
  { required: ["kind", "name", "namespace"] },
);

/** What decides a pool's addresses: given to IpPool, and carried in every holder's pool reference. */
const poolSpec = {
  ranges: listOf('a list of ranges such as [{ subnet: "10.0.0.0/24" }]', range, 1_000),
  cniConfig: text("a CNI host-local config (JSON text)", 1_000_000),
  exclude: listOf("a list of CIDRs or addresses", cidrOrAddress),
  reserved: listOf("a list of CIDRs or addresses", cidrOrAddress),
  strategy: text('"round-robin" or "lowest-free"', 40),
  cloudReserved: text('"aws"', 40),
  network: cidr,
  static: mapOf("node IDs mapped to their addresses", address),
  prefixLengths: record("a prefix length rule such as { min: 16, max: 28, default: 24 }", {
    min: integer("a prefix length such as 16"),
    max: integer("a prefix length such as 28"),
    default: integer("a prefix length such as 24"),
  }),
  ledger,
};

/**
 * A provisioner config: an object with a known `kind`; its settings are checked by the
 * provisioner's own rules (which name each unknown or invalid one).
 */
const provisioner = record(
  'a provisioner config such as { kind: "aws", region: "us-east-1" }',
  {
    kind: text(provisionerKinds.map((k) => `"${k}"`).join(", "), 40),
  },
  { required: ["kind"], open: true },
);

/** The pool reference a holder passes: the pool's spec and its identity. */
const poolRef = record(
  "an IpPool",
  { ...poolSpec, id: text("the pool's identity", 2_000), shared: flag },
  {
    open: true,
  },
);

/** IpPool's inputs. */
export const ipPoolInputs: Shape = record(
  "an IpPool",
  {
    ...poolSpec,
    quotas: record('a quota rule such as { default: 8, stacks: { "network/prod": 64 } }', {
      default: integer("a number of addresses such as 8"),
      stacks: mapOf(
        "stack names mapped to their number of addresses",
        integer("a number of addresses such as 64"),
      ),
    }),
    adopt: flag,
    shared: flag,
  },
  { open: true },
);

/** IpAllocation's inputs. */
export const ipAllocationInputs: Shape = record(
  "an IpAllocation",
  {
    pool: poolRef,
    ip: address,
    adopt: flag,
    observeWith: provisioner,
    nodeId: text("a node ID", 253),
    family: text('"ipv4" or "ipv6"', 40),
    adoptFrom: record(
      "the namespace whose addresses to adopt",
      {
        namespace: text("a namespace name", 63),
        failureDomain: text("a failure domain (a zone name)"),
        domains: listOf("a list of failure domains", text("a failure domain (a zone name)")),
        onlyPool: flag,
        families: listOf("a list of address families", text('"ipv4" or "ipv6"', 40), 2),
      },
      { required: ["namespace"] },
    ),
  },
  { open: true },
);

/** PrefixAllocation's inputs. */
export const prefixAllocationInputs: Shape = record(
  "a PrefixAllocation",
  { pool: poolRef, cidr, prefixLength: integer("a prefix length such as 24"), adopt: flag },
  { open: true },
);

/** EgressIpAssignment's inputs. */
export const egressIpAssignmentInputs: Shape = record(
  "an EgressIpAssignment",
  {
    ip: address,
    provisioner,
    failureDomain: text("a failure domain (a zone name)"),
    pinnedHost: text("a host name"),
    namespace: text("a namespace name", 63),
    adopt: flag,
    podSelector: mapOf("pod labels mapped to their values", text("a label value", 63)),
  },
  { required: ["ip", "provisioner"], open: true },
);

/** CidrAssignment's inputs. */
export const cidrAssignmentInputs: Shape = record(
  "a CidrAssignment",
  {
    pool: poolRef,
    provisioner,
    requestedHosts: listOf("a list of host names", text("a host name")),
    failureDomain: text("a failure domain (a zone name)"),
  },
  { required: ["provisioner"], open: true },
);
