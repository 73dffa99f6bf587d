"""The syntax rules of facts/syntax.py, against their sources: botocore's service models and endpoint data
for AWS, Kubernetes' documented rules for names, labels, taints, selectors and quantities."""
from __future__ import annotations

import re
from fractions import Fraction

import botocore.loaders
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.facts import syntax


def _shape(service: str, name: str) -> dict:
    return botocore.loaders.Loader().load_service_model(service, "service-2")["shapes"][name]


# --- AWS, from botocore ---

def test_every_region_of_every_partition_is_a_region_and_has_zones():
    endpoints = botocore.loaders.Loader().load_data("endpoints")
    regions = [r for p in endpoints["partitions"] for r in p["regions"]]
    assert len(regions) > 30 and "eusc-de-east-1" in regions and "us-gov-west-1" in regions
    assert [r for r in regions if syntax.region(r) or syntax.zone(r + "a", r)] == []


@pytest.mark.parametrize("bad", ["", "us-east-1; rm -rf /", "US-EAST-1", "us-east", "useast1", "us-east-1a", " us-east-1",
                                 "us-east-1\n", "us_east_1"])
def test_what_is_not_a_region(bad):
    assert syntax.region(bad)


def test_zones_belong_to_their_region():
    assert syntax.zone("us-east-1c", "us-east-1") is None
    assert syntax.zone("eu-west-1c", "us-east-1") == ("'eu-west-1c' is a zone of eu-west-1, not of the stack's region "
                                                      "us-east-1 (aws:region)")
    for bad in ("us-east-1", "us-east-1aa", "east", "", "us-east-1A", "us-east-1-dfw-a", "us-east-1-2a",
                "us-east-1-dfw-2", "us-east-1-DFW-2a"):
        assert syntax.zone(bad), bad


def test_a_local_zone_is_a_zone_of_its_parent_region():
    # AWS Local Zones user guide, Local Zone names: <parent region>-<location>-<number><letter>
    assert syntax.zone("us-east-1-dfw-2a", "us-east-1") is None and syntax.is_local_zone("us-east-1-dfw-2a")
    assert syntax.local_zone_region("us-west-2-lax-1a") == "us-west-2"
    assert "not of the stack's region us-west-2" in syntax.zone("us-east-1-dfw-2a", "us-west-2")
    assert not syntax.is_local_zone("us-east-1a")


def test_tag_limits_are_the_strictest_services():
    key, value = _shape("iam", "tagKeyType"), _shape("iam", "tagValueType")
    assert (key["min"], key["max"], value["max"]) == (1, syntax.TAG_KEY_MAX, syntax.TAG_VALUE_MAX)
    for service in ("fsx",):
        assert _shape(service, "TagKey")["max"] == syntax.TAG_KEY_MAX and _shape(service, "TagValue")["max"] == syntax.TAG_VALUE_MAX
    # The pattern \p{L}\p{Z}\p{N} and _ . : / = + - @, which Python's re cannot spell: its punctuation is ours.
    assert key["pattern"] == "[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]+" and set(syntax.TAG_PUNCTUATION) == set("_.:/=+-@")


@pytest.mark.parametrize("key, value", [("team", "research"), ("cost-center", "ML 42"), ("Équipe", "données/2026"),
                                        ("a" * 128, "v" * 256), ("gpu-platform/environment", "prod"), ("x", "")])
def test_tags_aws_takes(key, value):
    assert syntax.tag_key(key) is None and syntax.tag_value(value) is None


@pytest.mark.parametrize("key, value, words", [
    ("aws:owner", "x", "the 'aws:' prefix is reserved for AWS"), ("AWS:Owner", "x", "reserved for AWS"),
    ("", "x", "AWS takes 1 to 128"), ("a" * 129, "x", "AWS takes 1 to 128"), ("k", "v" * 257, "at most 256"),
    ("k", "a\nb", "holds '\\n'"), ("k", "$(reboot)", "holds '$'"), ("k;", "v", "holds ';'"),
])
def test_tags_aws_refuses(key, value, words):
    assert words in (syntax.tag_key(key) or syntax.tag_value(value))


@pytest.mark.parametrize("check, good, bad", [
    (syntax.subnet_id, ["subnet-0a1b2c3d", "subnet-0aaa1111bbbb2222c"], ["subnet-1", "subnet-xyz; drop", "subnet-0A1B2C3D",
                                                                         "sg-0a1b2c3d"]),
    (syntax.security_group_id, ["sg-0a1b2c3d", "sg-0123456789abcdef0"], ["sg-1", "sg-0123456789abcdef", "subnet-0a1b2c3d"]),
    (syntax.ami_id, ["ami-0e2f8c4d7a1b3f596", "ami-12345678"], ["ami-123", "ami-0e2f8c4d7a1b3f59"]),
    (syntax.capacity_reservation_id, ["cr-0b2c4d6e8f0a1b3c5", "cr-0123abcd"], ["cr-1", "cr-0b2c4d6e8f0a1b3c5\n", "cr-xyz"]),
    (syntax.instance_type, ["m6i.large", "p5.48xlarge", "u-6tb1.metal"], ["m6i", "M6I.LARGE", "m6i.large;", ""]),
    (syntax.cidr, ["10.40.0.0/16", "0.0.0.0/0", "203.0.113.7/32", "2001:db8::/32"], ["not-a-cidr", "10.40.0.1/16",
                                                                                      "10.40.0.0/33", ""]),
])
def test_aws_ids_and_blocks(check, good, bad):
    assert [v for v in good if check(v)] == [] and [v for v in bad if not check(v)] == []


