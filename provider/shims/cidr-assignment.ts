/** The dynamic provider stored in the state of every CidrAssignment (see ./shim). */
import { shim } from "./shim";
export = shim("CidrAssignment");
