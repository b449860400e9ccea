/**
 * Egress IP provisioners: the seed `EgressIPProvisioner` interface and its implementations.
 * @packageDocumentation
 */
export {};
