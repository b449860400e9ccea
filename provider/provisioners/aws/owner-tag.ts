import { createHash } from "node:crypto";

// The record of who put an egress address on an EC2 network interface: one tag per address, on
// the interface that carries it. EC2 allows 50 tags on an interface, theirs and everyone else's.

/** The tag on an interface that records which assignment put the secondary address `ip` there. */
export const ownerTagKey = (ip: string): string => `egress-ipam/${ip}`;

/** The value of {@link ownerTagKey} for an owner (`<stack identity> <URN>`): a hash, as tag values are short. */
export const ownerTagValue = (owner: string): string =>
  `sha256:${createHash("sha256").update(owner).digest("hex").slice(0, 40)}`;

/** Whether a tag key is an owner record ({@link ownerTagKey} of some address). */
export const isOwnerTagKey = (key: string): boolean => key.startsWith("egress-ipam/");

/** The most tags EC2 takes on one resource, a network interface included (CreateTags refuses more). */
export const interfaceTagLimit = 50;
