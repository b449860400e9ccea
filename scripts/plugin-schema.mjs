// Writes (or, with --check, verifies) provider/plugin/schema.json, the Pulumi package schema of the
// egress-ipam plugin, from the TypeScript Args interfaces and resource classes and their TSDoc: the
// plugin's resources, the SDKs generated from the schema and the TypeScript API cannot drift.
// Usage: node scripts/plugin-schema.mjs [--check]
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

const root = process.env.API_DOCS_ROOT ?? path.resolve(import.meta.dirname, "..");
const out = path.join(root, "provider/plugin/schema.json");
const pkg = "egress-ipam";
const token = (name) => `${pkg}:index:${name}`;

/** The plugin's resources: the Args interface and class of each, what the plugin leaves out, and its own inputs. */
const after = (kind) => ({
  after: {
    $ref: `#/resources/${token(kind)}`,
    description:
      `The ${kind} of the same pool that takes its address before this one, when both are new in one update ` +
      "(programs in languages other than TypeScript): new holders of a pool form one chain, so preview shows " +
      "what up assigns. Only the order of new holders; existing ones keep their addresses.",
  },
});
const resources = [
  // `ref` is how a TypeScript holder takes the pool; the plugin's holders take a reference to it.
  {
    kind: "IpPool",
    file: "provider/resources/ip-pool/ip-pool.ts",
    args: "IpPoolArgs",
    omitOutputs: ["ref"],
    extra: {
      shared: {
        type: "boolean",
        description:
          "A tenant's reference to a pool another stack owns and stored in `ledger` (TypeScript: IpPool.shared): " +
          "give only `ledger`; the pool's definition and quotas are read from the ledger at every check, so the " +
          "owner grows the pool without this program changing. Anything else given is refused at preview.",
      },
    },
  },
  {
    kind: "IpAllocation",
    file: "provider/resources/ip-allocation/ip-allocation.ts",
    args: "IpAllocationArgs",
    omit: ["adoptFrom"],
    extra: after("IpAllocation"),
  },
  {
    kind: "PrefixAllocation",
    file: "provider/resources/prefix-allocation/prefix-allocation.ts",
    args: "PrefixAllocationArgs",
    extra: after("PrefixAllocation"),
  },
  {
    kind: "CidrAssignment",
    file: "provider/resources/cidr-assignment/cidr-assignment.ts",
    args: "CidrAssignmentArgs",
  },
  {
    kind: "EgressIpAssignment",
    file: "provider/resources/egress-ip/egress-ip-assignment.ts",
    args: "EgressIpAssignmentArgs",
  },
  {
    // A component the plugin constructs (provider/plugin/egress-ip-construct.ts) of its own resources.
    kind: "EgressIp",
    file: "provider/resources/egress-ip/egress-ip.ts",
    args: "EgressIpArgs",
    component: true,
    // Its children are resources of a TypeScript program's own; the component's outputs say what they hold.
    omitOutputs: ["allocations", "assignments"],
    // Plain, as in TypeScript: the construct names and chains its children by the pools and `after`.
    overrides: {
      pool: {
        $ref: "pulumi.json#/Any",
        plain: true,
        description:
          'The IpPool the addresses come from, or one IpPool per failure domain ({ "us-east-1a": poolA, … }): on AWS a subnet lives in one availability zone, so each zone needs a pool of its own subnet.',
      },
    },
    extra: {
      after: {
        $ref: "pulumi.json#/Any",
        plain: true,
        description:
          "The EgressIp whose addresses are planned before this one's, when both are new in one update and take from a pool they share (programs in languages other than TypeScript): each of this one's first address per pool follows that EgressIp's last. Or an IpAllocation (or PrefixAllocation) new in the same update: each of this one's first address per pool follows it.",
      },
    },
  },
];

const program = ts.createProgram([path.join(root, "provider/index.ts")], {
  strict: true,
  baseUrl: root,
  paths: { "pulumi-egress-ipam/*": ["./provider/*"] },
});
const checker = program.getTypeChecker();
const docOf = (node) =>
  ts
    .getJSDocCommentsAndTags(node)
    .map((d) => (typeof d.comment === "string" ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? "")))
    .join(" ")
    .replace(/\{@link\s+([^}\s]+)\s*\}/g, "$1")
    .replace(/\s+/g, " ")
    .trim();

