/**
 * A world of world.ts as a Pulumi program: the inline program the runner gives the engine, and the
 * same program as TypeScript source, printed with a failing sequence so it can be run by hand.
 */
import type * as pulumi from "@pulumi/pulumi";
import {
  addressAt,
  ledgerName,
  subnetsOf,
  type AllocModel,
  type HolderModel,
  type PoolModel,
  type World,
} from "./world";

/** What a cloud world's program needs from the run: where EC2 is, and what an edit resolved. */
export interface CloudContext {
  region: string;
  endpoint: string;
  /** The availability zone of each domain. */
  zoneOf: Record<string, string>;
  /** The Elastic IPs each aws EgressIp adopted (`adoptOwn`), by holder ID: private IPv4 → allocation ID. */
  adopted: Map<number, Record<string, string>>;
}

/** The package as the program's project loads it, and that project's `pulumi.secret`. */
type Pkg = typeof import("../../provider/index") & { secret: (value: string) => unknown };

/**
 * Where a shared world's pools keep their ledger: a namespace of the test cluster of its own (the
 * kubeconfig comes from KUBECONFIG, so nothing secret is in the program).
 */
export interface SharedContext {
  namespace: string;
}

/**
 * Where a platform world's EgressIps go: the test cluster's Nodes that carry `selector`, in zones
 * named per world, and namespaces named per world (the kubeconfig comes from KUBECONFIG).
 */
export interface PlatformContext {
  selector: Record<string, string>;
  /** The zone of each domain. */
  zoneOf: Record<string, string>;
  /** The cluster's namespace of a model's namespace. */
  namespaceOf: (namespace: string) => string;
}

/** The Nodes a platform world's printed program selects: the reader labels theirs so. */
const shownSelector = { "egress-test/explore": "true" };

/** The `ledger` of a shared world's pool. */
export const ledgerOf = (pool: PoolModel, shared: SharedContext) => ({
  kind: "kubernetes" as const,
  name: ledgerName(pool),
  namespace: shared.namespace,
});

/** The IpPool arguments of a pool of the model (`shared`: on its ledger). */
export function poolArgs(pool: PoolModel, shared?: SharedContext): Record<string, unknown> {
  const { ipv4, ipv6 } = subnetsOf(pool);
  const exclude = pool.exclude.map((offset) => addressAt(pool, offset));
  const common = {
    ...(shared ? { ledger: ledgerOf(pool, shared) } : {}),
    // A shared pool hands out blocks by its rule only (the block markers): the generator's lengths.
    ...(shared && pool.family === "ipv4" ? { prefixLengths: { min: 28, max: 30 } } : {}),
    ...(exclude.length > 0 ? { exclude } : {}),
    ...(pool.strategy ? { strategy: pool.strategy } : {}),
    ...(pool.zone ? { cloudReserved: "aws" } : {}),
  };
  if (pool.family !== "dual") return { ranges: [{ subnet: (ipv4 ?? ipv6)! }], ...common };
  const cniConfig = JSON.stringify({
    cniVersion: "1.0.0",
    ipam: { type: "host-local", ranges: [[{ subnet: ipv4 }], [{ subnet: ipv6 }]] },
  });
  return { cniConfig, ...common };
}

