import { prepareConsumerProject } from "../../scripts/consumer.mjs";

/** Vitest global setup: one consumer project per run, shared by every end-to-end test file. */
export default function setup(): void {
  process.env.EGRESS_IPAM_CONSUMER = prepareConsumerProject();
}
