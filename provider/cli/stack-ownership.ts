import { ownerTagValue } from "../provisioners/aws/aws-provisioner";
import type { EgressIPProvisioner, Placement } from "../provisioners/egress-ip-provisioner";
import type { StackSnapshot } from "./stack-snapshot";
import { dynamicTypePrefix, ownKind, pluginTypePrefix } from "../core/resource-types";

// Which of the addresses `check` sees on hosts are this stack's, by the owner records the
// provisioners write next to them: only those are ever reported leaked (with a removal command);
// every other address is in use by others, whoever they are.

const egressIpType = "egress-ipam:index:EgressIp";
/** An EgressIp's assignments are dynamic resources in a TypeScript program, the plugin's in any other. */
const assignmentTypes = [dynamicTypePrefix, pluginTypePrefix].map((p) => `${p}EgressIpAssignment`);

/** The stack as owner records name it, read from its state. */
export interface StackOwnership {
  /** The stack's identities (`stackId` outputs, the first word of `ownerId` outputs): normally one. */
  identities: Set<string>;
  /**
   * Whether `p`'s owner record names this stack. `style` is how the provisioner records owners
   * ({@link EgressIPProvisioner.placementOwners}); an address nobody is recorded for is not ours.
   */
  isOurs(p: Placement, style: NonNullable<EgressIPProvisioner["placementOwners"]>): boolean;
  /**
   * Whether `p`'s owner record names the assignment `urn` itself, where the record is kept per
   * host (`hashed`: the aws interface's tag): an interrupted move of that assignment left it there.
   * A `named` record is the object's, whichever host lists the address: never.
   */
  namesAssignment(
    p: Placement,
    style: NonNullable<EgressIPProvisioner["placementOwners"]>,
    urn: string,
  ): boolean;
}

/**
 * The stack's ownership from its snapshot. A `named` record (`<stack identity> <URN>`, Kubernetes
 * kinds) is ours when its identity is the stack's. A `hashed` one (the aws tag, a hash of that
 * text) is ours when it is the hash of the stack's identity with a URN of the stack: every URN in
 * its state and interrupted creates, and the EgressIpAssignments that its EgressIps make in the
 * failure domains its state names (an assignment dropped from state by `pulumi state delete`);
 * and every owner text its state keeps. A record of a URN the stack no longer names anywhere cannot
 * be told from another stack's: it is in use by others, never removed on a guess.
 */
export function stackOwnership(snapshot: StackSnapshot): StackOwnership {
  const all = [...snapshot.resources, ...snapshot.pendingCreates];
  const identities = new Set<string>();
  for (const r of all) {
    if (ownKind(r.type) === undefined) continue;
    for (const props of [r.outputs, r.inputs]) {
      if (typeof props?.stackId === "string" && props.stackId !== "") identities.add(props.stackId);
      if (typeof props?.ownerId === "string" && props.ownerId.includes(" "))
        identities.add(props.ownerId.slice(0, props.ownerId.indexOf(" ")));
    }
  }
  const urns = new Set(all.map((r) => r.urn));
  // The owner texts the state keeps, as made (`newOwnerId`: one of a name freed by a rename has a suffix).
  const ownerIds = new Set<string>();
  const ownerIdsOf = new Map<string, string[]>();
  for (const r of all) {
    for (const props of [r.outputs, r.inputs]) {
      if (ownKind(r.type) === undefined || typeof props?.ownerId !== "string") continue;
      ownerIds.add(props.ownerId);
      ownerIdsOf.set(r.urn, [...(ownerIdsOf.get(r.urn) ?? []), props.ownerId]);
    }
  }
  const domains = new Set<string>();
  for (const r of all) {
    if (ownKind(r.type) !== "EgressIpAssignment") continue;
    const d = r.inputs?.failureDomain ?? r.outputs?.failureDomain;
    if (typeof d === "string") domains.add(d);
  }
  for (const r of all) {
    if (r.type !== egressIpType) continue;
    for (const d of domains)
      for (const type of assignmentTypes)
        for (const suffix of ["", "-ipv6"]) urns.add(childUrn(r.urn, type, d, suffix));
  }
  let hashes: Set<string> | undefined;
  const hashed = () =>
    (hashes ??= new Set([
      ...[...identities].flatMap((id) => [...urns].map((urn) => ownerTagValue(`${id} ${urn}`))),
      ...[...ownerIds].map(ownerTagValue),
    ]));
  return {
    identities,
    isOurs(p, style) {
      const owners = p.owners ?? [];
      if (style === "named") return owners.some((o) => identities.has(o.split(" ")[0]!));
      return owners.some((o) => hashed().has(o));
    },
    namesAssignment(p, style, urn) {
      if (style !== "hashed") return false;
      const texts = [...[...identities].map((id) => `${id} ${urn}`), ...(ownerIdsOf.get(urn) ?? [])];
      const own = new Set(texts.map(ownerTagValue));
      return (p.owners ?? []).some((o) => own.has(o));
    },
  };
}

/**
 * The URN of the child of `parent` of type `type` named as an EgressIp names its assignment in
 * `domain` (`suffix` "-ipv6" for its IPv6 one).
 */
function childUrn(parent: string, type: string, domain: string, suffix: string): string {
  const parts = parent.split("::");
  const [head, project, parentType] = parts;
  const name = parts.slice(3).join("::");
  return `${head}::${project}::${parentType}$${type}::${domain === "" ? name : `${name}-${domain}`}${suffix}`;
}
