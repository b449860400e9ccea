import { madeByEgressIp } from "../../core/resource-types";
import type { CheckpointResource } from "../../ledger/stack/stack-checkpoint";
import { stackResources } from "../../ledger/stack/stack-ledger";

/**
 * How messages name an EgressIpAssignment's resource: `EgressIp team-a` for one an EgressIp made (its
 * URN's parent type is EgressIp and its name is the EgressIp's plus `-<failureDomain>`, and `-ipv6`
 * for the IPv6 address of `families: "dual"` or `"ipv6"`), else `EgressIpAssignment <name>`. Every
 * assignment of one EgressIp gets the same name, so checks that compare holders see them as one.
 */
export function holderName(urn: string, failureDomain: string): string {
  const parts = urn.split("::");
  const name = parts.slice(3).join("::");
  const suffix = failureDomain === "" ? "" : `-${failureDomain}`;
  if (madeByEgressIp(urn)) {
    const base = [`${suffix}-ipv6`, suffix].find((s) => name.endsWith(s) && name.length > s.length);
    if (base !== undefined) return `EgressIp ${name.slice(0, name.length - base.length)}`;
  }
  return `EgressIpAssignment ${name}`;
}

/** A URN but its name: stack, project and type chain (`urn:pulumi:<stack>::<project>::<types>`). */
const urnPrefix = (urn: string) => urn.split("::").slice(0, 3).join("::");

/**
 * The owner records of the assignment `urn` of failure domain `failureDomain` (its `ownerId`, when it
 * has one) and of every other assignment of its EgressIp in the stack's state: those whose URN has
 * the same stack, project and types and whose {@link holderName}, each read with its own failure
 * domain, is the same. The EgressIp's name alone is not enough (EgressIp `a`'s domain `b-x` and
 * EgressIp `a-b`'s domain `x` both make `a-b-x`), the domain each child was made for is; the engine
 * keeps one URN to one resource, so the two cannot both be in one state. An assignment an EgressIp
 * did not make has only its own record.
 */
export async function holderOwners(
  stack: string,
  urn: string,
  failureDomain: string,
  ownerId: string | undefined,
  resources: (stack: string) => Promise<CheckpointResource[]> = stackResources,
): Promise<Set<string>> {
  const owners = new Set(ownerId === undefined ? [] : [ownerId]);
  if (!madeByEgressIp(urn)) return owners;
  const holder = holderName(urn, failureDomain);
  for (const r of await resources(stack)) {
    if (urnPrefix(r.urn) !== urnPrefix(urn)) continue;
    for (const props of [r.outputs, r.inputs]) {
      const { ownerId: id, failureDomain: domain } = props ?? {};
      if (typeof id === "string" && typeof domain === "string" && holderName(r.urn, domain) === holder)
        owners.add(id);
    }
  }
  return owners;
}
