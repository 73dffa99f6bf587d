"""A part read on its own (a component's argument) reports each problem at its path below where the part is."""
import pytest

from gpu_platform.spec.alerting import SeverityRoutesSpec
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.models import TaintSpec
from gpu_platform.spec.parse import read_part


def problems(model, data, at):
    with pytest.raises(SpecError) as err:
        read_part(model, data, at)
    return err.value.problems


def test_a_fields_problem_is_named_below_the_part():
    found = problems(TaintSpec, {"key": "k", "effect": "Sometimes"}, FieldPath.of("gpuTaints").index(1))
    assert found == ["gpuTaints[1].effect: Input should be 'NoSchedule', 'NoExecute' or 'PreferNoSchedule'"]


def test_a_part_that_is_not_an_object_is_named_by_its_own_path():
    found = problems(TaintSpec, ["k"], FieldPath.of("gpuTaints").index(0))
    assert len(found) == 1 and found[0].startswith("gpuTaints[0]: Input should be a valid dictionary")


def test_an_unknown_field_under_a_named_part_lists_the_fields_allowed():
    found = problems(SeverityRoutesSpec, {"urgent": "pager"}, FieldPath.of("teamRoutes") / "ml")
    assert found == ["teamRoutes.ml.urgent: unknown field; allowed: critical, high, warning, info, default"]
