"""The syntax of every string the platform hands to another system, checked as that system checks it.

One place for each rule, with its source. The stack file's models check their fields with these rules
(spec/fields.py), so a component's arguments, which reuse the models, are checked by the same rules; the
decisions that write names into a boot script check them again (decisions/launch_template.py). Each check
returns what is wrong (None when the value is valid), naming the rule, so a problem reads
`nodePools[0].labels["bad key!"]: label key 'bad key!': ...`. Plain Python: the policy pack may use it.

Kubernetes (k8s.io/apimachinery/pkg/util/validation, and the API reference "Object Names and IDs",
"Labels and Selectors", "Taints and Tolerations"):
- DNS-1123 label: at most 63 characters, lowercase letters, digits and `-`, starting and ending with a
  letter or digit (namespace names); DNS-1123 subdomain: such labels joined by `.`, at most 253.
- label key: an optional prefix (a DNS-1123 subdomain) and `/`, then a name of at most 63 characters of
  letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit. The `kubernetes.io` and
  `k8s.io` prefixes and their subdomains are reserved for Kubernetes (and kubelet refuses to register a
  node with labels under them outside a short allow-list).
- label value: empty, or at most 63 characters of the same set, starting and ending with a letter or digit.
- taint: the key is a label key, the value a label value, the effect NoSchedule, PreferNoSchedule or NoExecute.
- namespace names starting with `kube-` are reserved for Kubernetes' own namespaces.
- quantity: `<number><suffix>`, the suffix a binary (Ki..Ei) or decimal (m, k..E) multiplier or an
  exponent (`e3`, `E-2`), at most 2^63-1 (resource.Quantity).

AWS:
- tags (IAM and FSx TagKey/TagValue, the strictest of the services the platform tags, botocore service
  models): a key of 1-128 and a value of 0-256 letters, digits, spaces and `_ . : / = + - @`; the `aws:`
  prefix is reserved for AWS (in any case).
- region: `<area>-<place>-<number>` such as us-east-1, us-gov-west-1 or eusc-de-east-1 (every region of
  every partition in botocore's endpoints data has this form); an availability zone is its region and one
  letter (us-east-1a); a Local Zone is its parent region, its location and group number, and one letter
  (us-east-1-dfw-2a: AWS Local Zones user guide, "Local Zone names"). EKS places no cluster subnet in a Local
  Zone, but a node group's subnets may be there (EKS user guide, local-zones.html).
- resource ids: `subnet-`, `sg-`, `ami-` and `cr-` (capacity reservations) and 8 or 17 hexadecimal digits.
- CIDR blocks: an IPv4 or IPv6 network with no host bits set.
- S3 bucket names (S3 user guide, "General purpose bucket naming rules",
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html): 3-63 lowercase letters,
  digits, `.` and `-`, starting and ending with a letter or digit, no two adjacent periods, not an IP
  address, none of the prefixes and suffixes S3 reserves (below).
- FSx for Lustre data repository association paths (FSx API reference, CreateDataRepositoryAssociation;
  botocore's `fsx` service model, shapes `Namespace` and `ArchivePath`): a file system path of 1-4096 and a
  data repository path of 3-4357 characters, neither holding NUL, NEL, a line or paragraph separator, CR or LF.
Every pattern is matched against the whole value (`fullmatch`: `$` would let a trailing newline through).
"""
from __future__ import annotations

import ipaddress
import math
import re
import unicodedata
from fractions import Fraction
from typing import Any, Optional
from collections.abc import Callable

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
LABEL_NAME_MAX = 63
LABEL_VALUE_MAX = 63
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_LABEL = re.compile(_DNS_LABEL)
DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
RESERVED_DOMAINS = ("kubernetes.io", "k8s.io")
RESERVED_NAMESPACE_PREFIX = "kube-"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

