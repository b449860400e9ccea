import type { PlacementRequest } from "../placement-request";
import { sdnFamilyProblem } from "../kubernetes/sdn-family";

/** Each kind's rule of what it can never place, whatever the cluster holds. */
const rules: Record<string, (kind: string, request: PlacementRequest) => string | undefined> = {
  "ocp-static": sdnFamilyProblem,
  "ocp-dynamic": sdnFamilyProblem,
};

/**
 * Why a provisioner of `kind` can never place `request` (OpenShift SDN: an IPv6 address), asked
 * at `check` with the other input problems, before any provisioner is built; empty when it can.
 */
export function placementProblems(kind: string | undefined, request: PlacementRequest): string[] {
  const problem = kind === undefined ? undefined : rules[kind]?.(kind, request);
  return problem ? [problem] : [];
}
