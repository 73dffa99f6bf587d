"""The rules on what a TeamNamespace is told of its cluster live with the other team rules (spec/), so a
component given its own arguments and the stack file share them."""
from gpu_platform.spec.rules_teams import cluster_context_rules


def test_claims_domains_and_the_kubernetes_minor_are_checked_where_the_file_is():
    found = dict(cluster_context_rules("1.x", [{"gpu": "B200", "count": 0}, {"gpu": "Z9", "count": 1}], [1, True],
                                       dra=False))
    assert set(map(str, found)) == {"kubernetesVersion", "gpuClaims[0].count", "gpuClaims[1].gpu", "computeDomains[0]",
                          "computeDomains[1]", "dra"}


def test_what_the_platform_would_pass_is_valid():
    assert list(cluster_context_rules("1.35", [{"gpu": "B200", "count": 8}], [2, 18], dra=True)) == []
