import { prepareConsumerProject } from "../../scripts/consumer.mjs";

/**
 * Vitest global setup of the `e2e` project (end-to-end tests that need neither the Kubernetes test
 * cluster nor the example projects' language host): one consumer project per run, shared by every
 * test file. The `cluster` project's setup (global-setup.ts) also starts the cluster.
 */
export default function setup(): void {
  process.env.EGRESS_IPAM_CONSUMER = prepareConsumerProject();
}
