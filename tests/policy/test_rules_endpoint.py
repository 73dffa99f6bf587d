"""The EKS API endpoint: private, or public to listed networks only, in the configured environments."""
from __future__ import annotations

import pytest

from tests.policy.harness import run_resource

CLUSTER = "aws:eks/cluster:Cluster"


def cluster(**vpc) -> dict:
    return {"name": "gpu-prod", "version": "1.35",
            "vpcConfig": {"subnetIds": ["subnet-1", "subnet-2"], "endpointPrivateAccess": True, **vpc}}


def run(props: dict, **kw) -> list[str]:
    return run_resource("cluster-endpoint-restricted", CLUSTER, props, name="cluster", **kw)


@pytest.mark.parametrize("vpc", [
    {"endpointPublicAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]},
    {"endpointPublicAccess": False},
    {"endpointPublicAccess": "false"},  # provider booleans may travel as strings
])
def test_a_listed_or_private_endpoint_passes(vpc):
    assert run(cluster(**vpc)) == []


@pytest.mark.parametrize("vpc", [
    {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]},
    {"endpointPublicAccess": True, "publicAccessCidrs": ["203.0.113.0/24", "::/0"]},
    {"endpointPublicAccess": True},  # EKS's default: 0.0.0.0/0
    {},  # EKS's default: public, to 0.0.0.0/0
])
def test_an_endpoint_open_to_the_internet_is_refused_in_prod(vpc):
    (message,) = run(cluster(**vpc))
    assert "whole internet" in message and "in prod" in message
    assert "cluster.create.publicAccessCidrs" in message and "endpointPublicAccess" in message


def test_dev_may_keep_an_open_endpoint_unless_configured():
    props = cluster(endpointPublicAccess=True, publicAccessCidrs=["0.0.0.0/0"])
    assert run(props, environment="dev") == []
    assert len(run(props, environment="dev", config={"environments": ["dev", "prod"]})) == 1


def test_an_unknown_environment_is_held_to_prod():
    assert len(run(cluster(), environment=None)) == 1
