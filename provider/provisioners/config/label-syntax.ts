import { shown } from "../../core/text";

// Label keys and values as Kubernetes validates them (apimachinery's IsQualifiedName and
// IsValidLabelValue): a name or value of at most 63 characters, a key's optional prefix a DNS
// subdomain. What the API server refuses, or a platform stores and never matches, is refused at
// preview instead.

const labelName = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const labelPrefix = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** True for a valid label key (`[prefix/]name`). */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  return (
    name.length > 0 &&
    labelName.test(name) &&
    (prefix === undefined || (prefix.length <= 253 && labelPrefix.test(prefix)))
  );
}

/** True for a valid label value (empty, or a name of at most 63 characters). */
export const isLabelValue = (value: string): boolean => labelName.test(value);

/**
 * What is wrong with each key and value of a label map the program gave as `setting` (e.g.
 * `podSelector`), one reason per bad key or value, naming it and what Kubernetes takes; none when
 * every key and value is valid.
 */
export function labelProblems(setting: string, labels: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelKey(key)) {
      problems.push(
        `${setting} key ${shown(key)} is not a Kubernetes label key: give [prefix/]name, the name 1 to 63 ` +
          `letters, digits, "-", "_" or "." starting and ending with a letter or digit, the prefix a lowercase ` +
          `DNS subdomain of at most 253 characters (e.g. "app" or "example.com/tier")`,
      );
    }
    if (typeof value === "string" && !isLabelValue(value)) {
      problems.push(
        `${setting} value ${shown(value)} of key ${shown(key)} is not a Kubernetes label value: give at most ` +
          `63 letters, digits, "-", "_" or "." starting and ending with a letter or digit, or ""`,
      );
    }
  }
  return problems;
}
