"""The gpu-platform component package: every public component, for Pulumi programs in any language.

`pulumi package add <this folder>` (or the repository's URL with `/provider`) starts this host, which infers
the schema from the components' type annotations (GpuPlatform's `platform` typed as the stack file's object)
and generates an SDK in the program's language.
"""
import gpu_platform
from gpu_platform.resources.package import host

if __name__ == "__main__":
    host(gpu_platform.component_classes(), name="gpu-platform", version=gpu_platform.__version__)