const types = {};

/** The declaration a type reference names (an interface, class or alias), through imports. */
function declarationOf(ref) {
  let symbol = checker.getSymbolAtLocation(ref.typeName);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.declarations?.[0];
}

/** The schema of a TypeScript type node, or an error naming it. */
function schemaOf(node, where) {
  const text = node.getText();
  if (node.kind === ts.SyntaxKind.StringKeyword) return { type: "string" };
  if (node.kind === ts.SyntaxKind.NumberKeyword) return { type: "number" };
  if (node.kind === ts.SyntaxKind.BooleanKeyword) return { type: "boolean" };
  if (ts.isParenthesizedTypeNode(node)) return schemaOf(node.type, where);
  if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) return { type: "string" };
  if (ts.isArrayTypeNode(node)) return { type: "array", items: schemaOf(node.elementType, where) };
  if (ts.isUnionTypeNode(node)) {
    const parts = node.types.filter((t) => t.kind !== ts.SyntaxKind.UndefinedKeyword);
    if (parts.every((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)))
      return { type: "string" };
    if (parts.length === 1) return schemaOf(parts[0], where);
  }
  if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText();
    const args = node.typeArguments ?? [];
    if (name === "pulumi.Input" || name === "pulumi.Output") return schemaOf(args[0], where);
    if (name === "Record" && args[0]?.kind === ts.SyntaxKind.StringKeyword)
      return { type: "object", additionalProperties: schemaOf(args[1], where) };
    if (name === "IpPool") return { $ref: `#/resources/${token("IpPool")}` };
    // A provisioner config is one of several kinds (docs/provisioners.md): checked by the provider.
    if (name === "ProvisionerArgs") return { $ref: "pulumi.json#/Any" };
    const decl = declarationOf(node);
    if (decl && ts.isInterfaceDeclaration(decl)) {
      // `LedgerArgs` is `Ledger` in the SDKs, which add their own `Args` to input types.
      const type = token(name.replace(/Args$/, ""));
      if (!types[type]) {
        types[type] = { type: "object" }; // before its members: a type may refer to itself
        types[type] = { type: "object", ...objectOf(decl, `${where} → ${name}`, "inputs") };
      }
      return { $ref: `#/types/${type}` };
    }
  }
  throw new Error(`${where}: the type ${text} has no schema form; add one to scripts/plugin-schema.mjs`);
}

/** Whether a TypeScript type takes only a plain value: no `pulumi.Input` (or Output) around it. */
const takesPlain = (node) =>
  !(ts.isTypeReferenceNode(node) && ["pulumi.Input", "pulumi.Output"].includes(node.typeName.getText()));

/**
 * `schema` marked `plain` where the TypeScript type `node` takes only a plain value, and its items or
 * values where theirs do (`string[]`: a plain list of plain strings; `pulumi.Input<string>[]`: a
 * plain list of inputs), so the SDKs type the input as TypeScript does and the plugin can refuse an
 * output there (provider/plugin/plain-inputs.ts).
 */
function plainWhere(schema, node) {
  if (ts.isParenthesizedTypeNode(node)) return plainWhere(schema, node.type);
  if (!takesPlain(node)) return schema;
  const out = { ...schema, plain: true };
  if (ts.isArrayTypeNode(node) && schema.items) out.items = plainWhere(schema.items, node.elementType);
  if (ts.isTypeReferenceNode(node) && node.typeName.getText() === "Record" && schema.additionalProperties)
    out.additionalProperties = plainWhere(schema.additionalProperties, node.typeArguments[1]);
  return out;
}

/**
 * The properties of an interface (inputs) or the public readonly fields of a class (outputs);
 * `plain`: a resource's inputs, marked plain where TypeScript takes only a plain value (the fields
 * of object types are not: TypeScript takes each such object whole as an input).
 */
