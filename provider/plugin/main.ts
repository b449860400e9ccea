/**
 * The `pulumi-resource-egress-ipam` plugin's entry point: serves this package's resources under the
 * type tokens `egress-ipam:index:<Kind>` to programs in any Pulumi language (see docs/languages.md).
 * @packageDocumentation
 */
// First: on a Node.js older than the package needs, nothing else loads (the process exits here).
import "./supported-node";
import { main } from "@pulumi/pulumi/provider";
import { EgressIpamProvider } from "./plugin-provider";
import schema from "./schema.json";
import { registerPluginTypes } from "./egress-ip-construct";
import { testingEnabled, testingSchema } from "./testing-kinds";
import { exitWhenEngineGone, pluginEngineAddress } from "../runtime/engine-watch";

// The engine starts the plugin with its address; a plugin whose engine was killed exits.
exitWhenEngineGone(pluginEngineAddress(process.argv.slice(2)));
registerPluginTypes(schema.version);
const served = testingEnabled()
  ? { ...schema, resources: { ...schema.resources, ...testingSchema } }
  : schema;
void main(new EgressIpamProvider(schema.version, JSON.stringify(served)), process.argv.slice(2));
