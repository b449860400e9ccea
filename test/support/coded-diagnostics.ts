import * as fs from "node:fs";
import * as path from "node:path";
import type * as automation from "@pulumi/pulumi/automation";

/** The package's error codes, as test/public-api.json records them (`error <CODE>`). */
const knownCodes: ReadonlySet<string> = new Set(
  (
    JSON.parse(fs.readFileSync(path.join(__dirname, "..", "public-api.json"), "utf8")) as { api: string[] }
  ).api.flatMap((x) => (x.startsWith("error ") ? [x.slice("error ".length)] : [])),
);

/** A resource of this package: a dynamic resource of module `egress-ipam`, or the EgressIp component. */
const ours = (urn: string | undefined) => (urn?.split("::")[2] ?? "").includes("egress-ipam:");

/**
 * The error diagnostics of one engine run that break the contract of docs/errors.md: an error of
 * one of this package's resources (a provider error, a `check` failure), or a program error thrown
 * by the package (`IpamError`), whose message carries no known code as `[CODE] `. Empty when all do.
 */
export function uncodedErrors(events: readonly automation.EngineEvent[]): string[] {
  return events.flatMap((e) => {
    const d = e.diagnosticEvent;
    if (d?.severity !== "error") return [];
    if (!ours(d.urn) && !/\bIpamError\b/.test(d.message)) return [];
    const codes = [...d.message.matchAll(/\[([A-Z][A-Z_]*[A-Z])\] /g)].map((m) => m[1]!);
    return codes.some((c) => knownCodes.has(c)) ? [] : [`${d.urn ?? "(no URN)"}: ${d.message.trim()}`];
  });
}
