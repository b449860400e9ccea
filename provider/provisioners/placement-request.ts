import { canonicalAddress, parseAddress, type AddressFamily } from "../allocator/address";

/**
 * What an assignment asks a provisioner to place: one address, for whom, for which pods. Built once
 * (by {@link placementRequest}) from the assignment's inputs at `check`, so that the address is
 * canonical and its family read from it in one place; a provisioner takes both from here.
 */
export interface PlacementRequest {
  /** The address, canonical. */
  readonly ip: string;
  /** Its family, as the allocator names families. */
  readonly family: AddressFamily;
  /** The assignment's resource, in messages (`EgressIp team-a`). */
  readonly holder: string;
  /** The namespace it serves (the Kubernetes kinds), when the assignment has one. */
  readonly namespace?: string;
  /** The pods it serves within the namespace, by label (ovn, cilium, antrea), when the assignment narrows them. */
  readonly podSelector?: Record<string, string>;
  /**
   * The owner records (`<stack identity> <URN>`) that are this holder's: this assignment's and those
   * of its EgressIp's other assignments (every assignment of an EgressIp takes its pod selection,
   * so a podSelector added or removed moves them all in the same update). A platform object whose
   * addresses are recorded for these alone serves the selection this update moves them out of, not
   * another holder's. Read (from the stack's state) when first asked.
   */
  readonly holderOwners: () => Promise<ReadonlySet<string>>;
}

/**
 * The request of an assignment placing `ip` for `holder`; `holderOwners` reads its owner records
 * (see {@link PlacementRequest.holderOwners}; none by default), once.
 * @throws IpamError INVALID_ADDRESS when `ip` is not an address.
 */
export function placementRequest(
  ip: string,
  holder: string,
  scope: { namespace?: string; podSelector?: Record<string, string> } = {},
  holderOwners: () => Promise<ReadonlySet<string>> = () => Promise.resolve(new Set()),
): PlacementRequest {
  const { family } = parseAddress(ip);
  let owners: Promise<ReadonlySet<string>> | undefined;
  return {
    ip: canonicalAddress(ip),
    family,
    holder,
    ...(scope.namespace ? { namespace: scope.namespace } : {}),
    ...(scope.podSelector ? { podSelector: scope.podSelector } : {}),
    holderOwners: () => (owners ??= holderOwners()),
  };
}

/**
 * `read`, made once per request: the refusals one `check` asks of a provisioner (its `validate`,
 * `adoptable` and `conflicts`, each given the same request) see one reading of the cluster.
 */
export function oncePerRequest<T>(read: () => Promise<T>): (request: PlacementRequest) => Promise<T> {
  const readings = new WeakMap<PlacementRequest, Promise<T>>();
  return (request) => {
    let reading = readings.get(request);
    if (!reading) {
      reading = read();
      readings.set(request, reading);
    }
    return reading;
  };
}
