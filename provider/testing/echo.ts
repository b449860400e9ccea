import * as pulumi from "@pulumi/pulumi";
import { thinProvider } from "../resources/thin-provider";

/** Inputs of {@link Echo}. */
export interface EchoArgs {
  /** Any string; a new value is an in-place update. */
  value: pulumi.Input<string>;
}

/**
 * The smallest dynamic resource of this package. It exists to prove, end to end, that the engine,
 * the serialized provider shim and the installed package fit together; it manages nothing.
 */
export class Echo extends pulumi.dynamic.Resource {
  /** The stored value. */
  declare public readonly value: pulumi.Output<string>;
  /** 1 after create, incremented by every update. */
  declare public readonly revision: pulumi.Output<number>;

  constructor(name: string, args: EchoArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      thinProvider("echo"),
      name,
      { value: args.value, revision: undefined },
      opts,
      "egress-ipam",
      "Echo",
    );
  }
}
