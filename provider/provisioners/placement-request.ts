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
}

/**
 * The request of an assignment placing `ip` for `holder`.
 * @throws IpamError INVALID_ADDRESS when `ip` is not an address.
 */
export function placementRequest(
  ip: string,
  holder: string,
  scope: { namespace?: string; podSelector?: Record<string, string> } = {},
): PlacementRequest {
  const { family } = parseAddress(ip);
  return {
    ip: canonicalAddress(ip),
    family,
    holder,
    ...(scope.namespace ? { namespace: scope.namespace } : {}),
    ...(scope.podSelector ? { podSelector: scope.podSelector } : {}),
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
