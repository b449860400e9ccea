import { canonicalAddress, canonicalCidr, prefixContains } from "../allocator";
import { parseAddress, tryParseAddress } from "../allocator/address";
import { defaultZoneLabel } from "../provisioners/config/kube-provisioner-config";
import { operatorAnnotations, presentAddresses } from "../provisioners/kubernetes/namespace-addresses";
import { egressAssignableLabel } from "../provisioners/kubernetes/ovn/ovn";
import { cniAddresses, cniSettings, sourceKind } from "./import-cni";
import type { ClusterFacts, EgressIpamFacts } from "./import-facts";

// What `pulumi-egress-ipam import` makes of a cluster: pure, from the facts it read. The program it
// becomes (import-program.ts) adopts every address where it is, so its preview shows no move.

/** A pool the program declares. */
export interface ImportedPool {
  /** Its resource name (also the key the program uses). */
  name: string;
  subnet: string;
  /** Addresses never handed out: the EgressIPAM's reservedIPs and the node addresses inside the subnet. */
  exclude: string[];
  /** Set when the nodes run on AWS (their providerID), whose subnets keep five addresses. */
  cloudReserved?: "aws";
  /** Where the CIDR came from. */
  from: string;
}

/** The provisioner settings an imported resource gets. */
export interface ImportedProvisioner {
  kind: "ocp-static" | "ocp-dynamic" | "ovn" | "cilium" | "antrea";
  zoneLabel?: string;
  nodeSelector?: Record<string, string>;
  /** ocp-static on AWS: the instances' secondary private IPs too (region from the Nodes' providerID). */
  cloud?: { kind: "aws"; region: string };
  /** cilium: the adopted policy's destinationCIDRs and excludedCIDRs. */
  destinations?: string[];
  excluded?: string[];
  /** antrea: the adopted Egresses' externalIPPool. */
  externalIPPool?: string;
}

/** A namespace's addresses, one per failure domain, as the cluster has them. */
export interface ImportedEgressIp {
  name: string;
  namespace: string;
  provisioner: ImportedProvisioner;
  /** In failure-domain order; `node` is where the cluster has it (absent until the platform places it). */
  addresses: { domain: string; pool: string; ip: string; node?: string; source: string }[];
}

/** Hosts that carry a pool's CIDR (HostSubnet.egressCIDRs) or the OVN egress-assignable label. */
export interface ImportedCidrAssignment {
  name: string;
  pool: string;
  provisioner: ImportedProvisioner;
  hosts: string[];
}

/** What `import` found and what the program declares; `--json` prints it. */
export interface ImportPlan {
  cluster: { context: string; server: string };
  pools: ImportedPool[];
  egressIps: ImportedEgressIp[];
  cidrAssignments: ImportedCidrAssignment[];
  /** Addresses left out on purpose (a stack of this package holds them already). */
  skipped: string[];
  /** What could not be imported, one line each, naming the value and what to do. */
  problems: string[];
}

/** Options of `import`. */
export interface ImportOptions {
  /** Extra CIDRs to make pools of, for addresses no EgressIPAM or egressCIDRs names. */
  cidrs?: string[];
  /** The Node label whose value is the failure domain, for addresses the operator does not manage. */
  zoneLabel?: string;
  /** Only these namespaces (and the pools they use); default every namespace that has egress IPs. */
  namespaces?: string[];
}

/** A resource name from free text: letters, digits, `-`, `.` and `_` kept, the rest `-`. */
const resourceName = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");

const byAddress = (ips: Iterable<string>) =>
  [...new Set(ips)].sort((a, b) => {
    const [x, y] = [parseAddress(a).value, parseAddress(b).value];
    return x < y ? -1 : x > y ? 1 : 0;
  });

