/**
 * pulumi-egress-ipam: IP address pools and egress IPs as Pulumi dynamic resources.
 * @packageDocumentation
 */
export {};
