"""Egress IPs in Python: one address per failure domain from a shared pool for each tenant namespace.

Each address is placed on a host, through the egress-ipam plugin (EgressIp is a component it
constructs). The `none` provisioner treats hosts as labels, so this runs anywhere. Each EgressIp
names the one before it with `after`, so preview and up plan new ones in one order
(docs/languages.md).
"""

import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool(
    "egress",
    ranges=[{"subnet": "10.0.8.0/24", "range_start": "10.0.8.10", "range_end": "10.0.8.200"}],
    cloud_reserved="aws",
)

provisioner = {
    "kind": "none",
    "hosts": {"us-east-1a": ["ip-10-0-8-5.ec2.internal"], "us-east-1b": ["ip-10-0-8-6.ec2.internal"]},
}
failure_domains = ["us-east-1a", "us-east-1b"]

teams = {}
before = None
for team in ["team-a", "team-b"]:
    before = ipam.EgressIp(
        team, pool=pool, namespace=team, failure_domains=failure_domains, provisioner=provisioner, after=before
    )
    teams[team] = before

# What to put in the tenants' firewall allow-lists, and where each address lives.
pulumi.export("teamAIps", teams["team-a"].ips)
pulumi.export("teamAHosts", teams["team-a"].hosts)
pulumi.export("teamBIps", teams["team-b"].ips)
