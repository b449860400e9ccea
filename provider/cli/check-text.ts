import { codedMessage } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
import { cloudOf, describe, type CheckResult } from "./check-command";
import type { Finding, PlatformReport } from "./drift";
import type { Style } from "./style";

const headings = {
  leaked: "on a host, inside a pool, held by nobody in state",
  missing: "in state, on no host",
  misplaced: "on another host than state says",
  unassociated: "on its host, not leaving from the public address its settings give it",
  unplaced: "where state says, but the platform reports it on no node",
} as const;

/**
 * The terminal report of `check`: what was asked, then each finding with the commands that fix it,
 * and a last line that never says "no drift" while some address was not checked.
 */
export function checkText(result: CheckResult, style: Style): string {
  const out: string[] = [];
  for (const p of result.provisioners) {
    const what = p.skipped
      ? `not checked: ${p.code ? codedMessage(p.code, p.skipped) : p.skipped}`
      : `${p.seen} address${p.seen === 1 ? "" : "es"} on ${p.side ? "instances" : "hosts"} in ${p.subnets.join(", ")}`;
    const cloud = p.side ? `, cloud ${describe(cloudOf(p.provisioner)!)}` : "";
    out.push(terminalSafe(`provisioner ${describe(p.provisioner)}${cloud}: ${what}`));
  }
  if (result.provisioners.length === 0) out.push(`stack ${result.stack} has no EgressIpAssignment to check`);
  // Public addresses (aws: Elastic IPs) only for a stack whose addresses have or should have one.
  const unassociated = result.findings.some((f) => f.kind === "unassociated");
  const publicSide = unassociated || result.publicAddresses.length > 0;
  if (publicSide) {
    out.push("", `public addresses of the stack's addresses: ${result.publicAddresses.length}`);
    for (const a of result.publicAddresses) {
      const id = a.publicId ? ` (${a.publicId})` : "";
      out.push(terminalSafe(`  ${a.ip}  public ${a.publicIp}${id}  on ${a.host}`));
    }
  }
  // The platform's own report, for kinds whose platform writes one (ovn, antrea, ocp-dynamic).
  if (result.platform.length > 0) {
    out.push("", `the platform's own status of the stack's addresses: ${result.platform.length}`);
    for (const r of result.platform) out.push(terminalSafe(`  ${r.ip}  on ${r.host}: ${platformText(r)}`));
  }
  const unplaced = result.findings.some((f) => f.kind === "unplaced");
  const kinds = [
    "leaked",
    "missing",
    "misplaced",
    ...(publicSide ? ["unassociated" as const] : []),
    ...(unplaced ? ["unplaced" as const] : []),
  ] as const;
  for (const kind of kinds) {
    const list = result.findings.filter((f) => f.kind === kind);
    out.push("", style.paint(`${kind} (${headings[kind]}): ${list.length}`, list.length > 0 ? "1;31" : "32"));
    for (const f of list) {
      const where =
        kind === "leaked"
          ? `on ${f.actualHost}`
          : kind === "missing"
            ? `state: on ${f.expectedHost}`
            : kind === "unassociated" || kind === "unplaced"
              ? `on ${f.expectedHost}: ${f.reason}`
              : `state: on ${f.expectedHost}, really on ${f.actualHost}${heldBy(f)}`;
      // Hosts, URNs and the commands built from them come from state and the platform.
      const side = f.side ? "cloud side: " : "";
      out.push(terminalSafe(`  ${f.ip}  ${side}${where}${f.urn ? `  (${f.urn})` : ""}`));
      if (f.heldBy) out.push(`    ${notOurs}`);
      if (kind === "unplaced") out.push(`    ${platformSide}`);
      f.fix.forEach((cmd, i) => out.push(`    ${i === 0 ? "fix:" : "then"} ${terminalSafe(cmd)}`));
    }
  }
  const others = result.others;
  out.push(
    "",
    style.paint(
      `in use by others (on a host, inside a pool, not this stack's: left alone): ${others.length}`,
      "2",
    ),
  );
  for (const o of others) {
    const by = o.recordedFor ? `  (recorded for ${o.recordedFor.join(", ")})` : "";
    out.push(terminalSafe(`  ${o.ip}  on ${o.host}${by}`));
  }
  out.push("", terminalSafe(summary(result)));
  return out.join("\n");
}

/** What to do about an address the platform reports on no node. */
const platformSide =
  "nothing for pulumi to change: make the platform able to place it (the reason above says what it lacks); " +
  "pulumi refresh then finds it placed";

/** One line of the platform's own status of an address. */
function platformText(r: PlatformReport): string {
  if (r.state === "placed") return `placed by the platform on node ${r.node}`;
  if (r.state === "unplaced") return `not placed by the platform: ${r.why}`;
  return `not confirmed by the platform: ${r.why}; no drift (pulumi refresh reports it once the platform says otherwise)`;
}

/** What to do about a misplaced address whose record where it is now is not the stack's. */
const notOurs =
  "nothing is taken off: once its holder frees it, pulumi refresh and pulumi up place it again; or give it up: " +
  "remove its EgressIp from the program and run pulumi up (its delete leaves the address to its holder)";

/** `, not the stack's: …` after a misplaced address held by others: whom its record names there. */
function heldBy(f: Finding): string {
  if (!f.heldBy) return "";
  const by = f.heldBy.recordedFor;
  return `, not the stack's: ${by ? `recorded for ${by.join(", ")}` : "nobody is recorded for it there"}`;
}

/** The last line: the findings, and what was not checked (so "no drift" only when everything was). */
function summary(result: CheckResult): string {
  const n = result.findings.length;
  const found = `${n} finding${n === 1 ? "" : "s"}: ${result.findings.every((f) => f.kind === "unplaced") ? "see above" : "run the fix commands above"}`;
  const u = result.unchecked.length;
  if (u === 0) return n === 0 ? "no drift: the hosts carry what state says" : found;
  const skipped = result.provisioners
    .filter((p) => p.skipped !== undefined)
    .map((p) => describe(p.provisioner));
  const notChecked =
    `not checked: ${u} address${u === 1 ? "" : "es"} of provisioner${skipped.length === 1 ? "" : "s"} ` +
    `${skipped.join(", ")} (see above)`;
  if (n > 0) return `${found}; ${notChecked}`;
  const asked = result.provisioners.some((p) => p.skipped === undefined);
  return `${notChecked}; ${asked ? "the hosts that were asked carry what state says" : "nothing was compared with the hosts"}`;
}
