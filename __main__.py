"""The Pulumi program: validate the stack's platform description, build it, export what users need."""
import pulumi

from components.platform import GpuPlatform
from components.spec import SpecError, parse_platform

try:
    spec = parse_platform(pulumi.Config().require_object("platform"))
except SpecError as err:
    raise pulumi.RunError(str(err)) from None

platform = GpuPlatform("gpu-platform", spec, region=pulumi.Config("aws").require("region"))
for key, value in platform.exports().items():
    pulumi.export(key, value)
