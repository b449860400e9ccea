import { familyOfText, IpamError, nextFree } from "../../allocator";
import { errorMessage } from "../../core/failure";
import { ownKind } from "../../core/resource-types";
import { readRecord, type AllocationRecord } from "../../ledger/stack/allocation-record";
import { exportStackResources, type CheckpointResource } from "../../ledger/stack/stack-checkpoint";
import { provisionerFor } from "../../provisioners/factory/provisioner-cache";
import { takenAddressOf, type TakenAddress } from "../../provisioners/taken-address";
import { poolOfDefinition } from "../pool/canonical-definition";
import { sharedLedgerFor } from "../pool/ledger-option";
import { poolOfFamily, poolSpecOf, poolSubnets, resolvePool, type ResolvedPool } from "../pool/pool-spec";
import type { Props } from "../provider-props";

// Why this lives here and not in the provisioners: the only edit that moves an allocation off an
// address somebody else took is naming another address for it (`ips`, or the IpAllocation's `ip`).
// Excluding the address from the pool is refused (POOL_IN_USE) while the allocation holds it, and
// the allocation keeps its address at every plan. Naming one the pool accepts needs the stack's
// allocation, its pool and its siblings, which only the stack's checkpoint has.

/**
 * Runs a placement of the assignment `props`; an `ADDRESS_IN_USE` refusal of a provisioner (see
 * `takenAddress`) comes back with the way out added (see {@link takenAddressAdvice}), same code.
 */
export async function withTakenAdvice<T>(props: Props, placement: Promise<T>): Promise<T> {
  try {
    return await placement;
  } catch (e) {
    const taken = takenAddressOf(e);
    if (!taken) throw e;
    const advice = await takenAddressAdvice(props, taken);
    throw new IpamError("ADDRESS_IN_USE", `${(e as Error).message}; ${advice}`, { cause: e });
  }
}

const quoted = (ips: string[]) => `[${ips.map((ip) => `"${ip}"`).join(", ")}]`;
const nameOf = (urn: string) => urn.split("::").at(-1) ?? urn;

/**
 * What to do about `taken.ip`, which somebody else has on the platform, written as the edit the
 * product accepts (see {@link adviceFrom}), read from the stack's checkpoint and the provisioner.
 */
export async function takenAddressAdvice(props: Props, taken: TakenAddress): Promise<string> {
  let resources: CheckpointResource[];
  try {
    resources = await exportStackResources(String(props.stack));
  } catch (e) {
    // Without the checkpoint no allocation can be named, nor whether adopting is the EgressIp's.
    return `take ${taken.ip} off there and run pulumi up again (no other way out can be named: ${errorMessage(e)})`;
  }
  return adviceFrom(resources, props, taken, {
    inUse: async (pool) =>
      (await provisionerFor(props.provisioner).usedAddresses?.(poolSubnets(pool.rangeSets))) ?? [],
    claims: async (holder, pool) => {
      const ledger = sharedLedgerFor(holder, (holder.pool as Props | undefined)?.ledger, "advice");
      return ledger ? [...(await ledger.holders(pool)).keys()] : [];
    },
  });
}

/** What {@link adviceFrom} reads besides the checkpoint. */
export interface AdviceSources {
  /** Addresses the provisioner sees in use in the pool's subnets. */
  inUse(pool: ResolvedPool): Promise<string[]>;
  /** What a shared pool's ledger has claimed (none for a stack-local pool), for the holder's outputs. */
  claims(holder: Props, pool: string): Promise<string[]>;
}

/**
 * The way out of the refusal to place `taken.ip` for the assignment `props`, given the stack's
 * checkpoint `resources`: where an allocation of the stack holds it, naming an address of the same
 * pool that nothing holds or uses (the EgressIp's whole `ips`, or the IpAllocation's `ip`), so that
 * the allocation moves there at the next `up`; `adopt: true` where the address is already where the
 * assignment would put it; taking it off where it is, always. Never an exclusion from the pool.
 */