def test_a_capacity_reservation_id_we_take_is_one_karpenter_takes():
    from gpu_platform.facts import catalog

    assert re.fullmatch(catalog.CAPACITY_RESERVATION_ID.strip("^$"), "cr-0b2c4d6e8f0a1b3c5")
    assert syntax.capacity_reservation_id("cr-0B2C4D6E8F0A1B3C5")  # EC2 ids are lowercase; Karpenter's CRD agrees


# --- Kubernetes ---

@pytest.mark.parametrize("key", ["workload", "gpu-platform.io/pool", "example.com/team_name", "a", "A.b-c_d",
                                 "x" * 63, f"{'p' * 253}/n"])
def test_label_keys_kubernetes_takes(key):
    assert syntax.label_key(key) is None


@pytest.mark.parametrize("key, words", [
    ("bad key!", "may hold only letters, digits"), ("example.com/", "has no name after its prefix"),
    ("/name", "empty prefix"), ("Example.com/name", "not a DNS-1123 subdomain"), ("a/b/c", "not a DNS-1123 subdomain"),
    ("x" * 64, "the name has 64 characters; at most 63"), (f"{'p' * 254}/n", "the prefix has 254 characters"),
    ("-lead", "starting and ending"), ("trail.", "starting and ending"), ("", "has no name"), ("a\nb", "may hold only"),
])
def test_label_keys_kubernetes_refuses(key, words):
    assert words in syntax.label_key(key)


@pytest.mark.parametrize("value, ok", [("", True), ("training", True), ("v" * 63, True), ("a.b-c_D", True),
                                       ("v" * 64, False), ("a b", False), ("x\n--register-with-taints=evil", False),
                                       ("-x", False), ("x,y", False), ("x=y", False)])
def test_label_values(value, ok):
    assert (syntax.label_value(value) is None) == ok


def test_reserved_domains_include_their_subdomains():
    assert [syntax.reserved_domain(k) for k in ("kubernetes.io/arch", "node.kubernetes.io/x", "k8s.io/a", "x.k8s.io/a",
                                                "notkubernetes.io/a", "workload")] == [
        "kubernetes.io", "kubernetes.io", "k8s.io", "k8s.io", None, None]


def test_taints():
    assert syntax.taint("workload", "training", "NoSchedule") is None
    assert syntax.taint("workload", "training\n--register-with-taints=evil:NoSchedule", "NoSchedule").startswith(
        "taint value 'training\\n--register-with-taints=evil:NoSchedule' may hold only")
    assert syntax.taint("workload", "", "NO_SCHEDULE") == ("taint effect 'NO_SCHEDULE' is not one of NoSchedule, "
                                                           "PreferNoSchedule, NoExecute")


def test_namespaces():
    assert syntax.namespace("research") is None and syntax.namespace("r" * 63) is None
    assert syntax.namespace("kube-research") == "'kube-research': namespaces starting with 'kube-' are reserved for Kubernetes"
    assert "at most 63" in syntax.namespace("r" * 64) and "not a DNS-1123 label" in syntax.namespace("Research")


@pytest.mark.parametrize("selector", ["app=web", "app==web,tier!=cache", "env in (prod, staging)", "env notin (dev)",
                                      "gpu", "!legacy", "example.com/role=x, !example.com/old", ""])
def test_selectors_kubernetes_takes(selector):
    assert syntax.selector(selector) is None


@pytest.mark.parametrize("selector", ["app=web x", "app=a\nb", "bad key!=x", "env in prod", "a=b=c", "(x)"])
def test_selectors_kubernetes_refuses(selector):
    assert syntax.selector(selector)


def test_equality_selectors_refuse_set_terms():
    assert syntax.selector("a=b,c==d", equality_only=True) is None
    assert "is not key=value" in syntax.selector("a!=b", equality_only=True)
    assert "is not key=value" in syntax.selector("a in (b)", equality_only=True)


@pytest.mark.parametrize("text, value", [
    ("32", 32), ("250m", Fraction(1, 4)), ("1.5", Fraction(3, 2)), ("64Gi", 64 * 2**30), ("2Ti", 2**41), ("2T", 2 * 10**12),
    ("128e9", 128 * 10**9), ("1.5E3", 1500), ("5e-1", Fraction(1, 2)), ("2E", 2 * 10**18), (".5", Fraction(1, 2)),
    ("1.", 1), ("+3", 3), ("9223372036854775807", 2**63 - 1),
])
def test_quantities_kubernetes_takes(text, value):
    assert syntax.quantity(text) is None and syntax.quantity_fraction(text) == value


@pytest.mark.parametrize("text", ["", "-1", "1Kb", "1 Gi", "Gi", "1e", "1e100", "9223372036854775808", "1ki", "1x", "1e999",
                                  "1" * 41, "1.2.3"])
