"""MIG placement, checked against an independent brute force and NVIDIA's documented examples."""
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_platform.facts.catalog import GPU_MODELS, MIG_GRIDS, mig_class
from gpu_platform.facts.mig import compute_slices, fits, layout_problem, place

MIG_GPUS = [g for g in GPU_MODELS.values() if g.mig_capable]


def all_layouts(gpu):
    profiles = list(gpu.mig_profiles)
    ranges = [range(mig_class(gpu, p).max_per_gpu + 1) for p in profiles]
    for counts in itertools.product(*ranges):
        layout = {p: n for p, n in zip(profiles, counts, strict=True) if n}
        if layout:
            yield layout


def placeable_layouts(gpu):
    """Every layout reachable by walking the GPU's memory slots and choosing what starts at each one, then
    keeping those whose media engines add up (one OFA per GPU; +me.all leaves the others only -me).

    Independent of facts.mig: it generates placements instead of searching for one.
    """
    classes = {p: mig_class(gpu, p) for p in gpu.mig_profiles}
    slots = gpu.grid.memory_slices
    found = set()

    def walk(slot, counts):
        if slot >= slots:
            if counts:
                found.add(frozenset(counts.items()))
            return
        walk(slot + 1, counts)  # leave this slot empty
        for profile, cls in classes.items():
            if slot in cls.starts and slot + cls.memory <= slots:
                walk(slot + cls.memory, {**counts, profile: counts.get(profile, 0) + 1})

    walk(0, {})
    return {layout for layout in found if _media_adds_up(gpu, dict(layout))}


def _media_adds_up(gpu, layout):
    media = [mig_class(gpu, p).media for p, n in layout.items() for _ in range(n)]
    if media.count("me") + media.count("all") > 1:
        return False
    return "all" not in media or all(m in ("all", "none") for m in media)


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
    # The GPU Operator v26.7.0 default config: all-balanced and the all-<profile> entries of each Blackwell GPU.
    "B200": [{"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}, {"1g.23gb": 7}, {"1g.23gb+me": 1}, {"1g.45gb": 4},
             {"2g.45gb": 3}, {"3g.90gb": 2}, {"4g.90gb": 1}, {"7g.180gb": 1}],
    "B300": [{"1g.34gb": 2, "2g.67gb": 1, "3g.135gb": 1}, {"1g.34gb": 7}, {"1g.34gb+me": 1}, {"1g.67gb": 4},
             {"2g.67gb": 3}, {"3g.135gb": 2}, {"4g.135gb": 1}, {"7g.269gb": 1}],
    "RTX-PRO-6000": [{"1g.24gb": 2, "2g.48gb": 1}, {"1g.24gb": 4}, {"1g.24gb+gfx": 4}, {"1g.24gb-me": 4},
                     {"1g.24gb+me": 1}, {"1g.24gb+me.all": 1}, {"2g.48gb": 2}, {"2g.48gb+gfx": 2}, {"2g.48gb-me": 2},
                     {"2g.48gb+me.all": 1}, {"4g.96gb": 1}, {"4g.96gb+gfx": 1},
                     {"1g.24gb+me.all": 1, "1g.24gb-me": 1, "2g.48gb-me": 1}],
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
    "B200": [{"3g.90gb": 2, "1g.23gb": 1}, {"4g.90gb": 2}, {"1g.10gb": 1}, {"2g.45gb": 3, "1g.45gb": 2},
             {"1g.23gb+me": 2}],
    "B300": [{"3g.135gb": 2, "1g.34gb": 1}, {"7g.269gb": 1, "1g.34gb": 1}, {"1g.23gb": 1}],
    "RTX-PRO-6000": [{"1g.24gb": 5}, {"2g.48gb": 2, "1g.24gb": 1}, {"4g.96gb": 1, "1g.24gb": 1},
                     {"1g.24gb+me": 1, "1g.24gb+me.all": 1}, {"1g.24gb+me.all": 1, "1g.24gb": 1},
                     {"2g.48gb+me.all": 1, "2g.48gb": 1}, {"3g.72gb": 1}],
}


@pytest.mark.parametrize("gpu_key,layout", [(g, layout) for g, layouts in VALID.items() for layout in layouts])
def test_documented_valid_layouts_fit(gpu_key, layout):
    assert layout_problem(GPU_MODELS[gpu_key], layout) is None


@pytest.mark.parametrize("gpu_key,layout", [(g, layout) for g, layouts in INVALID.items() for layout in layouts])
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
            assert compute_slices(gpu, layout) <= gpu.grid.compute_slices


@given(st.data())
def test_placement_returns_non_overlapping_allowed_slots(data):
    gpu = data.draw(st.sampled_from(MIG_GPUS))
    profiles = list(gpu.mig_profiles)
    layout = data.draw(st.dictionaries(st.sampled_from(profiles), st.integers(1, 3), min_size=1, max_size=4))
    instances = [mig_class(gpu, p) for p, n in layout.items() for _ in range(n)]
    starts = place(instances, gpu.grid.memory_slices)
    if starts is None:
        return
    occupied = set()
    for cls, start in zip(instances, starts, strict=True):
        assert start in cls.starts
        slots = set(range(start, start + cls.memory))
        assert max(slots) < gpu.grid.memory_slices and not slots & occupied
        occupied |= slots


def test_the_blackwell_layout_that_fits_its_compute_is_still_refused_by_placement():
    # 3g + 3g + 1g is 7 compute slices, but the two 3g take all 8 memory slots.
    problem = layout_problem(GPU_MODELS["B200"], {"3g.90gb": 2, "1g.23gb": 1})
    assert problem == "the instances cannot all be given non-overlapping memory slots (placement rules)"


def test_a_profile_of_another_gpu_is_refused_naming_the_valid_ones():
    problem = layout_problem(GPU_MODELS["B200"], {"1g.10gb": 1})
    assert problem.startswith("1g.10gb not a MIG profile of B200; valid: 1g.23gb, 1g.23gb+me, 1g.45gb, 2g.45gb, "
                              "3g.90gb, 4g.90gb, 7g.180gb")


def test_a_me_all_instance_leaves_the_others_no_media_engines():
    problem = layout_problem(GPU_MODELS["RTX-PRO-6000"], {"1g.24gb+me.all": 1, "1g.24gb": 1})
    assert "-me profiles" in problem


def test_every_grid_names_its_source_and_every_gpu_uses_a_grid():
    assert {g.mig_grid for g in MIG_GPUS} == set(MIG_GRIDS)
    for grid in MIG_GRIDS.values():
        assert grid.source and grid.classes
        for cls in grid.classes.values():
            assert all(0 <= s and s + cls.memory <= grid.memory_slices for s in cls.starts), cls


def test_the_rtx_pro_6000_has_its_operator_layouts_and_at_most_four_instances():
    gpu = GPU_MODELS["RTX-PRO-6000"]
    assert max(sum(layout.values()) for layout in all_layouts(gpu) if fits(gpu, layout)) == 4