TAG_KEY_MAX = 128
TAG_VALUE_MAX = 256
TAG_PUNCTUATION = "_.:/=+-@"
RESERVED_TAG_PREFIX = "aws:"
REGION = re.compile(r"[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}")
ZONE_LETTER = re.compile(r"[a-z]")
LOCAL_ZONE_SUFFIX = re.compile(r"-[a-z]{3,}-[0-9]{1,2}[a-z]")  # after the parent region: -dfw-2a
_ID = "([0-9a-f]{8}|[0-9a-f]{17})"
SUBNET_ID = re.compile(rf"subnet-{_ID}")
SECURITY_GROUP_ID = re.compile(rf"sg-{_ID}")
AMI_ID = re.compile(rf"ami-{_ID}")
CAPACITY_RESERVATION_ID = re.compile(rf"cr-{_ID}")  # a Capacity Block or On-Demand Capacity Reservation
INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")  # family.size, e.g. m6i.large, u-6tb1.metal

QUANTITY_MAX = 2**63 - 1
QUANTITY_DIGITS_MAX = 40  # far past 2^63-1 at Kubernetes' resolution of 0.001
QUANTITY = re.compile(r"\+?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exponent>[-+]?[0-9]{1,2})|(?P<suffix>[a-zA-Z]*))")
QUANTITY_SUFFIXES: dict[str, int | Fraction] = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
                     "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}

Problem = Optional[str]


def kind_of(value: Any) -> str:
    """How a message names a value of the wrong type: `a list`, `a number`, `true`."""
    if isinstance(value, bool):
        return str(value).lower()
    return {list: "a list", dict: "an object", int: "a number", float: "a number", type(None): "null"}.get(
        type(value), f"a {type(value).__name__}")


# --- Kubernetes names, labels and taints ---

def dns_label(value: str) -> Problem:
    if len(value) > DNS_LABEL_MAX:
        return f"{value[:20]!r}... has {len(value)} characters; a DNS-1123 label has at most {DNS_LABEL_MAX}"
    if not DNS_LABEL.fullmatch(value):
        return (f"{value!r} is not a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a "
                "letter or digit")
    return None


def dns_subdomain(value: str) -> Problem:
    if len(value) > DNS_SUBDOMAIN_MAX:
        return f"{value[:20]!r}... has {len(value)} characters; a DNS-1123 subdomain has at most {DNS_SUBDOMAIN_MAX}"
    if not DNS_SUBDOMAIN.fullmatch(value):
        return (f"{value!r} is not a DNS-1123 subdomain: DNS labels (lowercase letters, digits and '-') joined by "
                "'.'")
    return None


def namespace(value: str) -> Problem:
    """A namespace the platform creates: a DNS-1123 label outside Kubernetes' reserved `kube-` prefix."""
    if value.startswith(RESERVED_NAMESPACE_PREFIX):
        return f"{value!r}: namespaces starting with {RESERVED_NAMESPACE_PREFIX!r} are reserved for Kubernetes"
    return dns_label(value)


def label_key(value: str) -> Problem:
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return f"label key {value!r} has an empty prefix before '/'"
    if len(prefix) > DNS_SUBDOMAIN_MAX:
        return (f"label key {value[:30]!r}...: the prefix has {len(prefix)} characters; a DNS-1123 subdomain has at "
                f"most {DNS_SUBDOMAIN_MAX}")
    if prefix and not DNS_SUBDOMAIN.fullmatch(prefix):
        return (f"label key {value!r}: the prefix {prefix!r} is not a DNS-1123 subdomain (lowercase letters, digits, "
                "'-' and '.')")
    if not name:
        return f"label key {value!r} has no name" + (" after its prefix" if slash else "")
    if len(name) > LABEL_NAME_MAX:
        return f"label key {value[:30]!r}...: the name has {len(name)} characters; at most {LABEL_NAME_MAX}"
    if not LABEL_NAME.fullmatch(name):
        return (f"label key {value!r}: the name may hold only letters, digits, '-', '_' and '.', starting and "
                "ending with a letter or digit")
    return None


def label_value(value: str) -> Problem:
    if len(value) > LABEL_VALUE_MAX:
        return f"label value {value[:20]!r}... has {len(value)} characters; at most {LABEL_VALUE_MAX}"
    if value and not LABEL_NAME.fullmatch(value):
        return (f"label value {value!r} may hold only letters, digits, '-', '_' and '.', starting and ending with a "
                "letter or digit (or be empty)")
    return None


