"""MIG placement, checked against an independent brute force and NVIDIA's documented examples."""
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_platform.facts.catalog import GPU_MODELS, MIG_MEMORY_SLICES, mig_class
from gpu_platform.facts.mig import compute_slices, fits, layout_problem, place

MIG_GPUS = [g for g in GPU_MODELS.values() if g.mig_capable]


def all_layouts(gpu):
    profiles = list(gpu.mig_profiles)
    ranges = [range(mig_class(gpu, p).max_per_gpu + 1) for p in profiles]
    for counts in itertools.product(*ranges):
        layout = {p: n for p, n in zip(profiles, counts) if n}
        if layout:
            yield layout


def placeable_layouts(gpu):
    """Every layout reachable by walking memory slots 0..7 and choosing what starts at each one.

    Independent of facts.mig: it generates placements instead of searching for one.
    """
    classes = {p: mig_class(gpu, p) for p in gpu.mig_profiles}
    found = set()

    def walk(slot, counts, me_used):
        if slot >= MIG_MEMORY_SLICES:
            if counts:
                found.add(frozenset(counts.items()))
            return
        walk(slot + 1, counts, me_used)  # leave this slot empty
        for profile, cls in classes.items():
            if slot not in cls.starts or slot + cls.memory > MIG_MEMORY_SLICES:
                continue
            if cls.media_extensions and me_used:
                continue
            walk(slot + cls.memory, {**counts, profile: counts.get(profile, 0) + 1}, me_used or cls.media_extensions)

    walk(0, {}, False)
    return found


def test_h100_has_127_valid_non_empty_layouts():
    gpu = GPU_MODELS["H100-80GB-HBM3"]
    assert sum(1 for layout in all_layouts(gpu) if fits(gpu, layout)) == 127


@pytest.mark.parametrize("gpu", MIG_GPUS, ids=lambda g: g.key)
def test_validator_agrees_with_generated_placements_on_every_layout(gpu):
    placeable = placeable_layouts(gpu)
    for layout in all_layouts(gpu):
        assert fits(gpu, layout) == (frozenset(layout.items()) in placeable), layout


# (gpu, layout) pairs NVIDIA documents as valid: 4g+3g, 3g+3g, 2gx3+1g, all-balanced, 1gx7, 7g.
VALID = {
    "A100-SXM4-40GB": [{"4g.20gb": 1, "3g.20gb": 1}, {"3g.20gb": 2}, {"2g.10gb": 3, "1g.5gb": 1},
                       {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}, {"1g.5gb": 7}, {"7g.40gb": 1}, {"1g.10gb": 4}],
    "A100-SXM4-80GB": [{"4g.40gb": 1, "3g.40gb": 1}, {"3g.40gb": 2}, {"2g.20gb": 3, "1g.10gb": 1},
                       {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, {"1g.10gb": 7}, {"7g.80gb": 1}],
    "H100-80GB-HBM3": [{"4g.40gb": 1, "3g.40gb": 1}, {"3g.40gb": 2}, {"2g.20gb": 3, "1g.10gb": 1},
                       {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, {"1g.10gb": 7}, {"1g.10gb+me": 1, "1g.10gb": 6}],
    "H200": [{"4g.71gb": 1, "3g.71gb": 1}, {"3g.71gb": 2}, {"2g.35gb": 3, "1g.18gb": 1},
             {"3g.71gb": 1, "2g.35gb": 1, "1g.18gb": 2}, {"1g.18gb": 7}, {"1g.35gb": 4}],
}
# Layouts that fit the compute budget (or nearly) yet break the placement rules, or misuse names.
INVALID = {
    "A100-SXM4-40GB": [{"4g.20gb": 2}, {"3g.20gb": 2, "1g.5gb": 1}, {"2g.10gb": 3, "1g.10gb": 2},
                       {"1g.5gb": 8}, {"1g.20gb": 1}, {"3g.40gb": 1}],
    "A100-SXM4-80GB": [{"4g.40gb": 2}, {"3g.40gb": 2, "1g.10gb": 1}, {"2g.20gb": 3, "1g.20gb": 2},
                       {"1g.5gb": 1}, {"7g.80gb": 1, "1g.10gb": 1}],
    "H100-80GB-HBM3": [{"4g.40gb": 2}, {"3g.40gb": 2, "1g.10gb": 1}, {"2g.20gb": 3, "1g.20gb": 2},
                       {"1g.10gb+me": 2}, {"1g.20gb": 5}, {"4g.40gb": 1, "1g.20gb": 2, "1g.10gb": 1}],
    "H200": [{"4g.71gb": 2}, {"3g.71gb": 2, "1g.18gb": 1}, {"2g.35gb": 3, "1g.35gb": 2}, {"1g.10gb": 7}],
}


@pytest.mark.parametrize("gpu_key,layout", [(g, l) for g, ls in VALID.items() for l in ls])
def test_documented_valid_layouts_fit(gpu_key, layout):
    assert layout_problem(GPU_MODELS[gpu_key], layout) is None


@pytest.mark.parametrize("gpu_key,layout", [(g, l) for g, ls in INVALID.items() for l in ls])
def test_invalid_layouts_are_refused_with_a_reason(gpu_key, layout):
    assert layout_problem(GPU_MODELS[gpu_key], layout)


def test_the_same_name_means_different_shapes_per_gpu():
    # 1g.10gb is the small slice on A100-80GB but the double-memory one on A100-40GB.
    assert fits(GPU_MODELS["A100-SXM4-80GB"], {"1g.10gb": 7})
    assert not fits(GPU_MODELS["A100-SXM4-40GB"], {"1g.10gb": 7})
    assert fits(GPU_MODELS["A100-SXM4-40GB"], {"1g.10gb": 4})


def test_non_mig_gpu_is_refused():
    assert "no MIG" in layout_problem(GPU_MODELS["A10G"], {"1g.10gb": 1})


def test_unknown_profile_names_what_is_valid():
    problem = layout_problem(GPU_MODELS["H100-80GB-HBM3"], {"1g.5gb": 1})
    assert "1g.5gb" in problem and "3g.40gb" in problem


def test_empty_layout_is_refused():
    assert layout_problem(GPU_MODELS["H100-80GB-HBM3"], {"3g.40gb": 0})


@pytest.mark.parametrize("gpu", MIG_GPUS, ids=lambda g: g.key)
def test_every_fitting_layout_respects_compute_and_memory(gpu):
    for layout in all_layouts(gpu):
        if fits(gpu, layout):
            assert compute_slices(gpu, layout) <= 7


@given(st.data())
def test_placement_returns_non_overlapping_allowed_slots(data):
    gpu = data.draw(st.sampled_from(MIG_GPUS))
    profiles = list(gpu.mig_profiles)
    layout = data.draw(st.dictionaries(st.sampled_from(profiles), st.integers(1, 3), min_size=1, max_size=4))
    instances = [mig_class(gpu, p) for p, n in layout.items() for _ in range(n)]
    starts = place(instances)
    if starts is None:
        return
    occupied = set()
    for cls, start in zip(instances, starts):
        assert start in cls.starts
        slots = set(range(start, start + cls.memory))
        assert max(slots) < MIG_MEMORY_SLICES and not slots & occupied
        occupied |= slots
