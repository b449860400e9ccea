/** The dynamic provider stored in the state of every echo (see ./shim). */
import { shim } from "./shim";
export = shim("echo");
