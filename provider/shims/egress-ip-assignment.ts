/** The dynamic provider stored in the state of every EgressIpAssignment (see ./shim). */
import { shim } from "./shim";
export = shim("EgressIpAssignment");
