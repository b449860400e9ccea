/** The dynamic provider stored in the state of every NoopAllocation (see ./shim). */
import { shim } from "./shim";
export = shim("noop-allocation");
