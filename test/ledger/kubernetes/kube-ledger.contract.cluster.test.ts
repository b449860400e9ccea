// The Ledger contract (../ledger-contract.ts) against the Kubernetes ledger on the real kube-apiserver.
import { afterAll, beforeAll } from "vitest";
import { kubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";
import { ledgerContract } from "../ledger-contract";

let ns = "";
beforeAll(async () => {
  ns = await freshNamespace("contract");
});
afterAll(() => kube().core.deleteNamespace({ name: ns }));

ledgerContract("kubeLedger", async () => {
  process.env.KUBECONFIG = testKubeconfig();
  const name = uniqueName("c");
  // A new ledger object has a fresh client and lock: what another process of the stack would have.
  const make = () =>
    kubeLedger({
      stack: "o/p/contract",
      clients: kubeClients({ context: "admin@test" }),
      ledger: { name, namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 60_000 },
    });
  return { ledger: make(), again: make, pool: name };
});
