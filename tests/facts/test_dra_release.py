"""What docs/dra.md says of the pinned DRA driver matches NVIDIA's own word on that release: no support claim
for GPU allocation that the pinned chart does not have."""
from __future__ import annotations

import re

from gpu_platform.facts import catalog
from gpu_platform.spec.models import DraDriverSpec
from tests.support.stacks import ROOT

DOC = ROOT / "docs" / "dra.md"
SUPPORT_CLAIM = re.compile(r"generally\s+available", re.IGNORECASE)


def _pinned() -> catalog.DraDriverRelease:
    return catalog.DRA_DRIVER_RELEASES[DraDriverSpec().chart_version]


def test_the_docs_name_the_pinned_chart_as_the_default():
    assert f"draDriver: {{chartVersion: {_pinned().version}}} # the default" in DOC.read_text()


def test_the_docs_claim_no_support_the_pinned_release_lacks():
    text, release = DOC.read_text(), _pinned()
    if not release.gpu_allocation_supported:
        assert not SUPPORT_CLAIM.search(text), SUPPORT_CLAIM.search(text)
        assert "are not yet officially supported" in text
        assert f"The DRA driver {release.version}'s README" in text
