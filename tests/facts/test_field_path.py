"""Field paths render as users write them, whatever the rule that built them."""
import pytest

from gpu_platform.facts.field_path import FieldPath
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


def test_every_item_of_a_list_renders_as_empty_brackets():
    assert str(FieldPath.of("nodePools").each() / "reservation") == "nodePools[].reservation"


@pytest.mark.parametrize("text", [
    "", "aws:region", "nodePools[0].sharing.layout[\"1g.10gb\"]", "teams[2].quota[\"a\\\"b\"]", "nodePools[].ami",
    "tags[\"a\\\\b\"]", "labels[\"x\\ny\"]", "labels[\"\\u200b\"]", "vpc.zones[12]"])
def test_a_rendered_path_reads_back_as_the_same_path(text):
    path = FieldPath.parse(text)
    assert str(path) == text
    assert path == FieldPath.parse(str(path))


def test_keys_read_back_as_the_keys_that_were_quoted():
    assert FieldPath.parse(str(FieldPath.of("tags").key('a"b\\c\nd'))) == FieldPath.of("tags").key('a"b\\c\nd')


@pytest.mark.parametrize("text", ["nodePools[x]", "a..b", "tags[\"open", "teams[01]", ".name", "a[0]b"])
def test_text_that_is_not_a_path_is_refused(text):
    with pytest.raises(ValueError, match="not a field path"):
        FieldPath.parse(text)


def test_renaming_changes_field_names_only():
    path = FieldPath.of("subnetIds").index(0) / "maxSize"
    renamed = path.key("maxSize").renamed(str.upper)
    assert str(renamed) == 'SUBNETIDS[0].MAXSIZE["maxSize"]'


def test_a_path_moves_from_one_start_to_another():
    create = FieldPath.of("create")
    assert str((create / "vpc.zones").index(0).moved(create, FieldPath())) == "vpc.zones[0]"
    assert str(FieldPath.of("name").moved(FieldPath.of("name"), FieldPath.of("team"))) == "team"
    assert FieldPath.of("namespace").moved(FieldPath.of("name"), FieldPath.of("team")) == FieldPath.of("namespace")
    assert create.moved(create, FieldPath()) == create  # the root has no name to show
