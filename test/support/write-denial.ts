// Injected write failures on the real kube-apiserver, without a webhook: a ValidatingAdmissionPolicy
// (admissionregistration.k8s.io/v1, evaluated by the API server itself) denies updates of one named
// object, optionally only those a CEL condition picks. The API server answers such a write with 422
// Invalid, as it would for any admission refusal.
import type * as k8s from "@kubernetes/client-node";
import { kube, uniqueName } from "./kube";

/** What to deny: updates of the cluster-scoped object `name` of `group`/`resource`. */
export interface DeniedWrites {
  group: string;
  /** Plural resource name, e.g. `hostsubnets`. */
  resource: string;
  name: string;
  /** A CEL condition on `object` / `oldObject`; updates of the object are denied only when it holds. */
  when?: string;
}

const admission = "admissionregistration.k8s.io/v1";

/**
 * Denies the writes until the returned function is called; resolves once the API server applies the
 * policy (policies take effect, and end, a moment after they are created or deleted), probed with a
 * dry-run update that only the policy's probe clause denies. The returned function resolves once the
 * policy no longer applies.
 */
export async function denyWrites(d: DeniedWrites): Promise<() => Promise<void>> {
  const { objects } = kube();
  const policy = uniqueName("egress-test-deny");
  const probe = `egress-test-probe/${policy}`;
  const probing = `(request.dryRun == true && has(object.metadata.labels) && '${probe}' in object.metadata.labels)`;
  const denied = `${probing} || (request.dryRun != true && (${d.when ?? "true"}))`;
  const body = (kind: string, spec: Record<string, unknown>) =>
    ({ apiVersion: admission, kind, metadata: { name: policy }, spec }) as k8s.KubernetesObject;
  await objects.create(
    body("ValidatingAdmissionPolicy", {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: [d.group], apiVersions: ["*"], operations: ["UPDATE"], resources: [d.resource] },
        ],
      },
      matchConditions: [{ name: "the-object", expression: `object.metadata.name == '${d.name}'` }],
      validations: [{ expression: `!(${denied})`, message: `injected failure (policy ${policy})` }],
    }),
  );
  await objects.create(
    body("ValidatingAdmissionPolicyBinding", { policyName: policy, validationActions: ["Deny"] }),
  );
  // Whether the policy is in force: a dry-run update carrying the probe label is denied by it.
  const inForce = async (): Promise<boolean> => {
    const current = await objects.read({
      apiVersion: d.group === "" ? "v1" : `${d.group}/${versions[d.resource] ?? "v1"}`,
      kind: kindOf(d.resource),
      metadata: { name: d.name },
    });
    const labels = { ...current.metadata?.labels, [probe]: "1" };
    try {
      await objects.replace({ ...current, metadata: { ...current.metadata, labels } }, undefined, "All");
      return false;
    } catch (err) {
      if (String((err as { body?: unknown }).body ?? err).includes(policy)) return true;
      throw err;
    }
  };
  const until = async (wanted: boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while ((await inForce()) !== wanted) {
      if (Date.now() > deadline)
        throw new Error(`ValidatingAdmissionPolicy ${policy} was not ${what} within 20 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const remove = async () => {
    for (const kind of ["ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"]) {
      await objects
        .delete({ apiVersion: admission, kind, metadata: { name: policy } } as k8s.KubernetesObject)
        .catch(() => undefined);
    }
    await until(false, "lifted");
  };
  try {
    await until(true, "applied");
  } catch (err) {
    await remove();
    throw err;
  }
  return remove;
}

const kinds: Record<string, string> = {
  hostsubnets: "HostSubnet",
  netnamespaces: "NetNamespace",
  egressips: "EgressIP",
  ciliumegressgatewaypolicies: "CiliumEgressGatewayPolicy",
  nodes: "Node",
};

/** API versions other than v1. */
const versions: Record<string, string> = { ciliumegressgatewaypolicies: "v2" };

function kindOf(resource: string): string {
  const kind = kinds[resource];
  if (!kind) throw new Error(`denyWrites: add the kind of ${resource} to the table`);
  return kind;
}
