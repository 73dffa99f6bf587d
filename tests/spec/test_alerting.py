"""The stack file's alerting receivers (spec/alerting.py)."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpu_platform.spec.alerting import SLACK_CHANNEL_MAX, SlackReceiverSpec


def slack(channel: str) -> SlackReceiverSpec:
    return SlackReceiverSpec.model_validate({"webhookUrlSecret": "slackWebhook", "channel": channel})


@pytest.mark.parametrize("channel", ["#gpu-platform", "@oncall", "ml_alerts.prod", "#général", "#機械学習",
                                     "#" + "a" * SLACK_CHANNEL_MAX, "a" * SLACK_CHANNEL_MAX])
def test_a_slack_channel_of_letters_digits_dots_dashes_and_underscores_is_taken(channel):
    assert slack(channel).channel == channel


@pytest.mark.parametrize("channel", ["#" + "a" * (SLACK_CHANNEL_MAX + 1), "a" * (SLACK_CHANNEL_MAX + 1)])
def test_a_slack_channel_name_longer_than_slack_allows_is_refused(channel):
    with pytest.raises(ValidationError, match=f"at most {SLACK_CHANNEL_MAX} characters, not {SLACK_CHANNEL_MAX + 1}"):
        slack(channel)


@pytest.mark.parametrize("channel", ["", "#", "#two words", "##ops", "#ops!", "#ops\n"])
def test_a_slack_channel_with_other_characters_is_refused(channel):
    with pytest.raises(ValidationError, match="should match pattern"):
        slack(channel)
