"""Reserved capacity: node groups on a Capacity Block are built as EKS accepts them, and no launch template
forces a cluster placement group onto a reservation.

- `capacity-block-node-group` (mandatory): a CAPACITY_BLOCK node group names a launch template with market
  type `capacity-block`, a capacity reservation target id and the instance type, and lists no instance type
  itself; EKS rejects the request otherwise, or fails the group when the type is named in both places (AWS
  EKS user guide, capacity-blocks-mng; botocore eks CreateNodegroup instanceTypes).
- `reservation-without-placement-group` (advisory): a launch template targeting a capacity reservation names
  no placement group: a Capacity Block's instances are already placed together, and a placement group the
  reservation was not made in fails the launches for want of capacity (terraform-aws-eks PR 3730, p6-b200).
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import EnforcementLevel, ResourceValidationArgs, Severity, StackValidationArgs

from gpu_platform.policy.common import LAUNCH_TEMPLATE, NODE_GROUP, get, node_group_label, of_type, resource_policy, stack_policy

TARGET = "capacityReservationSpecification.capacityReservationTarget.capacityReservationId"


def _missing(template: Any) -> list[str]:
    """What a Capacity Block group's launch template lacks, in EC2's field names."""
    out = []
    if get(template.props, "instanceMarketOptions.marketType") != "capacity-block":
        out.append("instanceMarketOptions.marketType capacity-block")
    if not get(template.props, TARGET):
        out.append(f"{TARGET} (the block's cr-... id)")
    if not get(template.props, "instanceType"):
        out.append("instanceType")
    return out


def capacity_block_node_groups(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    templates = {get(t.props, "name", t.name): t for t in of_type(args, LAUNCH_TEMPLATE)}
    for ng in of_type(args, NODE_GROUP):
        if get(ng.props, "capacityType") != "CAPACITY_BLOCK":
            continue
        who = node_group_label(ng.name, ng.props)
        if get(ng.props, "instanceTypes"):
            yield (f"{who} runs on a Capacity Block but lists instanceTypes: EKS fails a group naming its instance "
                   "type both there and in the launch template, where a Capacity Block group must name it; drop "
                   "instanceTypes from the node group", ng.urn)
        template = templates.get(get(ng.props, "launchTemplate.name"))
        missing = _missing(template) if template is not None else ["a launch template"]
        if missing:
            yield (f"{who} runs on a Capacity Block, and EKS rejects such a group unless its launch template sets "
                   f"{', '.join(missing)}: set them (stack file: capacityType capacity-block with "
                   "reservation {id, start, end} does)", ng.urn)


def no_placement_group(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if get(args.props, TARGET) and get(args.props, "placement.groupName"):
        yield (f"launch template {args.name!r} launches into capacity reservation {get(args.props, TARGET)} inside "
               f"placement group {get(args.props, 'placement.groupName')!r}: unless the reservation was made in that "
               "cluster placement group, its launches fail for want of capacity (a Capacity Block's instances are "
               "placed together already); drop the placement from the template")


POLICIES = [
    stack_policy("capacity-block-node-group", "Capacity Block node groups carry what EKS requires of them.",
                 capacity_block_node_groups, severity=Severity.HIGH),
    resource_policy("reservation-without-placement-group",
                    "Launch templates targeting a capacity reservation force no placement group onto it.",
                    [LAUNCH_TEMPLATE], no_placement_group, severity=Severity.MEDIUM, level=EnforcementLevel.ADVISORY),
]
