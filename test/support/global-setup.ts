import { prepareConsumerProject } from "../../scripts/consumer.mjs";
import { startKubeCluster, stopKubeCluster } from "./kube-cluster";
import { goSdk, pluginTarball, pythonSdk } from "./plugin-project";

/**
 * Vitest global setup of the cluster project: one consumer project per run, shared by every test
 * file; the plugin tarball and the Python and Go SDKs of this build (`npm run sdks`), made once
 * here rather than in whichever test asks first, where they would count against its timeout; and
 * the Kubernetes test cluster (started here unless one is running; stopped at the end only when
 * this run started it). Test files find its kubeconfig in EGRESS_IPAM_KUBECONFIG.
 */
export default function setup(): () => void {
  const consumer = prepareConsumerProject();
  process.env.EGRESS_IPAM_CONSUMER = consumer;
  pluginTarball(consumer);
  pythonSdk(consumer);
  goSdk(consumer);
  const cluster = startKubeCluster();
  process.env.EGRESS_IPAM_KUBECONFIG = cluster.kubeconfig;
  return () => {
    if (cluster.started) stopKubeCluster();
  };
}
