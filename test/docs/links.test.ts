import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { anchors, type Link, linkedFiles, links, repoRoot, slug } from "../support/markdown";

/**
 * What is wrong with a link, or undefined: a relative link must name an existing file or folder,
 * and its `#anchor` a heading of that Markdown file (a code file takes GitHub's `#L12`/`#L12-L20`).
 * External links are not fetched (the tests run offline); only their form is checked.
 */
function problem(link: Link): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (!/^https?:/i.test(target)) return "not an http(s) link";
    try {
      const url = new URL(target);
      return url.hostname.includes(".") ? undefined : `no host name in ${target}`;
    } catch {
      return "not a URL";
    }
  }
  if (target === "") return "empty target";
  if (target.startsWith("/")) return "an absolute path (relative links only)";
  const [pathPart = "", anchor] = target.split("#", 2) as [string, string | undefined];
  const file =
    pathPart === ""
      ? path.join(repoRoot, link.file)
      : path.resolve(repoRoot, path.dirname(link.file), pathPart);
  if (!file.startsWith(repoRoot + path.sep)) return "outside the repository";
  if (!fs.existsSync(file)) return `no file ${path.relative(repoRoot, file)}`;
  if (anchor === undefined) return undefined;
  if (fs.statSync(file).isDirectory()) return "an anchor on a folder";
  if (!file.endsWith(".md"))
    return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : "an anchor in a non-Markdown file";
  return anchors(file).has(decodeURIComponent(anchor))
    ? undefined
    : `no heading #${anchor} in ${path.relative(repoRoot, file)}`;
}

describe("links of README.md, docs/ and the examples' READMEs", () => {
  const all = linkedFiles().flatMap(links);

  it("finds the links to check", () => {
    expect(linkedFiles()).toContain("README.md");
    expect(all.length).toBeGreaterThan(40);
  });

  it("resolve: every relative link to an existing file, every anchor to a heading", () => {
    const dead = all.flatMap((l) => {
      const why = problem(l);
      return why ? [`${l.file}:${l.line} (${l.target}): ${why}`] : [];
    });
    expect(dead).toEqual([]);
  });

  it.each([
    ["A heading", "a-heading"],
    ["`ocp-static`: OpenShift SDN, manual egress IPs", "ocp-static-openshift-sdn-manual-egress-ips"],
    [
      "Handing an address over: the old owner's delete leaves it",
      "handing-an-address-over-the-old-owners-delete-leaves-it",
    ],
    ["Which provisioner?", "which-provisioner"],
    ["**Bold** and [a link](x.md)", "bold-and-a-link"],
    ["snake_case stays", "snake_case-stays"],
  ])("slugs %j as GitHub does: %s", (heading, anchor) => {
    expect(slug(heading)).toBe(anchor);
  });

  it.each([
    ["docs/missing.md", "no file docs/missing.md"],
    ["docs/provisioners.md#no-such-heading", "no heading #no-such-heading in docs/provisioners.md"],
    ["docs/provisioners.md#on-aws", undefined],
    ["#quick-start", undefined],
    ["examples/quickstart", undefined],
    ["examples/quickstart#x", "an anchor on a folder"],
    ["https://semver.org", undefined],
    ["https://", "not a URL"],
    ["http://localhost/x", "no host name in http://localhost/x"],
    ["ftp://example.org", "not an http(s) link"],
    ["/docs/cli.md", "an absolute path (relative links only)"],
    ["../outside.md", "outside the repository"],
  ])("judges a link to %s from README.md: %s", (target, expected) => {
    expect(problem({ file: "README.md", line: 1, target })).toBe(expected);
  });
});
