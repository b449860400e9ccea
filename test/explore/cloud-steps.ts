/**
 * What people and failures do in a cloud world's EC2 during a sequence (take an address off its
 * host, terminate an instance, hand an address to a pod's interface), and what the program then
 * adopts of it (its own Elastic IPs).
 */
import type { Harness } from "../support/harness";
import { handOver, terminate, unassign, type Cloud } from "./cloud";
import { checkSays } from "./after-step";
import { errorText } from "./engine-text";
import type { SlotValue, Violation } from "./invariants";
import type { Edit } from "./world";

/** The edits that happen in the cloud before the next up repairs what they did. */
export const isCloudFault = (edit: Edit): boolean =>
  edit.op === "unassign" || edit.op === "terminate" || edit.op === "handOver";

/**
 * Does what `edit` does in the cloud: a removed address is then found by refresh, a terminated
 * host's addresses move at the next plain up. Returns the broken promise, if any, and whether
 * somebody else's things changed on purpose (an address handed over), so must be read again.
 */
export async function applyCloudFault(
  h: Harness,
  cloud: Cloud,
  edit: Edit,
  values: Map<string, SlotValue>,
): Promise<{ violation?: Violation; handedOver: boolean }> {
  const own = (holder: number) => [...values].find(([key]) => key.startsWith(`h${holder}/`));
  let handedOver = false;
  if (edit.op === "unassign") {
    const value = own(edit.holder)?.[1];
    if (value) await unassign(cloud, value.value);
    try {
      await h.refresh();
    } catch (e) {
      const message = `refresh after an address was taken off failed: ${errorText(e)}`;
      return { violation: { invariant: "quiet", message }, handedOver };
    }
  }
  if (edit.op === "terminate") await terminate(cloud, edit.host);
  if (edit.op === "handOver") {
    const found = own(edit.holder);
    if (found?.[1].host) {
      const domain = found[0].split("/")[1]!;
      await handOver(cloud, found[1].value, found[1].host, cloud.subnetOf[domain]!);
      handedOver = true;
    }
  }
  const violation = await checkSays(h, cloud, false);
  return { ...(violation ? { violation } : {}), handedOver };
}

/** The Elastic IP (allocation ID) each IPv4 address of an aws EgressIp has now, from the checkpoint. */
export async function ownElasticIps(
  h: Harness,
  values: Map<string, SlotValue>,
  holder: number,
): Promise<Record<string, string>> {
  const ips = [...values].filter(([key]) => key.startsWith(`h${holder}/`)).map(([, v]) => v.value);
  const out: Record<string, string> = {};
  for (const r of await h.resources()) {
    const ip = r.outputs?.ip;
    const id = r.outputs?.publicId;
    if (
      r.type.endsWith("EgressIpAssignment") &&
      typeof ip === "string" &&
      typeof id === "string" &&
      ips.includes(ip)
    )
      out[ip] = id;
  }
  return out;
}
