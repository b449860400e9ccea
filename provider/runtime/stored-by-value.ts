import { warnOnce } from "../core/warnings";
import type { ProviderImpl } from "../resources/provider-props";

// Pulumi's closure serializer writes a module of an installed package as a `require` of its name:
// the provider text in state is then `require("pulumi-egress-ipam/shims/<kind>")`, about 270 bytes.
// When the package is linked instead (`npm link`, a workspace symlink, a `file:` folder dependency),
// its modules are not under node_modules, and the serializer stores the shim's functions by value:
// several KB per resource, twice (inputs and outputs), rewritten at every checkpoint write.

/** The mark of a provider stored by reference. */
const byReference = "pulumi-egress-ipam/shims/";

let warned = false;

/**
 * `impl` with a check that warns once per provider process (one per deployment: every kind's
 * resources share it) when the provider text the engine sent (`__provider`) is stored by value,
 * naming the cause and the cost.
 */
export function warnWhenStoredByValue(impl: ProviderImpl): ProviderImpl {
  return {
    ...impl,
    check(olds, news) {
      const text: unknown = news.__provider;
      if (!warned && typeof text === "string" && !text.includes(byReference)) {
        warned = true;
        warnOnce(
          `this package's providers are stored in state by value (${text.length} bytes in each resource's ` +
            `inputs and again in its outputs, instead of a ${byReference}… reference of about 270): pulumi-egress-ipam is ` +
            `linked (npm link, a workspace symlink, a file: folder) rather than installed in node_modules. ` +
            `Install it as a package (from the registry, or a packed tarball: npm pack, npm run example) to store ` +
            `a reference; state written meanwhile keeps working either way`,
        );
      }
      return impl.check(olds, news);
    },
  };
}