export async function adviceFrom(
  resources: CheckpointResource[],
  props: Props,
  taken: TakenAddress,
  sources: AdviceSources,
): Promise<string> {
  const { ip } = taken;
  const freeIt = `or take ${ip} off there and run pulumi up again`;
  const live = resources.filter((r) => !r.delete);
  const holder = live.find(
    (r) => ownKind(r.type) === "IpAllocation" && readRecord(r.outputs)?.ips.includes(ip),
  );
  const record = holder && readRecord(holder.outputs)!;
  const parent =
    holder?.parent && live.find((r) => r.urn === holder.parent && ownKind(r.type) === "EgressIp");
  const namespace = typeof props.namespace === "string" && props.namespace !== "";
  const adopt = !taken.adoptable
    ? ""
    : parent && namespace
      ? `; or set adopt: true on the EgressIp ${nameOf(parent.urn)} to take ${ip} over where it is`
      : !parent
        ? `; or set adopt: true on the EgressIpAssignment to take ${ip} over where it is`
        : "";
  // An address given to the assignment as it is: no allocation of the stack holds it.
  if (!holder || !record)
    return `${adopt.slice("; or ".length)}${adopt ? "; " : ""}${freeIt.slice("or ".length)}`;

  const spare = await spareAddress(live, holder, record, ip, sources).catch(() => undefined);
  const excluded = `excluding ${ip} from the pool is refused while IpAllocation ${nameOf(holder.urn)} holds it`;
  if (!spare)
    return `${excluded}, and its pool has no address that nothing holds or uses: widen the pool${adopt}; ${freeIt}`;
  const edit = parent
    ? egressIpEdit(live, parent, ip, spare)
    : `give IpAllocation ${nameOf(holder.urn)} ip: "${spare}"`;
  return (
    `${excluded}: ${edit} and run pulumi up, and the allocation moves to ${spare}, which nothing holds or ` +
    `uses (${ip} can be excluded from the pool afterwards)${adopt}; ${freeIt}`
  );
}

/**
 * The EgressIp's `ips` with `spare` in the place of `ip`: one address per failure domain and family
 * (IPv4 first), each the one its allocation holds now. Domains in the order of the EgressIp's
 * recorded `ips` where it has one (an earlier successful up), else by name; said with the edit.
 */
function egressIpEdit(
  live: CheckpointResource[],
  parent: CheckpointResource,
  ip: string,
  spare: string,
): string {
  const name = nameOf(parent.urn);
  const slots = live.flatMap((r) => {
    const record =
      r.parent === parent.urn && ownKind(r.type) === "IpAllocation" ? readRecord(r.outputs) : undefined;
    if (!record) return [];
    const address = record.ips[0]!;
    const family = familyOfText(address);
    const child = nameOf(r.urn);
    const rest = child === name ? "" : child.startsWith(`${name}-`) ? child.slice(name.length + 1) : child;
    const domain =
      family === "ipv6" && rest === "ipv6" ? "" : family === "ipv6" ? rest.replace(/-ipv6$/, "") : rest;
    return [{ domain, family, ip: address === ip ? spare : address, was: address }];
  });
  const recorded = (parent.outputs?.ips as unknown[] | undefined) ?? [];
  const position = (domain: string) => {
    const i = recorded.findIndex((a) => slots.some((s) => s.domain === domain && s.was === a));
    return i < 0 ? recorded.length : i;
  };
  slots.sort(
    (a, b) =>
      position(a.domain) - position(b.domain) ||
      a.domain.localeCompare(b.domain) ||
      a.family.localeCompare(b.family),
  );
  const domains = [...new Set(slots.map((s) => s.domain))];
  const perFamily = slots.length > domains.length ? " and family (IPv4 first)" : "";
  const order =
    domains.length > 1 || perFamily
      ? ` (one per failure domain${perFamily}, in the order of failureDomains: ${domains.join(", ")})`
      : "";
  return `give the EgressIp ${name} ips: ${quoted(slots.map((s) => s.ip))}${order}`;
}

/**
 * The address the pool would plan next after `ip` if `ip` were taken: in its range set, not
 * excluded, reserved or a gateway, held by no record of the pool (nor claim, in a shared pool) and
 * used by nobody the provisioner sees. Undefined when the pool cannot be read or has none.
 */
async function spareAddress(
  live: CheckpointResource[],
  holder: CheckpointResource,
  record: AllocationRecord,
  ip: string,
  sources: AdviceSources,
): Promise<string | undefined> {
  const whole = poolOf(live, record.pool);
  const pool = whole && (whole.rangeSets.length > 1 ? poolOfFamily(whole, familyOfText(ip)) : whole);
  const rangeSet = pool?.rangeSets[0];
  if (!pool || !rangeSet) return undefined;
  const held = live.flatMap((r) => {
    const other = readRecord(r.outputs);
    return other?.pool === record.pool ? other.ips : [];
  });
  const claims = await sources.claims(holder.outputs ?? {}, record.pool);
  const inUse = await sources.inUse(pool);
  return nextFree({
    rangeSet,
    exclude: [...pool.exclude, ...pool.reserved, ...inUse, ip],
    taken: [...held, ...claims].filter((a) => rangeSet.contains(a)),
    cursor: ip,
    strategy: "round-robin",
  });
}

/** The pool `id` of the checkpoint: its recorded spec, or a reference's recorded definition. */
function poolOf(live: CheckpointResource[], id: string): ResolvedPool | undefined {
  const r = live.find((p) => ownKind(p.type) === "IpPool" && (p.outputs?.poolId ?? p.urn) === id);
  if (!r?.outputs) return undefined;
  if (r.outputs.shared === true) {
    return typeof r.outputs.definition === "string" ? poolOfDefinition(r.outputs.definition) : undefined;
  }
  return resolvePool(poolSpecOf(r.outputs)).pool;
}
