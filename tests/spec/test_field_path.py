"""Field paths render as users write them, whatever the rule that built them."""
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.pool_context import PoolContext
from tests.support.stacks import spec_of


def test_a_path_renders_names_positions_and_keys():
    path = FieldPath.of("nodePools").index(0) / "sharing.layout"
    assert str(path.key("1g.10gb")) == 'nodePools[0].sharing.layout["1g.10gb"]'
    assert str(FieldPath.of("teams").index(2).field("quota").key('a"b')) == 'teams[2].quota["a\\"b"]'


def test_the_root_is_empty_so_a_components_problem_starts_at_its_argument():
    assert str(FieldPath() / "sharing.layout") == "sharing.layout" and not FieldPath()
    assert str(FieldPath().field("taints").index(1).field("key")) == "taints[1].key"


def test_a_stack_file_pool_is_placed_by_its_position():
    spec = spec_of("prod")
    assert str(PoolContext.of(spec, spec.node_pools[1]).at / "zones") == "nodePools[1].zones"