def reserved_domain(key: str) -> Optional[str]:
    """The Kubernetes domain (`kubernetes.io`, `k8s.io`) whose prefix `key` uses, or None."""
    prefix = key.rpartition("/")[0]
    return next((d for d in RESERVED_DOMAINS if prefix == d or prefix.endswith("." + d)), None)


def label(key: str, value: str) -> Problem:
    return label_key(key) or label_value(value)


def taint(key: str, value: str, effect: str) -> Problem:
    problem = label_key(key) or label_value(value)
    if problem:
        return "taint " + problem.replace("label ", "", 1)
    if effect not in TAINT_EFFECTS:
        return f"taint effect {effect!r} is not one of {', '.join(TAINT_EFFECTS)}"
    return None


_SET_TERM = re.compile(r"(?P<key>[^\s!=()]+)\s+(?P<op>in|notin)\s+\((?P<values>[^()]*)\)")
_EQUALITY_TERM = re.compile(r"(?P<key>[^\s!=()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)")
_EXISTS_TERM = re.compile(r"(?P<not>!?)\s*(?P<key>[^\s!=(),]+)")


def selector_terms(selector: str) -> list[str]:
    """`a=b, c in (x, y)` -> [`a=b`, `c in (x, y)`]: commas inside a set's parentheses stay with it."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(selector):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(selector[start:i].strip())
            start = i + 1
    terms.append(selector[start:].strip())
    return [t for t in terms if t]


def selector(value: str, equality_only: bool = False) -> Problem:
    """A Kubernetes label selector: `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`,
    `key`, `!key`, comma-separated (equality terms only when `equality_only`); every key and value checked."""
    for term in selector_terms(value):
        found = _EQUALITY_TERM.fullmatch(term)
        if found and (found.group("op") != "!=" or not equality_only):
            problem = label(found.group("key"), found.group("value"))
        elif equality_only:
            return f"{term!r} is not key=value: use an equality-based label selector (key=value[,key=value])"
        elif found := _SET_TERM.fullmatch(term):
            values = [v.strip() for v in found.group("values").split(",")]
            problem = label_key(found.group("key")) or next(filter(None, map(label_value, values)), None)
        elif found := _EXISTS_TERM.fullmatch(term):
            problem = label_key(found.group("key"))
        else:
            return f"{term!r} is not a label selector term (key=value, key!=value, key in (a,b), key notin (a,b), key, !key)"
        if problem:
            return f"in {term!r}: {problem}"
    return None


# --- AWS ---

def tag_key(key: str) -> Problem:
    if not 1 <= len(key) <= TAG_KEY_MAX:
        return f"tag key {key[:20]!r} has {len(key)} characters; AWS takes 1 to {TAG_KEY_MAX}"
    if key.lower().startswith(RESERVED_TAG_PREFIX):
        return f"tag key {key!r}: the {RESERVED_TAG_PREFIX!r} prefix is reserved for AWS"
    return _tag_text("tag key", key)


def tag_value(value: str) -> Problem:
    if len(value) > TAG_VALUE_MAX:
        return f"tag value {value[:20]!r}... has {len(value)} characters; AWS takes at most {TAG_VALUE_MAX}"
    return _tag_text("tag value", value)


def _tag_text(what: str, text: str) -> Problem:
    bad = next((c for c in text if not (unicodedata.category(c)[0] in "LNZ" or c in TAG_PUNCTUATION)), None)
    if bad is not None:
        return (f"{what} {text[:40]!r} holds {bad!r}; AWS tags take letters, digits, spaces and "
                f"{' '.join(TAG_PUNCTUATION)}")
    return None


def region(value: str) -> Problem:
    if not REGION.fullmatch(value):
        return f"{value[:40]!r} is not an AWS region name such as us-east-1 or eu-central-1"
    return None


def local_zone_region(value: str) -> Optional[str]:
    """The parent region of a Local Zone name (`us-east-1-dfw-2a` -> us-east-1), None for any other name."""
    found = LOCAL_ZONE_SUFFIX.search(value)
    if found is None or found.end() != len(value) or REGION.fullmatch(value[:found.start()]) is None:
        return None
    return value[:found.start()]


def is_local_zone(value: str) -> bool:
    return local_zone_region(value) is not None


def zone(value: str, in_region: Optional[str] = None) -> Problem:
    """An availability zone (a region and one letter) or a Local Zone (us-east-1-dfw-2a); in `in_region` when
    given."""
    area, letter = value[:-1], value[-1:]
    parent = local_zone_region(value) if value else None
    if parent is not None:
        area = parent
    elif not value or REGION.fullmatch(area) is None or not ZONE_LETTER.fullmatch(letter):
        return (f"{value[:40]!r} is not a zone name such as us-east-1a (a region and one letter) or a Local Zone "
                "such as us-east-1-dfw-2a")
    if in_region is not None and area != in_region:
        return f"{value!r} is a zone of {area}, not of the stack's region {in_region} (aws:region)"
    return None


def cidr(value: str) -> Problem:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        return f"{value[:50]!r} is not a CIDR block such as 203.0.113.0/24: {exc}"
    return None


def ipv4_cidr(value: str) -> Problem:
    """EKS's publicAccessCidrs take IPv4 networks only."""
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        return f"{value[:50]!r} is not an IPv4 CIDR block such as 203.0.113.0/24 (no host bits set): {exc}"
    return None


