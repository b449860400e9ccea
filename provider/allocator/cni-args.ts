import { IpamError } from "../core/ipam-error";
import { shown } from "../core/text";

/** The CNI_ARGS keys host-local understands. */
export interface CniArgs {
  /** A requested address, `ip` or `ip/len`, as written. */
  IP?: string;
  /** Whether unknown keys are tolerated. */
  IgnoreUnknown?: boolean;
}

/**
 * Parses a CNI_ARGS string (`K=V;K2=V2`) the way the CNI library does for host-local: every pair
 * needs exactly one `=`; keys are case-sensitive; an empty `IP=` means no address; unknown keys
 * (e.g. K8S_POD_NAME) are an error unless `IgnoreUnknown` is 1 or true.
 *
 * @throws IpamError INVALID_CONFIG naming the bad pair or the unknown keys.
 */
export function parseCniArgs(text: string): CniArgs {
  const out: CniArgs = {};
  if (text === "") return out;
  const unknown: string[] = [];
  for (const pair of text.split(";")) {
    const kv = pair.split("=");
    if (kv.length !== 2) throw new IpamError("INVALID_CONFIG", `CNI_ARGS: invalid pair ${shown(pair)}`);
    const [key = "", value = ""] = kv;
    if (key === "IP") {
      if (value === "") delete out.IP;
      else out.IP = value;
    } else if (key === "IgnoreUnknown") {
      const flag = value.toLowerCase();
      if (flag !== "1" && flag !== "true" && flag !== "0" && flag !== "false") {
        throw new IpamError("INVALID_CONFIG", `CNI_ARGS: IgnoreUnknown=${value} is not a boolean`);
      }
      out.IgnoreUnknown = flag === "1" || flag === "true";
    } else {
      unknown.push(pair);
    }
  }
  if (unknown.length > 0 && out.IgnoreUnknown !== true) {
    throw new IpamError(
      "INVALID_CONFIG",
      `CNI_ARGS: unknown args ${unknown.join(";")} (add IgnoreUnknown=1 to ignore them)`,
    );
  }
  return out;
}
