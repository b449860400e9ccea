// Installs (or updates) every CustomResourceDefinition in a folder of YAML files into the cluster
// of $KUBECONFIG, and waits until each is Established. Used by scripts/kube-test-cluster.sh.
//   node scripts/kube-install-crds.mjs <folder>
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";

const folder = process.argv[2];
if (!folder) {
  console.error("usage: node scripts/kube-install-crds.mjs <folder of CRD YAML files>");
  process.exit(2);
}
const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const api = kc.makeApiClient(k8s.ApiextensionsV1Api);

const files = fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => /\.ya?ml$/.test(f)) : [];
const names = [];
for (const file of files.sort()) {
  for (const crd of k8s.loadAllYaml(fs.readFileSync(path.join(folder, file), "utf8"))) {
    if (!crd) continue;
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (err) {
      if (err?.code !== 409) throw new Error(`${file}: ${err?.body ?? err}`, { cause: err });
      const current = await api.readCustomResourceDefinition({ name: crd.metadata.name });
      crd.metadata.resourceVersion = current.metadata.resourceVersion;
      await api.replaceCustomResourceDefinition({ name: crd.metadata.name, body: crd });
    }
    names.push(crd.metadata.name);
  }
}

const deadline = Date.now() + 60_000;
for (const name of names) {
  for (;;) {
    const crd = await api.readCustomResourceDefinition({ name });
    const established = crd.status?.conditions?.find((c) => c.type === "Established")?.status === "True";
    if (established) break;
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not Established within 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
console.error(`kube-install-crds: ${names.length} CRDs established: ${names.join(", ")}`);