/** The plan for `facts`. Never throws for what the cluster holds: what cannot be imported is a problem line. */
export function importPlan(facts: ClusterFacts, options: ImportOptions = {}): ImportPlan {
  const problems: string[] = [];
  const pools: ImportedPool[] = [];
  const nodes = new Map(facts.nodes.map((n) => [n.name, n]));
  const onAws = facts.nodes.some((n) => n.providerID?.startsWith("aws://"));
  const region = awsRegion(facts);
  const nodeAddresses = facts.nodes.flatMap((n) => n.addresses).filter((ip) => tryParseAddress(ip));

  const addPool = (cidr: string, name: string, from: string, reserved: string[] = []) => {
    const subnet = safeCidr(cidr);
    if (subnet === undefined) {
      problems.push(`${from}: ${JSON.stringify(cidr)} is not a CIDR such as 10.0.8.0/24; no pool made of it`);
      return undefined;
    }
    const existing = pools.find((p) => p.subnet === subnet);
    if (existing) return existing;
    const inside = [...reserved, ...nodeAddresses].filter((ip) => prefixContains(subnet, ip));
    const pool: ImportedPool = {
      name: uniqueName(resourceName(name), pools),
      subnet,
      exclude: byAddress(inside.map((ip) => canonicalAddress(ip))),
      ...(onAws ? { cloudReserved: "aws" as const } : {}),
      from,
    };
    pools.push(pool);
    return pool;
  };

  // Pools: the operator's CIDRs, then the HostSubnets' egressCIDRs, then the ones given.
  const ipamPools = new Map<EgressIpamFacts, ImportedPool[]>();
  for (const ipam of facts.egressIpams) {
    const label = ipam.topologyLabel;
    const made = ipam.cidrs.map((c) =>
      addPool(
        c.cidr,
        `${ipam.name}-${c.labelValue}`,
        `EgressIPAM ${ipam.name} (${label}=${c.labelValue})`,
        c.reservedIPs,
      ),
    );
    if (made.every((p) => p !== undefined)) ipamPools.set(ipam, made as ImportedPool[]);
  }
  const sdnCidrs = new Set<string>();
  for (const h of facts.view.hostSubnets.values())
    for (const c of h.egressCIDRs) {
      const pool = addPool(c, `egress-${c}`, "HostSubnet egressCIDRs");
      if (pool) sdnCidrs.add(pool.subnet);
    }
  for (const c of options.cidrs ?? []) addPool(c, `egress-${c}`, "--cidr");
  const poolOf = (ip: string) => pools.find((p) => prefixContains(p.subnet, ip));

  const skipped: string[] = [];
  const egressIps: ImportedEgressIp[] = [];
  const only = options.namespaces && options.namespaces.length > 0 ? new Set(options.namespaces) : undefined;
  // An address the cluster gives several namespaces (an EgressIP object whose selector matches more
  // than one) has no single owner to adopt it: each of them is a problem, never a guess.
  const present = new Map(
    facts.namespaces.map((ns) => {
      const all = [...presentAddresses(facts.view, ns), ...cniAddresses(facts, ns)];
      return [ns.name, all.filter((a, i) => all.findIndex((b) => b.ip === a.ip) === i)];
    }),
  );
  const sharers = new Map<string, string[]>();
  for (const [name, seen] of present)
    for (const a of seen) sharers.set(a.ip, [...(sharers.get(a.ip) ?? []), name]);
  for (const ns of facts.namespaces) {
    if (only && !only.has(ns.name)) continue;
    const seen = present.get(ns.name)!.filter((a) => {
      const by = facts.managed.get(a.ip);
      if (by !== undefined) skipped.push(`${a.ip} of namespace ${ns.name}: a stack holds it already (${by})`);
      return by === undefined;
    });
    if (seen.length === 0) continue;
    const where = `namespace ${ns.name}`;
    const shared = seen.find((a) => sharers.get(a.ip)!.length > 1);
    if (shared) {
      problems.push(
        `${shared.ip} of ${where} (${shared.source}): the cluster gives it to namespaces ${sharers.get(shared.ip)!.join(", ")}; ` +
          `an EgressIp serves one namespace: give each its own address (or selector) and import again`,
      );
      continue;
    }
    // Cilium's and Antrea's objects adopt under their own kind, one kind per EgressIp.
    const kinds = [...new Set(seen.map((a) => sourceKind(a.source)))];
    const cni = kinds.length === 1 && kinds[0] !== "openshift" ? kinds[0] : undefined;
    if (kinds.length > 1 && kinds.some((k) => k !== "openshift")) {
      problems.push(
        `${where}: its addresses come from ${seen.map((a) => `${a.ip} (${a.source})`).join(", ")}; an EgressIp ` +
          `has one provisioner kind: keep one kind's objects and import again`,
      );
      continue;
    }
    const adopted = cni ? cniSettings(facts, ns, cni, seen) : undefined;
    if (adopted && "problem" in adopted) {
      problems.push(adopted.problem);
      continue;
    }
    const ipamName = ns.annotations[operatorAnnotations.ipam];
    const ipam = facts.egressIpams.find((i) => i.name === ipamName);
    const zoneLabel = ipam?.topologyLabel ?? options.zoneLabel ?? defaultZoneLabel;
    const addresses: ImportedEgressIp["addresses"] = [];
    let complete = true;
    for (const a of seen) {
      const pool = poolOf(a.ip);
      const node = a.node === undefined ? undefined : nodes.get(a.node);
      const domain = ipam
        ? ipam.cidrs[(ipamPools.get(ipam) ?? []).findIndex((p) => p === pool)]?.labelValue
        : node?.labels[zoneLabel];
      const problem = !pool
        ? `no pool contains it (no EgressIPAM CIDR or HostSubnet egressCIDRs does): give --cidr <its subnet>`
        : domain === undefined && !node
          ? `no node carries it yet, so its failure domain (${zoneLabel}) is unknown: import again once it is placed, or give --zone-label`
          : domain === undefined
            ? `its node ${a.node} has no label ${zoneLabel}: give --zone-label <the Node label that names the failure domain> (kubernetes.io/hostname keeps each address on its node)`
            : addresses.some((x) => x.domain === domain)
              ? `${where} has two addresses in failure domain ${domain} (${addresses.find((x) => x.domain === domain)!.ip} and ${a.ip}): one per domain is what EgressIp holds; take one off`
              : undefined;
      if (problem) {
        problems.push(`${a.ip} of ${where} (${a.source}): ${problem}`);
        complete = false;
        continue;
      }
      addresses.push({
        domain: domain!,
        pool: pool!.name,
        ip: a.ip,
        ...(a.node ? { node: a.node } : {}),
        source: a.source,
      });
    }
    if (!complete || addresses.length === 0) {
      if (addresses.length > 0)
        problems.push(`${where}: left out whole, so that its addresses stay together`);
      continue;
    }
    const ovn = seen.some((a) => a.source.startsWith("EgressIP "));
    const dynamic = addresses.every((a) => sdnCidrs.has(pools.find((p) => p.name === a.pool)!.subnet));
    const selector = ipam?.nodeSelector;
    if (selector?.matchExpressions?.length)
      problems.push(
        `EgressIPAM ${ipam!.name}: nodeSelector.matchExpressions cannot be written as a provisioner nodeSelector (matchLabels only); ${where} uses its matchLabels only: check the nodes it may use`,
      );
    const provisioner: ImportedProvisioner = {
      kind: ovn ? "ovn" : dynamic ? "ocp-dynamic" : "ocp-static",
      ...adopted?.settings,
      ...(zoneLabel === defaultZoneLabel ? {} : { zoneLabel }),
      ...(selector?.matchLabels && Object.keys(selector.matchLabels).length > 0
        ? { nodeSelector: selector.matchLabels }
        : {}),
    };
    if (provisioner.kind === "ocp-static" && region) provisioner.cloud = { kind: "aws", region };
    // The operator's order (one address per CIDR, in cidrAssignments order); else by domain name.
    const order = ipam ? ipam.cidrs.map((c) => c.labelValue) : addresses.map((a) => a.domain).sort();
    addresses.sort((x, y) => order.indexOf(x.domain) - order.indexOf(y.domain));
    egressIps.push({
      name: uniqueName(resourceName(ns.name), egressIps),
      namespace: ns.name,
      provisioner,
      addresses,
    });
  }

  for (const name of only ?? [])
    if (!facts.namespaces.some((n) => n.name === name))
      problems.push(`namespace ${name} (--namespace) does not exist on ${facts.server}`);
  // A chosen set of namespaces gets the pools it uses, not every pool of the cluster.
  const used = new Set(egressIps.flatMap((e) => e.addresses.map((a) => a.pool)));
  return {
    cluster: { context: facts.context, server: facts.server },
    pools: only ? pools.filter((p) => used.has(p.name)) : pools,
    egressIps,
    cidrAssignments: cidrAssignments(facts, pools, egressIps),
    skipped,
    problems,
  };
}