def test_quantities_kubernetes_refuses(text):
    assert syntax.quantity(text)


@pytest.mark.parametrize("number, text", [(32, "32"), (128e9, "128000000000"), (0.5, "0.5"), (1e-05, "1e-05"),
                                          (True, True), ("1Gi", "1Gi")])
def test_a_yaml_number_given_for_a_quantity_is_its_text(number, text):
    assert syntax.quantity_text(number) == text


# --- storage: S3 bucket names (S3 user guide, "General purpose bucket naming rules"), FSx paths, claims ---

_BUCKET_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789.-"


def _s3_refuses(name: str) -> bool:
    """The S3 rules as the user guide lists them, one by one (independent of the implementation's order)."""
    return (not 3 <= len(name) <= 63 or any(c not in _BUCKET_CHARS for c in name) or not name[0].isalnum()
            or not name[-1].isalnum() or ".." in name or bool(re.fullmatch(r"\d+\.\d+\.\d+\.\d+", name))
            or name.startswith(("xn--", "sthree-", "amzn-s3-demo-"))
            or name.endswith(("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")))


@given(st.one_of(st.text(_BUCKET_CHARS, max_size=70), st.text(max_size=70),
                 st.builds("".join, st.lists(st.sampled_from(["xn--", "sthree-", "amzn-s3-demo-", "-s3alias", "--ol-s3",
                                                              ".mrap", "--x-s3", "--table-s3", "..", "10", ".", "a", "-"]),
                                             max_size=6))))
@settings(max_examples=400, derandomize=True, database=None)
def test_a_bucket_name_is_refused_exactly_when_s3_refuses_it(name):
    assert bool(syntax.s3_bucket(name)) == _s3_refuses(name), name


@pytest.mark.parametrize("name, words", [
    ("gpu..x", "two adjacent periods"), ("192.168.5.4", "formatted as an IP address"), ("ab", "has 2 characters"),
    ("b" * 64, "has 64 characters"), ("Gpu-data", "lowercase letters"), ("-data", "starting and ending"),
    ("xn--data", "the prefix 'xn--'"), ("sthree-configurator-x", "the prefix 'sthree-'"),
    ("amzn-s3-demo-bucket", "the prefix 'amzn-s3-demo-'"), ("data-s3alias", "the suffix '-s3alias'"),
    ("data--ol-s3", "the suffix '--ol-s3'"), ("data.mrap", "the suffix '.mrap'"), ("data--x-s3", "the suffix '--x-s3'"),
    ("data--table-s3", "the suffix '--table-s3'"),
])
def test_bucket_names_s3_refuses_are_named_with_the_rule(name, words):
    assert words in syntax.s3_bucket(name)


@pytest.mark.parametrize("name", ["gpu-prod-datasets", "a.b.c", "abc", "b" * 63, "192.168.5", "1.2.3.4.5", "my-s3alias-x"])
def test_bucket_names_s3_takes(name):
    assert syntax.s3_bucket(name) is None


def test_fsx_path_limits_are_the_fsx_api_shapes():
    shapes = {n: _shape("fsx", n) for n in ("Namespace", "ArchivePath")}
    assert (shapes["Namespace"]["min"], shapes["Namespace"]["max"]) == (1, syntax.FSX_FILE_SYSTEM_PATH_MAX)
    assert (shapes["ArchivePath"]["min"], shapes["ArchivePath"]["max"]) == (syntax.FSX_DATA_REPOSITORY_PATH_MIN,
                                                                          syntax.FSX_DATA_REPOSITORY_PATH_MAX)
    for shape in shapes.values():  # both patterns forbid the same characters
        forbidden = re.fullmatch(r"\^\[\^(.*)\]\{\d+,\d+\}\$", shape["pattern"]).group(1)
        assert forbidden.encode().decode("unicode_escape") == syntax.FSX_PATH_FORBIDDEN


@pytest.mark.parametrize("check, good, bad", [
    (syntax.fsx_file_system_path, ["/", "/ns1/", "/data set/x", "/" + "d" * 4095], ["", "ns1", "/" + "d" * 4096, "/a\x00b",
                                                                                 "/a\nb", "/a\u2028b"]),
    (syntax.s3_uri, ["s3://gpu-prod-datasets", "s3://gpu-prod-datasets/training/", "s3://abc/" + "k" * 4347],
     ["s3://gpu..x/a", "s3://192.168.5.4", "gpu-prod/x", "s3://", "s3://abc/" + "k" * 4349, "s3://abc/a\rb",
      "s3://Abc/x"]),
])
def test_fsx_link_paths(check, good, bad):
    assert [g for g in good if check(g)] == [] and [b for b in bad if not check(b)] == []


@pytest.mark.parametrize("text, ok", [("1Ti", True), ("1", True), ("1m", True), ("0", False), ("0Ti", False),
                                      ("0.0", False), ("0e3", False), ("-1Gi", False), ("x", False)])
def test_a_storage_request_is_a_quantity_above_zero(text, ok):
    assert (syntax.storage_request(text) is None) == ok