function objectOf(decl, where, kind, omit = [], plain = false) {
  const properties = {};
  const required = [];
  for (const m of decl.members) {
    if (!m.name || !ts.isIdentifier(m.name) || omit.includes(m.name.text)) continue;
    if (kind === "outputs") {
      if (!ts.isPropertyDeclaration(m)) continue;
      const mods = ts.getCombinedModifierFlags(m);
      if (!(mods & ts.ModifierFlags.Public) || !(mods & ts.ModifierFlags.Readonly)) continue;
    } else if (!ts.isPropertySignature(m)) continue;
    const name = m.name.text;
    const description = docOf(m);
    if (!description) throw new Error(`${where}.${name} has no TSDoc; document it`);
    const schema = plain
      ? plainWhere(schemaOf(m.type, `${where}.${name}`), m.type)
      : schemaOf(m.type, `${where}.${name}`);
    properties[name] = { ...schema, description, ...(name === "kubeconfig" ? { secret: true } : {}) };
    const optional =
      kind === "outputs" ? /\|\s*undefined\b/.test(m.type.getText()) : Boolean(m.questionToken);
    if (!optional) required.push(name);
  }
  return { properties, required };
}

function declarations(file) {
  const source = program.getSourceFile(path.join(root, file));
  if (!source) throw new Error(`${file} is not part of provider/index.ts's program`);
  const found = new Map();
  for (const node of source.statements) {
    if ((ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) && node.name)
      found.set(node.name.text, node);
  }
  return found;
}

const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const schema = {
  name: pkg,
  displayName: "egress-ipam",
  version,
  description:
    "IP address pools and egress IPs: CNI host-local semantics, the exact address shown at preview, shared pools, AWS and OpenShift provisioners.",
  license: "Apache-2.0",
  keywords: ["ipam", "egress", "kubernetes", "openshift", "aws"],
  language: {
    // The SDKs carry the schema's version, so a program asks the engine for exactly this plugin.
    // No `requires`: the code generator then makes the wheel require the `pulumi` SDK its generated
    // code needs (3.269.0 for pulumi-codegen v3.276.0: every resource's `get` calls
    // `pulumi.runtime.exists_resource`), where a floor given here would replace it and let pip
    // install an SDK the code fails on (test/e2e/plugin-install.cluster.test.ts).
    python: {
      packageName: "pulumi_egress_ipam",
      respectSchemaVersion: true,
    },
    go: {
      importBasePath: "pulumi-egress-ipam/sdk/go/egressipam",
      generateResourceContainerTypes: false,
      respectSchemaVersion: true,
    },
  },
  types,
  resources: {},
};
for (const r of resources) {
  const decls = declarations(r.file);
  const args = decls.get(r.args);
  const cls = decls.get(r.kind);
  if (!args || !cls) throw new Error(`${r.file}: ${r.args} or ${r.kind} not found`);
  const inputs = objectOf(
    args,
    r.args,
    "inputs",
    [...(r.omit ?? []), ...Object.keys(r.overrides ?? {})],
    true,
  );
  const outputs = objectOf(cls, r.kind, "outputs", r.omitOutputs ?? []);
  const required = Object.keys(r.overrides ?? {}).filter((k) =>
    args.members.some((m) => m.name?.text === k && !m.questionToken),
  );
  schema.resources[token(r.kind)] = {
    description: docOf(cls),
    ...(r.component ? { isComponent: true } : {}),
    inputProperties: { ...inputs.properties, ...(r.overrides ?? {}), ...(r.extra ?? {}) },
    requiredInputs: [...inputs.required, ...required],
    properties: outputs.properties,
    required: outputs.required,
  };
}

const text = `${JSON.stringify(schema, null, 2)}\n`;
if (process.argv.includes("--check")) {
  const current = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "";
  if (current !== text) {
    console.error(
      "provider/plugin/schema.json is not what the TypeScript API gives: run node scripts/plugin-schema.mjs",
    );
    process.exit(1);
  }
  console.log(`plugin schema: ${Object.keys(schema.resources).length} resources match the TypeScript API`);
} else {
  fs.writeFileSync(out, text);
  console.log(
    `plugin schema: ${Object.keys(schema.resources).length} resources written to provider/plugin/schema.json`,
  );
}
