"""The gpu-platform component package: every public component, for Pulumi programs in any language.

`pulumi package add <this folder>` (or the repository's URL with `/provider`) starts this host, which infers
the schema from the components' type annotations and generates an SDK in the program's language.
"""
from pulumi.provider.experimental import component_provider_host

import gpu_platform
from gpu_platform.resources.package import read_inherited_docstrings

if __name__ == "__main__":
    read_inherited_docstrings()
    component_provider_host(gpu_platform.component_classes(), name="gpu-platform", version=gpu_platform.__version__)
