/** The dynamic provider stored in the state of every IpPool (see ./shim). */
import { shim } from "./shim";
export = shim("IpPool");
