"""The gpu-platform component package: every public component, for Pulumi programs in any language.

`pulumi package add <this folder>` (or the repository's URL with `/provider`) starts this host, which infers
the schema from the components' type annotations and generates an SDK in the program's language.
"""
from pulumi.provider.experimental import component_provider_host

import gpu_platform

if __name__ == "__main__":
    component_provider_host(gpu_platform.component_classes(), name="gpu-platform", version=gpu_platform.__version__)