def _id(pattern: re.Pattern[str], what: str, example: str) -> Callable[[str], Problem]:
    def check(value: str) -> Problem:
        if not pattern.fullmatch(value):
            return f"{value[:40]!r} is not a {what} id such as {example} (8 or 17 hexadecimal digits)"
        return None
    return check


subnet_id = _id(SUBNET_ID, "subnet", "subnet-0a1b2c3d4e5f60718")
security_group_id = _id(SECURITY_GROUP_ID, "security group", "sg-0a1b2c3d4e5f60718")
ami_id = _id(AMI_ID, "AMI", "ami-0e2f8c4d7a1b3f596")
capacity_reservation_id = _id(CAPACITY_RESERVATION_ID, "capacity reservation", "cr-0b2c4d6e8f0a1b3c5")


def instance_type(value: str) -> Problem:
    if not INSTANCE_TYPE.fullmatch(value):
        return f"{value[:40]!r} is not an EC2 instance type such as m6i.large"
    return None


# --- storage: S3 buckets, FSx for Lustre links ---

S3_BUCKET_MIN, S3_BUCKET_MAX = 3, 63
S3_BUCKET = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")
S3_IP_FORM = re.compile(r"[0-9]+(\.[0-9]+){3}")  # "formatted as an IP address (for example, 192.168.5.4)"
# sthree-configurator is covered by sthree-; the suffixes belong to access point, Object Lambda, Multi-Region
# access point, directory bucket and table bucket names.
S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
S3_URI = re.compile(r"s3://(?P<bucket>[^/]*)(?P<prefix>/.*)?", re.DOTALL)
FSX_FILE_SYSTEM_PATH_MAX = 4096  # CreateDataRepositoryAssociation FileSystemPath (shape Namespace)
FSX_DATA_REPOSITORY_PATH_MIN, FSX_DATA_REPOSITORY_PATH_MAX = 3, 4357  # DataRepositoryPath (shape ArchivePath)
FSX_PATH_FORBIDDEN = "\x00\x85\u2028\u2029\r\n"  # both shapes' pattern ^[^\u0000\u0085\u2028\u2029\r\n]


def s3_bucket(name: str) -> Problem:
    what = f"S3 bucket name {name[:70]!r}"
    if not S3_BUCKET_MIN <= len(name) <= S3_BUCKET_MAX:
        return f"{what} has {len(name)} characters; S3 takes {S3_BUCKET_MIN} to {S3_BUCKET_MAX}"
    if not S3_BUCKET.fullmatch(name):
        return (f"{what} may hold only lowercase letters, digits, '.' and '-', starting and ending with a letter or "
                "digit")
    if ".." in name:
        return f"{what} holds two adjacent periods, which S3 refuses"
    if S3_IP_FORM.fullmatch(name):
        return f"{what} is formatted as an IP address, which S3 refuses"
    reserved = next((f"the prefix {p!r}" for p in S3_RESERVED_PREFIXES if name.startswith(p)), None) or next(
        (f"the suffix {s!r}" for s in S3_RESERVED_SUFFIXES if name.endswith(s)), None)
    if reserved:
        return (f"{what} uses {reserved}, which S3 reserves (prefixes {', '.join(S3_RESERVED_PREFIXES)}; suffixes "
                f"{', '.join(S3_RESERVED_SUFFIXES)})")
    return None


