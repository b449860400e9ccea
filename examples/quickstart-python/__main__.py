"""Quickstart in Python: a pool and a handful of allocations through the egress-ipam plugin.

`pulumi preview` shows each address before anything is created; `pulumi up` assigns exactly
those; a second `up` changes nothing. New holders of one pool name the one before them with
`after`, so preview and up plan them in one order (docs/languages.md).
"""

import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool(
    "egress",
    ranges=[{"subnet": "10.0.8.0/24", "range_start": "10.0.8.10", "range_end": "10.0.8.99"}],
    exclude=["10.0.8.13"],
)

# A fixed address for the firewall allow-list, and three planned by the pool (round-robin).
gateway = ipam.IpAllocation("nat-gateway", pool=pool, ip="10.0.8.50")
teams = []
before = gateway  # each new holder names the one before it
for team in ["team-a", "team-b", "team-c"]:
    before = ipam.IpAllocation(team, pool=pool, after=before)
    teams.append(before)

pulumi.export("poolSize", pool.size)
pulumi.export("natGateway", gateway.cidr)
pulumi.export("teamIps", [t.ip for t in teams])
