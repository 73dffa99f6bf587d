"""Field paths, as the stack file's rules build them: the value type lives with the facts
(facts/field_path.py) so that the policy pack and the cost estimate, which read no stack-file model, share it.
"""
from gpu_platform.facts.field_path import (
    CLUSTER, CLUSTER_VERSION, GPU_OPERATOR, NODE_POOLS, QUEUEING, REGION, ROOT, TEAMS, FieldPath, Part, Problem,
    quoted,
)

__all__ = ["CLUSTER", "CLUSTER_VERSION", "GPU_OPERATOR", "NODE_POOLS", "QUEUEING", "REGION", "ROOT", "TEAMS",
           "FieldPath", "Part", "Problem", "quoted"]
