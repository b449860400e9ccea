import { stackResources } from "./stack-ledger";
import { stackIdentity } from "./stack-identity";

/**
 * Who a new resource is in the owner records its provisioner writes next to what it puts on hosts
 * (`ownerId`: an AWS tag, a Kubernetes object's owners annotation): `<stack identity> <URN>`, made
 * at its first `check` and kept in its state for its life, so a rename with an alias keeps it.
 *
 * The owner is the resource instance, not its name: a resource given a name that another resource
 * of the stack had before it was renamed with an alias gets another text, or the two would be one
 * owner in those records (one's delete would take off what the other relies on). When the state
 * carries the plain text under another URN, the new resource's ends in ` #2` (` #3`, …). Made from
 * the state alone, so preview, `up` and the retry of an interrupted create make the same.
 */
export async function newOwnerId(stack: string, urn: string): Promise<string> {
  const plain = `${await stackIdentity(stack)} ${urn}`;
  const taken = new Set<string>();
  for (const r of await stackResources(stack)) {
    if (r.urn === urn) continue;
    for (const props of [r.outputs, r.inputs])
      if (typeof props?.ownerId === "string" && props.ownerId.startsWith(plain)) taken.add(props.ownerId);
  }
  if (!taken.has(plain)) return plain;
  let n = 2;
  while (taken.has(`${plain} #${n}`)) n++;
  return `${plain} #${n}`;
}
