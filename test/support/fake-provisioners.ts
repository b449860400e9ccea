// Fake provisioners for the resource-provider unit tests, put in place of a kind's real one by
// mocking the provisioner factory module (the package has no registration seam of its own):
//
//   vi.mock("../../../provider/provisioners/create-provisioner", async (original) =>
//     (await import("../../support/fake-provisioners")).withFakes(await original()));
//   fakeProvisioner("ovn", () => fake);
import type * as factory from "../../provider/provisioners/factory/create-provisioner";
import type { EgressIPProvisioner } from "../../provider/provisioners/egress-ip-provisioner";
import {
  provisionerConfigProblems,
  withoutInstanceSettings,
  type ScopedProvisionerConfig,
} from "../../provider/provisioners/config/provisioner-config";

type Make = (config: ScopedProvisionerConfig) => EgressIPProvisioner;
const fakes = new Map<string, Make>();

/** Makes `createProvisioner` build `make(config)` for configs of `kind` in this test file. */
export function fakeProvisioner(kind: ScopedProvisionerConfig["kind"], make: Make): void {
  fakes.set(kind, make);
}

/** The factory module with `createProvisioner` answering faked kinds (for valid configs only). */
export function withFakes(real: typeof factory): typeof factory {
  return {
    ...real,
    createProvisioner: (config) => {
      const make = fakes.get(config.kind);
      if (!make) return real.createProvisioner(config);
      const problems = provisionerConfigProblems(withoutInstanceSettings(config));
      if (problems.length > 0) throw new Error(`invalid provisioner config: ${JSON.stringify(problems)}`);
      return make(config);
    },
  };
}
