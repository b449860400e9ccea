// One address pool run as a service: the `platform` stack owns it (its subnets and the quotas of
// the stacks using it), and tenant stacks (`team-a`, `team-b`) reference it by its ledger, a
// Kubernetes namespace every stack reaches, and take their services' addresses from it. Two stacks
// never hold the same address, even running `pulumi up` at once; each previews exactly what its
// `up` gets. The owner grows the pool without any tenant's program or config changing.
import * as pulumi from "@pulumi/pulumi";
import { IpAllocation, IpPool, type PoolQuotas } from "pulumi-egress-ipam";

const config = new pulumi.Config();
// The stack that states the pool's subnets owns it; the others are its tenants.
const subnets = config.requireObject<string[]>("subnets");
const services = config.requireObject<string[]>("services");
const context = config.get("context"); // kubeconfig context; default: the current one

const ledger = {
  kind: "kubernetes" as const,
  name: config.require("poolName"),
  namespace: config.require("ledgerNamespace"),
  ...(context ? { context } : {}),
};

const owns = subnets.length > 0;
const pool = owns
  ? new IpPool("shared", {
      ranges: subnets.map((subnet) => ({ subnet })),
      ledger,
      quotas: config.requireObject<PoolQuotas>("quotas"),
    })
  : // A tenant restates nothing: the definition and quotas are read from the ledger at each preview.
    IpPool.shared("shared", { ledger });

const allocations = services.map((service) => new IpAllocation(service, { pool }));

// Known at preview: who owns the pool and its size, and for a tenant the free addresses, what its
// stack holds and its quota (an owner's pool counts only `free`, at `pulumi refresh`).
const share = owns ? {} : { free: pool.free, used: pool.used, quota: pool.quota };
export = {
  addresses: Object.fromEntries(services.map((s, i) => [s, allocations[i]!.ip])),
  ownedBy: pool.ownedBy,
  size: pool.size,
  ...share,
};
