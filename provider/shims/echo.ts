/** The dynamic provider stored in the state of every Echo (see ./shim). */
import { shim } from "./shim";
export = shim("echo");