/** CidrAssignments for the pools the imported EgressIps use, where hosts already carry them. */
function cidrAssignments(
  facts: ClusterFacts,
  pools: ImportedPool[],
  egressIps: ImportedEgressIp[],
): ImportedCidrAssignment[] {
  const out: ImportedCidrAssignment[] = [];
  const done = new Set<string>();
  for (const e of egressIps) {
    // ocp-static has no CIDRs to assign; cilium and antrea nothing to assign at all.
    if (!["ocp-dynamic", "ovn"].includes(e.provisioner.kind)) continue;
    for (const a of e.addresses) {
      const key = `${e.provisioner.kind} ${a.pool}`;
      if (done.has(key)) continue;
      done.add(key);
      const pool = pools.find((p) => p.name === a.pool)!;
      const hosts =
        e.provisioner.kind === "ocp-dynamic"
          ? [...facts.view.hostSubnets]
              .filter(([, h]) => h.egressCIDRs.some((c) => safeCidr(c) === pool.subnet))
              .map(([name]) => name)
          : facts.nodes
              .filter((n) => egressAssignableLabel in n.labels)
              .filter((n) => n.labels[e.provisioner.zoneLabel ?? defaultZoneLabel] === a.domain)
              .map((n) => n.name);
      if (hosts.length > 0)
        out.push({ name: `${a.pool}-hosts`, pool: a.pool, provisioner: e.provisioner, hosts: hosts.sort() });
    }
  }
  return out;
}

/** The AWS region of the nodes, from a providerID such as `aws:///us-east-1a/i-0abc` (the zone less its letter). */
function awsRegion(facts: ClusterFacts): string | undefined {
  for (const n of facts.nodes) {
    const zone = /^aws:\/\/\/([a-z0-9-]+?)[a-z]?\//.exec(n.providerID ?? "")?.[1];
    if (zone) return zone;
  }
  return undefined;
}

const safeCidr = (c: string) => {
  try {
    return canonicalCidr(c);
  } catch {
    return undefined;
  }
};

function uniqueName(name: string, taken: { name: string }[]): string {
  let candidate = name || "egress";
  for (let i = 2; taken.some((t) => t.name === candidate); i++) candidate = `${name}-${i}`;
  return candidate;
}
