import { prepareConsumerProject } from "../../scripts/consumer.mjs";
import { startKubeCluster, stopKubeCluster } from "./kube-cluster";

/**
 * Vitest global setup of the end-to-end project: one consumer project per run, shared by every
 * test file, and the Kubernetes test cluster (started here unless one is running; stopped at the
 * end only when this run started it). Test files find its kubeconfig in EGRESS_IPAM_KUBECONFIG.
 */
export default function setup(): () => void {
  process.env.EGRESS_IPAM_CONSUMER = prepareConsumerProject();
  const cluster = startKubeCluster();
  process.env.EGRESS_IPAM_KUBECONFIG = cluster.kubeconfig;
  return () => {
    if (cluster.started) stopKubeCluster();
  };
}