/** The arguments of a holder (its pool given separately). */
export function holderArgs(
  w: World,
  h: HolderModel,
  cloud?: CloudContext,
  platform?: PlatformContext,
): Record<string, unknown> {
  const pool = w.pools.find((p) => p.id === h.pool)!;
  if (h.kind === "alloc") return allocArgs(pool, h);
  if (h.kind === "prefix") return { prefixLength: h.prefixLength };
  if (w.platform)
    return {
      namespace: platform?.namespaceOf(h.namespace) ?? h.namespace,
      failureDomains: h.domains.map((d) => platform?.zoneOf[d] ?? d),
      provisioner: { kind: w.platform, nodeSelector: platform?.selector ?? shownSelector },
      ...(h.families ? { families: h.families } : {}),
      ...(h.podSelector ? { podSelector: { app: "web" } } : {}),
    };
  if (h.aws) {
    const eips = h.aws.elasticIps;
    return {
      namespace: h.namespace,
      failureDomains: h.domains.map((d) => cloud?.zoneOf[d] ?? d),
      provisioner: {
        kind: "aws",
        region: cloud?.region ?? "us-east-1",
        endpoint: cloud?.endpoint ?? "<moto>",
        hostTags: h.aws.hostTags === "role" ? { role: "egress" } : { role: "egress", team: "t" },
        ...(eips === "allocate" ? { elasticIps: "allocate" } : {}),
        ...(eips === "adoptOwn"
          ? { elasticIps: { adopt: cloud?.adopted.get(h.id) ?? {}, allocate: true } }
          : {}),
      },
      ...(h.families ? { families: h.families } : {}),
    };
  }
  return {
    namespace: h.namespace,
    failureDomains: h.domains,
    provisioner: { kind: "none", hosts: w.hosts },
    ...(h.families ? { families: h.families } : {}),
    ...(h.host ? { host: h.host } : {}),
  };
}

const aliasesOf = (r: { aliases: string[] }) =>
  r.aliases.length > 0 ? { aliases: r.aliases.map((name) => ({ name })) } : {};

/**
 * The inline program of `w`, made of the package as the consumer project installed it. Its
 * outputs, `h<id>` per holder, are what each holder has: `ips` (an allocation), `cidr` (a block) or
 * `addresses` (an EgressIp, by domain and family, and its `publicIps` as `h<id>.publicIps`).
 */
export function programOf(
  w: World,
  pkg: Pkg,
  cloud?: CloudContext,
  shared?: SharedContext,
  platform?: PlatformContext,
): () => Promise<Record<string, unknown>> {
  return async () => {
    const pools = new Map(
      w.pools.map((p) => [p.id, new pkg.IpPool(p.name, poolArgs(p, shared) as never, aliasesOf(p))]),
    );
    const outputs: Record<string, pulumi.Output<unknown>> = {};
    for (const h of w.holders) {
      const pool =
        h.kind === "egress" && h.zonePools
          ? Object.fromEntries(
              Object.entries(h.zonePools).map(([d, id]) => [cloud?.zoneOf[d] ?? d, pools.get(id)!]),
            )
          : pools.get(h.pool)!;
      const given: Record<string, unknown> = { pool, ...holderArgs(w, h, cloud, platform) };
      if (h.kind === "alloc" && h.secret) given.ip = pkg.secret(given.ip as string);
      const args = given as never;
      if (h.kind === "alloc") outputs[`h${h.id}`] = new pkg.IpAllocation(h.name, args, aliasesOf(h)).ips;
      else if (h.kind === "prefix")
        outputs[`h${h.id}`] = new pkg.PrefixAllocation(h.name, args, aliasesOf(h)).cidr;
      else {
        const e = new pkg.EgressIp(h.name, args, aliasesOf(h));
        outputs[`h${h.id}`] = e.addresses;
        outputs[`h${h.id}.publicIps`] = e.publicIps;
      }
    }
    return outputs;
  };
}

/** The arguments of an allocation of `pool` (its pool given separately). */
function allocArgs(pool: PoolModel, h: AllocModel): Record<string, unknown> {
  return {
    ...(h.ip === undefined ? {} : { ip: addressAt(pool, h.ip) }),
    ...(h.family ? { family: h.family } : {}),
  };
}

/**
 * The tenant stack's program of a shared world: an `IpPool.shared` reference of each pool it
 * holds from (named for the pool's ledger) and its allocations, whose `ips` are its outputs `t<id>`.
 */
