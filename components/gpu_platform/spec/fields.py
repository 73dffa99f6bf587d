"""The stack file's typed fields: each string another system receives, checked by its rule in facts/syntax.py.

A field typed `Labels`, `TaintValue`, `Tags`, `Zone`, `SubnetId`, `Quantity`... refuses a value that system
would refuse (or, worse, misread), with the rule's message as the field's error.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from gpu_platform.facts import cuda, syntax
from gpu_platform.facts.syntax import Problem


def _checked(check: Callable[[Any], Problem]) -> AfterValidator:
    def validate(value: Any) -> Any:
        problem = check(value)
        if problem:
            raise ValueError(problem)
        return value
    return AfterValidator(validate)


DnsLabel = Annotated[str, _checked(syntax.dns_label)]
LabelKey = Annotated[str, _checked(syntax.label_key)]
LabelValue = Annotated[str, _checked(syntax.label_value)]
Labels = dict[LabelKey, LabelValue]
TaintKey = Annotated[str, _checked(lambda v: syntax.taint(v, "", syntax.TAINT_EFFECTS[0]))]
TaintValue = Annotated[str, _checked(lambda v: syntax.taint("key", v, syntax.TAINT_EFFECTS[0]))]
Selector = Annotated[str, _checked(syntax.selector)]
EqualitySelector = Annotated[str, _checked(lambda v: syntax.selector(v, equality_only=True))]
TagKey = Annotated[str, _checked(syntax.tag_key)]
TagValue = Annotated[str, _checked(syntax.tag_value)]
Tags = dict[TagKey, TagValue]
Zone = Annotated[str, _checked(syntax.zone)]
Cidr = Annotated[str, _checked(syntax.cidr)]
Ipv4Cidr = Annotated[str, _checked(syntax.ipv4_cidr)]
SubnetId = Annotated[str, _checked(syntax.subnet_id)]
SecurityGroupId = Annotated[str, _checked(syntax.security_group_id)]
AmiId = Annotated[str, _checked(syntax.ami_id)]
CapacityReservationId = Annotated[str, _checked(syntax.capacity_reservation_id)]
InstanceType = Annotated[str, _checked(syntax.instance_type)]
CudaVersion = Annotated[str, _checked(cuda.version_problem)]  # "major.minor", e.g. "12.8"
Quantity = Annotated[str, BeforeValidator(syntax.quantity_text), _checked(syntax.quantity)]
S3Uri = Annotated[str, _checked(syntax.s3_uri)]
FsxFileSystemPath = Annotated[str, _checked(syntax.fsx_file_system_path)]
StorageRequest = Annotated[str, BeforeValidator(syntax.quantity_text), _checked(syntax.storage_request)]
