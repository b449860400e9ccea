/** The dynamic provider stored in the state of every IpAllocation (see ./shim). */
import { shim } from "./shim";
export = shim("IpAllocation");