def s3_uri(value: str) -> Problem:
    """`s3://<bucket>[/<prefix>]`: a bucket S3 would create, and a path FSx can link (fsx_data_repository_path)."""
    found = S3_URI.fullmatch(value)
    if found is None:
        return f"{value[:70]!r} is not an S3 path such as s3://my-datasets/training"
    return s3_bucket(found.group("bucket")) or fsx_data_repository_path(value)


def _fsx_path(what: str, value: str, low: int, high: int) -> Problem:
    if not low <= len(value) <= high:
        return f"{what} {value[:40]!r}... has {len(value)} characters; FSx takes {low} to {high}"
    bad = next((c for c in value if c in FSX_PATH_FORBIDDEN), None)
    if bad is not None:
        return f"{what} {value[:70]!r} holds {bad!r}, which FSx refuses in a path"
    return None


def fsx_file_system_path(value: str) -> Problem:
    """Where a data repository association links in the file system: absolute, within FSx's length limit."""
    if not value.startswith("/"):
        return f"file system path {value[:70]!r} must start with '/' (FSx requires the leading slash)"
    return _fsx_path("file system path", value, 1, FSX_FILE_SYSTEM_PATH_MAX)


def fsx_data_repository_path(value: str) -> Problem:
    return _fsx_path("data repository path", value, FSX_DATA_REPOSITORY_PATH_MIN, FSX_DATA_REPOSITORY_PATH_MAX)


# --- quantities ---

def quantity(value: str) -> Problem:
    found = QUANTITY.fullmatch(value)
    if found is None or found.group("suffix") not in (None, *QUANTITY_SUFFIXES):
        return (f"{value[:40]!r} is not a Kubernetes quantity such as 500m, 64Gi, 2T or 128e9 (a number and a "
                "suffix or exponent)")
    if len(found.group("number")) > QUANTITY_DIGITS_MAX:
        return f"{value[:40]!r}... has more than {QUANTITY_DIGITS_MAX} digits"
    if quantity_fraction(value) > QUANTITY_MAX:
        return f"{value[:40]!r} is larger than Kubernetes' largest quantity (2^63-1)"
    return None


def storage_request(value: str) -> Problem:
    """A claim's storage request: a quantity above zero (Kubernetes' ValidatePersistentVolumeClaimSpec,
    k8s.io/kubernetes pkg/apis/core/validation, refuses spec.resources.requests.storage <= 0)."""
    problem = quantity(value)
    if problem is None and quantity_fraction(value) <= 0:
        return f"{value[:40]!r}: a claim's storage request must be above zero (Kubernetes refuses 0), e.g. 1Ti"
    return problem


def quantity_fraction(value: str) -> Fraction:
    """A quantity (already checked) as an exact number: `1.5` -> 3/2, `2Ti` -> 2**41, `128e9`, `250m` -> 1/4."""
    found = QUANTITY.fullmatch(value)
    if found is None:
        raise ValueError(f"{value[:40]!r} is not a Kubernetes quantity: check it with quantity() first")
    number = Fraction(found.group("number") + ("0" if found.group("number").endswith(".") else ""))
    if found.group("exponent") is not None:
        return number * Fraction(10) ** int(found.group("exponent"))
    return number * QUANTITY_SUFFIXES[found.group("suffix")]


def quantity_value(value: str) -> float:
    return float(quantity_fraction(value))


def quantity_text(value: Any) -> Any:
    """A YAML number given for a quantity (`cpu: 32`, `memory: 128e9`) as the quantity's text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and (not math.isfinite(value) or value.is_integer()):
        return str(int(value)) if math.isfinite(value) else value
    return repr(value)
