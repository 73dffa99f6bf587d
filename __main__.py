"""The Pulumi program: validate the stack's platform description, build it, export what users need."""
import pulumi

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.platform import GpuPlatform
from gpu_platform.resources.alert_secrets import receiver_secrets
from gpu_platform.spec.errors import SpecError

platform_object = pulumi.Config().require_object("platform")
region = pulumi.Config("aws").require("region")
try:
    spec = parse_platform(platform_object, region=region)  # the one validation: GpuPlatform.of builds it as is
    # secret Outputs from `pulumi config set --secret`, typed as GpuPlatformArgs takes them
    alert_secrets: dict[str, pulumi.Input[str]] = dict(receiver_secrets(spec))
except SpecError as err:
    raise pulumi.RunError(str(err)) from None

platform = GpuPlatform.of("gpu-platform", spec, region, alert_secrets)
for key, value in platform.exports().items():
    pulumi.export(key, value)
