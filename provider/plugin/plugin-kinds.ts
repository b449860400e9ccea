import { IpamError } from "../core/ipam-error";
import type { Props } from "../resources/provider-props";

/** What the plugin knows of the resource being checked, besides its inputs. */
export interface PluginContext {
  /** Fully qualified stack name, `<org>/<project>/<stack>`. */
  stack: string;
  /** The resource's URN. */
  urn: string;
  /** The `pool` input of a holder, as its provider takes it (see {@link PoolBook}); undefined for other kinds. */
  pool?: Props;
}

/** The settings of an IpPool that decide its addresses, as a holder's `pool` input carries them. */
const poolSpecKeys = [
  "ranges",
  "cniConfig",
  "exclude",
  "reserved",
  "strategy",
  "cloudReserved",
  "network",
  "static",
  "prefixLengths",
] as const;

/**
 * Each resource kind the plugin serves: what its inputs are as the plugin's schema names them, made
 * into the inputs its provider takes, as the TypeScript class makes them from its arguments
 * (`provider/resources/<kind>/<kind>.ts`). One table, so the two ways in stay the same resource.
 */
export const pluginKinds: Record<string, (inputs: Props, ctx: PluginContext) => Props> = {
  IpPool: (i, ctx) => ({ ...i, stack: ctx.stack, poolId: ctx.urn }),
  IpAllocation: (i, ctx) => {
    const { after: _after, ...rest } = i;
    return { ...rest, holder: { stack: ctx.stack, owner: ctx.urn }, pool: ctx.pool };
  },
  PrefixAllocation: (i, ctx) => {
    const { after: _after, ...rest } = i;
    return { ...rest, holder: { stack: ctx.stack, owner: ctx.urn }, pool: ctx.pool };
  },
  CidrAssignment: (i, ctx) => {
    const { hosts, ...rest } = i;
    return { ...rest, stack: ctx.stack, owner: ctx.urn, pool: ctx.pool, requestedHosts: hosts };
  },
  EgressIpAssignment: (i, ctx) => {
    const { host, ...rest } = i;
    return { ...rest, stack: ctx.stack, owner: ctx.urn, pinnedHost: host };
  },
};

/** The kinds whose `pool` input is a reference to an IpPool, made into the pool's settings (see {@link PoolBook}). */
export const poolHolderKinds = new Set(["IpAllocation", "PrefixAllocation", "CidrAssignment"]);

/** The kinds whose instances take addresses from their `pool`, in an order (see holder-order). */
export const orderedKinds = new Set(["IpAllocation", "PrefixAllocation"]);

/**
 * The checked inputs of every IpPool this process checked, by URN: what its holders' `pool` input
 * is made of. The engine completes a pool's registration, and so its check, before any resource
 * that takes a reference to it registers, in every deployment.
 */
export class PoolBook {
  private readonly pools = new Map<string, Props>();

  /** Records the checked inputs of the pool `urn`. */
  record(urn: string, checked: Props): void {
    this.pools.set(urn, checked);
  }

  /**
   * The `pool` input of a holder of `urn`: the pool's settings that decide addresses, its ledger
   * and its identity, as {@link IpPool}'s `ref` gives them to a TypeScript holder.
   * @throws IpamError INVALID_INPUT when `urn` is not an IpPool's; INVALID_CONFIG when this process has not checked that pool (left out by `--target`, or another provider instance).
   */
  holderInput(urn: string, holder: string): Props {
    const pool = this.pools.get(urn);
    if (!pool) {
      // urn:pulumi:<stack>::<project>::<parent types $ ...>$<type>::<name>
      const type = urn.split("::")[2]?.split("$").pop();
      if (type !== undefined && type !== "egress-ipam:index:IpPool") {
        throw new IpamError(
          "INVALID_INPUT",
          `pool ${urn} is of type ${type}, not an egress-ipam IpPool: give ${holder} a reference to the IpPool it takes addresses from`,
        );
      }
      throw new IpamError(
        "INVALID_CONFIG",
        `pool ${urn} was not checked in this run by the provider that serves ${holder}: either it was left ` +
          `out by --target: add --target ${urn} (an unchanged pool is not updated); or the pool and its ` +
          `holders use different egress-ipam providers: leave out an explicit provider on one of them, or ` +
          `give both the same`,
      );
    }
    // The pool's identity as its check kept it: its first URN, which a rename with an alias keeps.
    const id = typeof pool.poolId === "string" ? pool.poolId : urn;
    if (pool.shared === true) return { ledger: pool.ledger, shared: true, id };
    const spec: Props = {};
    for (const key of poolSpecKeys) if (pool[key] !== undefined) spec[key] = pool[key];
    return { ...spec, ledger: pool.ledger, id };
  }
}
