import { IpamError, isIpamError } from "../core/ipam-error";

/** What a placement refused because somebody else has the address on the platform. */
export interface TakenAddress {
  /** The address, canonical. */
  ip: string;
  /**
   * Whether the address is already where the placement would put it (the namespace's own object
   * lists it, the target interface has it): `adopt: true` takes it over there.
   */
  adoptable: boolean;
}

const marker = Symbol.for("pulumi-egress-ipam/taken-address");

/**
 * The `ADDRESS_IN_USE` refusal of placing `ip`, whose `message` says where the address is and
 * whose; the way out is not part of it. A provisioner cannot name one the product accepts (that
 * needs the stack's allocation of the address and its pool), so the EgressIpAssignment provider
 * adds it (see {@link takenAddressOf}).
 */
export function takenAddress(
  ip: string,
  message: string,
  adoptable = false,
  options?: ErrorOptions,
): IpamError {
  const e = new IpamError("ADDRESS_IN_USE", message, options);
  Object.defineProperty(e, marker, { value: { ip, adoptable } satisfies TakenAddress });
  return e;
}

/**
 * The taken address an error made by {@link takenAddress} refused, also where a step that undid what
 * came before it wrapped that error (still `ADDRESS_IN_USE`, the refusal its `cause`); undefined for
 * any other error.
 */
export function takenAddressOf(e: unknown): TakenAddress | undefined {
  for (let at: unknown = e; isIpamError(at, "ADDRESS_IN_USE"); at = at.cause) {
    const taken = (at as { [marker]?: TakenAddress })[marker];
    if (taken) return taken;
  }
  return undefined;
}