export function tenantProgramOf(
  w: World,
  pkg: Pkg,
  shared: SharedContext,
): () => Promise<Record<string, unknown>> {
  return async () => {
    const refs = new Map<number, InstanceType<Pkg["IpPool"]>>();
    const outputs: Record<string, pulumi.Output<unknown>> = {};
    for (const t of w.tenant) {
      const pool = w.pools.find((p) => p.id === t.pool)!;
      let ref = refs.get(pool.subnet);
      if (!ref) {
        ref = pkg.IpPool.shared(ledgerName(pool), { ledger: ledgerOf(pool, shared) });
        refs.set(pool.subnet, ref);
      }
      outputs[`t${t.id}`] = new pkg.IpAllocation(t.name, { pool: ref, ...allocArgs(pool, t) } as never).ips;
    }
    return outputs;
  };
}

/** A cloud world as a printed program shows it: moto's endpoint is the reader's own. */
const shownCloud: CloudContext = {
  region: "us-east-1",
  endpoint: "http://127.0.0.1:5000",
  zoneOf: { za: "us-east-1a", zb: "us-east-1b" },
  adopted: new Map(),
};

const kindClass = { alloc: "IpAllocation", prefix: "PrefixAllocation", egress: "EgressIp" } as const;

/** `w` as the source of a Pulumi TypeScript program (index.ts) that does what {@link programOf} does. */
export function programText(w: World): string {
  const lit = (v: unknown) => JSON.stringify(v);
  const opts = (r: { aliases: string[] }) =>
    r.aliases.length > 0 ? `, { aliases: [${r.aliases.map((a) => `{ name: ${lit(a)} }`).join(", ")}] }` : "";
  const lines = [
    `import * as pulumi from "@pulumi/pulumi";`,
    `import { EgressIp, IpAllocation, IpPool, PrefixAllocation } from "pulumi-egress-ipam";`,
    "",
  ];
  const shared = w.shared ? shownLedger : undefined;
  for (const p of w.pools)
    lines.push(`const pool${p.id} = new IpPool(${lit(p.name)}, ${lit(poolArgs(p, shared))}${opts(p)});`);
  for (const h of w.holders) {
    const pool =
      h.kind === "egress" && h.zonePools
        ? `{ ${Object.entries(h.zonePools)
            .map(([d, id]) => `${JSON.stringify(shownCloud.zoneOf[d] ?? d)}: pool${id}`)
            .join(", ")} }`
        : `pool${h.pool}`;
    const args = JSON.stringify(holderArgs(w, h, shownCloud))
      .replace(/^\{/, `{ "pool": ${pool},`)
      .replace(/"ip":("[^"]*")/, h.kind === "alloc" && h.secret ? '"ip":pulumi.secret($1)' : '"ip":$1');
    lines.push(
      `export const h${h.id} = new ${kindClass[h.kind]}(${lit(h.name)}, ${args}${opts(h)})` +
        `.${h.kind === "alloc" ? "ips" : h.kind === "prefix" ? "cidr" : "addresses"};`,
    );
  }
  if (w.tenant.length > 0) {
    lines.push("", "// The tenant stack's program (a project of its own), with KUBECONFIG as the program's:");
    const refs = new Set<number>();
    for (const t of w.tenant) {
      const pool = w.pools.find((p) => p.id === t.pool)!;
      const ref = `shared${pool.subnet}`;
      if (!refs.has(pool.subnet)) {
        refs.add(pool.subnet);
        const ledger = lit(ledgerOf(pool, shownLedger));
        lines.push(`// const ${ref} = IpPool.shared(${lit(ledgerName(pool))}, { ledger: ${ledger} });`);
      }
      const args = JSON.stringify(allocArgs(pool, t))
        .replace(/^\{/, `{ "pool": ${ref},`)
        .replace(/,\}$/, "}");
      lines.push(`// export const t${t.id} = new IpAllocation(${lit(t.name)}, ${args}).ips;`);
    }
  }
  return lines.join("\n") + "\n";
}

/** A shared world as a printed program shows it: the reader's own ledger namespace. */
const shownLedger: SharedContext = { namespace: "ipam" };
