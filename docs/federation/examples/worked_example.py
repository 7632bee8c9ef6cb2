"""Reproduces the worked examples of docs/federation/signatures.md and peering.md byte for byte.

Written from the documentation alone, without interai's code, using only the `cryptography` package for Ed25519
(pip install cryptography). Ed25519 signatures are deterministic (RFC 8032), so any correct implementation prints
the same Content-Digest, signature bases and signatures as below. Run it and compare:

    python3 worked_example.py

It exits non-zero if any value differs from the one the documentation shows.
"""

import base64
import hashlib
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58btc(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    text = ""
    while number:
        number, remainder = divmod(number, 58)
        text = BASE58[remainder] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text


def multikey(raw: bytes) -> str:
    """FEP-521a publicKeyMultibase: z + base58btc(0xed 0x01 + 32-byte key)."""
    return "z" + base58btc(b"\xed\x01" + raw)


def fingerprint(raw: bytes) -> str:
    """SHA256: + unpadded standard base64 of SHA-256 of the raw 32-byte key."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")


def content_digest(body: bytes) -> str:
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"


def signature_params(components, created, expires, nonce, keyid):
    names = " ".join(f'"{name}"' for name in components)
    return f'({names});created={created};expires={expires};nonce="{nonce}";keyid="{keyid}";alg="ed25519"'


def signature_base(lines, params):
    return "".join(f'"{name}": {value}\n' for name, value in lines) + f'"@signature-params": {params}'


ALPHA_SEED = bytes(range(0, 32))  # 000102…1f
ALPHA_NEXT_SEED = bytes(range(32, 64))  # 202122…3f
ALPHA_KEY_ID = "https://alpha.example/actor#key-01mcbw7ec079y2x4dg9nfpx2h1"
ALPHA_NEXT_KEY_ID = "https://alpha.example/actor#key-01mf5jsbg0brnryv8mrwx9ytt6"

alpha = Ed25519PrivateKey.from_private_bytes(ALPHA_SEED)
alpha_raw = alpha.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
alpha_next = Ed25519PrivateKey.from_private_bytes(ALPHA_NEXT_SEED)
alpha_next_raw = alpha_next.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

follow_body = (
    '{"@context":["https://www.w3.org/ns/activitystreams","https://w3id.org/security/v1",'
    '"https://w3id.org/security/multikey/v1",{"endorsement":{"@id":"interai:endorsement","@type":"@json"},'
    '"interai":"https://w3id.org/interai/ns#","manifest":{"@id":"interai:manifest","@type":"@id"},'
    '"realm":"interai:realm","validFrom":{"@id":"interai:validFrom",'
    '"@type":"http://www.w3.org/2001/XMLSchema#dateTime"}}],'
    '"id":"https://alpha.example/activities/01mcc5rm003ef4rw52te7nwv0k","type":"Follow",'
    '"actor":"https://alpha.example/actor","object":"https://beta.example/actor",'
    '"to":["https://beta.example/actor"],"published":"2027-01-15T08:00:00Z"}'
).encode()

# 1. The signed POST of a Follow to beta's inbox.
digest = content_digest(follow_body)
post_params = signature_params(
    ["@method", "@target-uri", "@authority", "content-type", "content-digest"],
    1800000000, 1800000300, "X6PAnkHSe4bjDJpdF_hLYg", ALPHA_KEY_ID,
)
post_base = signature_base(
    [
        ("@method", "POST"),
        ("@target-uri", "https://beta.example/inbox"),
        ("@authority", "beta.example"),
        ("content-type", "application/activity+json"),
        ("content-digest", digest),
    ],
    post_params,
)
post_signature = base64.b64encode(alpha.sign(post_base.encode())).decode()

# 2. The signed GET of beta's outbox.
get_params = signature_params(
    ["@method", "@target-uri", "@authority"], 1800000060, 1800000360, "obLD1OX2BxgpOktcbX6PkA", ALPHA_KEY_ID
)
get_base = signature_base(
    [("@method", "GET"), ("@target-uri", "https://beta.example/outbox"), ("@authority", "beta.example")], get_params
)
get_signature = base64.b64encode(alpha.sign(get_base.encode())).decode()

# 3. The endorsement of alpha's next key by its current key.
endorsement_message = "\n".join(
    ["interai-key-endorsement-v1", ALPHA_NEXT_KEY_ID, multikey(alpha_next_raw), "1803000000"]
)
endorsement = base64.b64encode(alpha.sign(endorsement_message.encode())).decode()

expected = {
    "alpha public key (hex)": "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8",
    "alpha multikey": "z6MkehRgf7yJbgaGfYsdoAsKdBPE3dj2CYhowQdcjqSJgvVd",
    "alpha fingerprint": "SHA256:Vkdap1RjR0wChd9dvyvKtz2mUTWIOem3dIGy6rEHcIw",
    "alpha next multikey": "z6MkhFwXNFWosLeugvSf4wcL9t3uuRXueGSFTRgSvHhWj5G2",
    "alpha next fingerprint": "SHA256:JPbtasv+EAnAMNfKVnwzykgwkRSYI2tVYabIKr7F3ig",
    "Follow body length": "626",
    "Content-Digest": "sha-256=:TAGATrpGqFk0sysPVONGYbQpjy4e9dWoCT7E5ZR/BCI=:",
    "POST signature": "dFXDc9f4bgB1Na+uu73jKKt46XIBWzR12KW864BbjFsOc+l2D2ED8cHJ/ebKhI0cEGiAUs8iXAQFZ5W+IGhvBw==",
    "GET signature": "StNghRXX7cZ1Ei3Iv6oCCq18dDJ/2yKhvj3mEM/srgqQwiQ1pXzttJWpr41EKr5wJSD4ou6kZGi5N1gs61sLCQ==",
    "endorsement": "Tg+VP4vLcFRazbETiA4bPtAo4dOPNUg6LKy6Kp8he8b0fOLoGp1Jl0FPTpjkkW+sa/uO5p9p6UeDBVnyWhMAAA==",
}
computed = {
    "alpha public key (hex)": alpha_raw.hex(),
    "alpha multikey": multikey(alpha_raw),
    "alpha fingerprint": fingerprint(alpha_raw),
    "alpha next multikey": multikey(alpha_next_raw),
    "alpha next fingerprint": fingerprint(alpha_next_raw),
    "Follow body length": str(len(follow_body)),
    "Content-Digest": digest,
    "POST signature": post_signature,
    "GET signature": get_signature,
    "endorsement": endorsement,
}

print("POST signature base:\n" + post_base + "\n")
print("GET signature base:\n" + get_base + "\n")
print("Endorsement message:\n" + endorsement_message + "\n")
wrong = 0
for name, value in computed.items():
    mark = "ok" if value == expected[name] else f"DIFFERS, documented {expected[name]}"
    wrong += value != expected[name]
    print(f"{name}: {value}  [{mark}]")
sys.exit(1 if wrong else 0)
