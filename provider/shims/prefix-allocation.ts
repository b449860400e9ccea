/** The dynamic provider stored in the state of every PrefixAllocation (see ./shim). */
import { shim } from "./shim";
export = shim("PrefixAllocation");
