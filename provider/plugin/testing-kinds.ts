import type { Props } from "../resources/provider-props";
import type { PluginContext } from "./plugin-kinds";

/**
 * The plugin's test resources, served only where `EGRESS_IPAM_PLUGIN_TESTING=1` (the engine
 * benchmark): `egress-ipam:testing:Echo` and `egress-ipam:testing:NoopAllocation`, the plugin's
 * forms of the `testing` export's Echo and NoopAllocation. They are in no published schema or SDK.
 */
export const testingEnabled = (): boolean => process.env.EGRESS_IPAM_PLUGIN_TESTING === "1";

/** A test kind: its key in the runtime's provider table, whether it is ordered as an allocation, and its inputs as that provider takes them. */
interface TestKind {
  impl: string;
  ordered: boolean;
  inputs: (i: Props, ctx: PluginContext) => Props;
}

/** Each test kind. */
export const testingKinds: Record<string, TestKind> = {
  Echo: { impl: "echo", ordered: false, inputs: (i) => i },
  // As NoopAllocation's class makes them: the pool's URN, and who asks. `after` orders it as an allocation's does.
  NoopAllocation: {
    impl: "noop-allocation",
    ordered: true,
    inputs: (i, ctx) => {
      const { after: _after, ...rest } = i;
      return { ...rest, holder: { stack: ctx.stack, owner: ctx.urn } };
    },
  },
};

/** The test kinds' schema entries, added to the plugin's schema where they are served. */
export const testingSchema = {
  "egress-ipam:testing:Echo": {
    description: "Stores `value` (tests and benchmarks only).",
    inputProperties: { value: { type: "string", description: "Any text." } },
    requiredInputs: ["value"],
    properties: { value: { type: "string", description: "The text." } },
    required: ["value"],
  },
  "egress-ipam:testing:NoopAllocation": {
    description: "Keeps what an IpAllocation keeps and plans nothing (tests and benchmarks only).",
    inputProperties: {
      pool: { $ref: "#/resources/egress-ipam:testing:Echo", description: "The stand-in pool." },
      seq: { type: "integer", description: "Which address of 10.64.0.0/16 to show." },
      after: {
        $ref: "#/resources/egress-ipam:testing:NoopAllocation",
        description: "Orders it as after orders an allocation.",
      },
    },
    requiredInputs: ["pool", "seq"],
    properties: { ip: { type: "string", description: "The address." } },
    required: ["ip"],
  },
};
