import type { PlacementRequest } from "../placement-request";

/**
 * Why OpenShift SDN (ocp-static, ocp-dynamic: `kind`) cannot place the request's address, or
 * undefined when it can: it places IPv4 egress addresses only.
 */
export function sdnFamilyProblem(kind: string, { ip, family }: PlacementRequest): string | undefined {
  if (family === 4) return undefined;
  return (
    `${ip} is an IPv6 address, and OpenShift SDN (${kind}) places IPv4 egress addresses only: ` +
    `take this namespace's addresses from an IPv4 pool (families: "ipv4" on a dual-stack one), or move it to ovn`
  );
}
