"""`--mocks FILE`: the user's answers for invokes the planner does not know, without editing the library."""
from __future__ import annotations

import json

import pulumi
import pytest
import yaml

from gpu_platform.planner import user_mocks
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.mocks import PlannerMocks, UnansweredInvoke

AMI = "aws:ec2/getAmi:getAmi"


def write(tmp_path, data, name="mocks.json"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if name.endswith((".yaml", ".yml")) else json.dumps(data))
    return path


def call(mocks, token=AMI, **args):
    return mocks.call(pulumi.runtime.MockCallArgs(token, args, ""))


def test_a_bare_result_answers_every_call(tmp_path):
    answers = user_mocks.load(write(tmp_path, {AMI: {"id": "ami-1", "imageId": "ami-1"}}))
    assert call(PlannerMocks("us-east-1", user=answers), owners=["amazon"]) == {"id": "ami-1", "imageId": "ami-1"}


def test_entries_match_on_args_first_match_wins(tmp_path):
    answers = user_mocks.load(write(tmp_path, {AMI: [
        {"args": {"owners": ["amazon"], "mostRecent": True}, "result": {"imageId": "ami-amazon"}},
        {"result": {"imageId": "ami-any"}}]}, "mocks.yaml"))
    mocks = PlannerMocks("us-east-1", user=answers)
    assert call(mocks, owners=["amazon"], mostRecent=True, filters=[]) == {"imageId": "ami-amazon"}
    assert call(mocks, owners=["self"]) == {"imageId": "ami-any"}


def test_no_matching_entry_names_the_token_and_the_args(tmp_path):
    answers = user_mocks.load(write(tmp_path, {AMI: [{"args": {"owners": ["amazon"]}, "result": {"imageId": "a"}}]}))
    with pytest.raises(UnansweredInvoke, match=r"aws:ec2/getAmi:getAmi: --mocks has answers for it, but none whose args"):
        call(PlannerMocks("us-east-1", user=answers), owners=["self"])


def test_a_user_answer_wins_over_the_planner_s_own(tmp_path):
    token = "aws:index/getAvailabilityZones:getAvailabilityZones"
    answers = user_mocks.load(write(tmp_path, {token: {"names": ["eu-west-1a"], "zoneIds": ["euw1-az1"]}}))
    assert call(PlannerMocks("eu-west-1", user=answers), token)["names"] == ["eu-west-1a"]
    assert len(call(PlannerMocks("eu-west-1"), token)["names"]) == 6


def test_snake_case_results_are_refused_with_the_camel_case_name(tmp_path):
    with pytest.raises(PlannerError, match="image_id -> imageId"):
        user_mocks.load(write(tmp_path, {AMI: {"image_id": "ami-1"}}))


@pytest.mark.parametrize("data, words", [
    (["not", "a", "mapping"], "must map invoke tokens"),
    ({AMI: [{"args": {}, "answer": {}}]}, "an entry is {args"),
    ({AMI: "ami-1"}, "a result is a mapping"),
])
def test_malformed_files_name_the_problem(tmp_path, data, words):
    with pytest.raises(PlannerError, match=words.replace("{", r"\{")):
        user_mocks.load(write(tmp_path, data))


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "mocks.json"
    path.write_text("{nope")
    with pytest.raises(PlannerError, match="not JSON"):
        user_mocks.load(path)
