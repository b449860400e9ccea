// What an error's advice about a taken address tells the program to change, read the way a user
// reads it, so that a test can apply exactly that edit and show where it leads.

/** An edit of an EgressIp (or its pool) that an advice names. */
export type AdviceEdit = { kind: "ips"; ips: string[] } | { kind: "adopt" } | { kind: "exclude" };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The edit `failure` advises for the EgressIp `name` whose address `ip` somebody else took: of the
 * kind `want` where the advice offers it, else the first it offers of the others (`ips`, `adopt: true`,
 * excluding the address from the pool), so that following an advice that offers no working edit
 * shows what it leads to.
 * @throws naming the failure when it offers none.
 */
export function followAdvice(
  failure: string,
  name: string,
  ip: string,
  want: AdviceEdit["kind"],
): AdviceEdit {
  const found: AdviceEdit[] = [];
  const ips = new RegExp(`give the EgressIp (?:${escape(name)} )?ips: (\\[[^\\]]*\\])`).exec(failure);
  if (ips) found.push({ kind: "ips", ips: JSON.parse(ips[1]!) as string[] });
  if (new RegExp(`set adopt: true on the EgressIp ${escape(name)}\\b`).test(failure))
    found.push({ kind: "adopt" });
  if (new RegExp(`exclude (?:it|${escape(ip)}) from the pool`).test(failure)) found.push({ kind: "exclude" });
  const edit = found.find((e) => e.kind === want) ?? found[0];
  if (!edit) throw new Error(`no advice to follow in: ${failure}`);
  return edit;
}
