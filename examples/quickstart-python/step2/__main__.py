"""Quickstart in Python, step 2: the pool grows by a second range (an in-place update) and a fourth
team gets an address, after the last team (the chain of new holders goes on). The existing
allocations keep theirs; preview shows the new one before `up`.
"""

import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool(
    "egress",
    ranges=[
        {"subnet": "10.0.8.0/24", "range_start": "10.0.8.10", "range_end": "10.0.8.99"},
        {"subnet": "10.0.9.0/24", "range_start": "10.0.9.10", "range_end": "10.0.9.99"},
    ],
    exclude=["10.0.8.13"],
)

gateway = ipam.IpAllocation("nat-gateway", pool=pool, ip="10.0.8.50")
teams = []
before = gateway  # each new holder names the one before it
for team in ["team-a", "team-b", "team-c", "team-d"]:
    before = ipam.IpAllocation(team, pool=pool, after=before)
    teams.append(before)

pulumi.export("poolSize", pool.size)
pulumi.export("natGateway", gateway.cidr)
pulumi.export("teamIps", [t.ip for t in teams])
