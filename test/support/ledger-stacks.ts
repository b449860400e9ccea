// Stacks that share pools through a ledger namespace of the test cluster, as the shared-pool tests
// set them up: a fresh namespace before a describe block's tests, each stack a harness of its own
// (a file backend) with the cluster's kubeconfig, all disposed and the namespace deleted after.
import { afterAll, beforeAll } from "vitest";
import { Harness } from "./harness";
import { freshNamespace, kube, testKubeconfig } from "./kube";

/** What {@link ledgerStacks} gives a describe block. */
export interface LedgerStacks {
  /** The ledger namespace (set once the block's tests start). */
  readonly namespace: string;
  /** A new stack of `project`, disposed after the block. */
  stack(project: string): Harness;
  /** The `ledger` of pool `name` in the namespace, as admin@test, with a short Lease. */
  ledgerOf(name: string): {
    kind: "kubernetes";
    name: string;
    namespace: string;
    context: string;
    lockDuration: string;
  };
}

/** Call inside a describe block: a ledger namespace named from `prefix` and its stacks. */
export function ledgerStacks(prefix: string): LedgerStacks {
  let namespace = "";
  const harnesses: Harness[] = [];
  beforeAll(async () => {
    namespace = await freshNamespace(prefix);
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await kube().core.deleteNamespace({ name: namespace });
  });
  return {
    get namespace() {
      return namespace;
    },
    stack(project) {
      const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
      harnesses.push(h);
      return h;
    },
    ledgerOf: (name) => ({
      kind: "kubernetes",
      name,
      namespace,
      context: "admin@test",
      lockDuration: "5s",
    }),
  };
}
