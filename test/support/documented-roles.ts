// The ClusterRoles docs/provisioners.md documents (its "### RBAC" section), as grants that compare
// regardless of how rules are grouped: what an example or a test binds can be held against them.
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";

const docsFile = path.resolve(__dirname, "..", "..", "docs", "provisioners.md");

/** The rules of each ClusterRole of the first yaml block of the docs' RBAC section, by name. */
export function documentedRoles(): Map<string, k8s.V1PolicyRule[]> {
  const text = fs.readFileSync(docsFile, "utf8");
  const section = /^### RBAC\n([\s\S]*?)(?=^#{2,3} )/m.exec(text + "\n## end")?.[1];
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`${docsFile}: no yaml block in the "### RBAC" section`);
  const roles = new Map<string, k8s.V1PolicyRule[]>();
  for (const doc of k8s.loadAllYaml(block) as (k8s.V1ClusterRole | null)[]) {
    if (doc?.kind === "ClusterRole") roles.set(doc.metadata!.name!, doc.rules ?? []);
  }
  return roles;
}

/** Every `group/resource verb` the rules grant, sorted and without repeats. */
export function grantsOf(rules: k8s.V1PolicyRule[]): string[] {
  const grants = rules.flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) =>
        (rule.verbs ?? []).map((verb) => `${group}/${resource} ${verb}`),
      ),
    ),
  );
  return [...new Set(grants)].sort();
}
