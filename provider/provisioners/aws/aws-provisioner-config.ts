/**
 * Settings of the `aws` provisioner: hosts are EC2 instances (instance ID or private DNS name, which
 * is the OpenShift node name on AWS), failure domains are availability zones, and egress IPs are
 * secondary private IPv4 addresses or IPv6 addresses of each host's primary network interface. Credentials come from the default
 * AWS credential chain of the process running the deployment, never from here.
 */
export interface AwsProvisionerConfig {
  kind: "aws";
  /** The region of the instances, e.g. `us-east-1`. */
  region: string;
  /** An EC2 endpoint URL other than the region's default (a VPC endpoint, or an emulator in tests). */
  endpoint?: string;
  /** EC2 tags every eligible host carries (e.g. `{ "kubernetes.io/cluster/<infra-id>": "owned" }`); default: every running instance. */
  hostTags?: Record<string, string>;
}
