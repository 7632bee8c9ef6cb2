#!/usr/bin/env python3
"""Origin proofs (FEP-8b32, W3C vc-di-eddsa `eddsa-jcs-2022`) written from the specifications alone.

An independent implementation of what `federation::integrity` does, for other implementers and as a test oracle:
its output is committed as federation/tests/fixtures/integrity/python-origin-proof.json and the Rust tests check
that it verifies and that the Rust signer reproduces it byte for byte.

Needs Python 3.11 and the `cryptography` package (for Ed25519); everything else is the standard library.

    python3 origin_proof.py                 # prints the fixture (a signed sample Note and how it was made)
    python3 origin_proof.py --verify FILE   # verifies FILE's proof against the key in --key (publicKeyMultibase)

Before it prints anything it reproduces the W3C specification's eddsa-jcs-2022 example, so a fixture never comes
from a broken implementation.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import hashlib
import json
import math
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

CRYPTOSUITE = "eddsa-jcs-2022"
PROOF_TYPE = "DataIntegrityProof"
MAX_SAFE_INTEGER = 2**53 - 1

# --- RFC 8785 JSON Canonicalization Scheme ---------------------------------------------------------------------


def es_number(value: float) -> str:
    """ECMAScript Number::toString (ECMA-262 Number::toString, the layout RFC 8785 section 3.2.2.3 prescribes)."""
    if not math.isfinite(value):
        raise ValueError("NaN and Infinity are not JSON")
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    # repr() gives the shortest digits that read back as the same double (closest of them), as ECMAScript wants.
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    k = len(digits)
    n = exponent + k  # value = 0.digits * 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        power = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text


def jcs_string(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\b":
            out.append("\\b")
        elif char == "\t":
            out.append("\\t")
        elif char == "\n":
            out.append("\\n")
        elif char == "\f":
            out.append("\\f")
        elif char == "\r":
            out.append("\\r")
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def jcs(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"integer {value} is beyond I-JSON's exact range")
        return str(value)
    if isinstance(value, float):
        return es_number(value)
    if isinstance(value, str):
        return jcs_string(value)
    if isinstance(value, list):
        return "[" + ",".join(jcs(item) for item in value) + "]"
    if isinstance(value, dict):
        # Members sorted by their names as arrays of UTF-16 code units; big-endian UTF-16 bytes sort the same way.
        names = sorted(value, key=lambda name: name.encode("utf-16-be"))
        return "{" + ",".join(jcs_string(name) + ":" + jcs(value[name]) for name in names) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def jcs_bytes(value) -> bytes:
    return jcs(value).encode("utf-8")


# --- base58btc and multibase -----------------------------------------------------------------------------------

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58_encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, remainder = divmod(number, 58)
        out = ALPHABET[remainder] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def base58_decode(text: str) -> bytes:
    number = 0
    for char in text:
        number = number * 58 + ALPHABET.index(char)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


def multikey(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "z" + base58_encode(b"\xed\x01" + raw)


def public_key_from_multikey(text: str) -> Ed25519PublicKey:
    decoded = base58_decode(text.removeprefix("z"))
    if not text.startswith("z") or decoded[:2] != b"\xed\x01" or len(decoded) != 34:
        raise ValueError("not an Ed25519 Multikey")
    return Ed25519PublicKey.from_public_bytes(decoded[2:])


def secret_from_multikey(text: str) -> bytes:
    decoded = base58_decode(text.removeprefix("z"))
    if not text.startswith("z") or decoded[:2] != b"\x80\x26" or len(decoded) != 34:
        raise ValueError("not an Ed25519 secret Multikey (ed25519-priv, 0x1300)")
    return decoded[2:]


# --- eddsa-jcs-2022 ----------------------------------------------------------------------------------------------


def hash_data(proof_config: dict, unsecured: dict) -> bytes:
    """vc-di-eddsa section 3.3.4 (hashing): SHA-256 of the canonical proof configuration, then of the document."""
    return hashlib.sha256(jcs_bytes(proof_config)).digest() + hashlib.sha256(jcs_bytes(unsecured)).digest()


def rfc3339(unix_seconds: int) -> str:
    instant = datetime.datetime.fromtimestamp(unix_seconds, tz=datetime.timezone.utc)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def sign(document: dict, seed: bytes, verification_method: str, created: str) -> dict:
    unsecured = {name: value for name, value in document.items() if name != "proof"}
    proof = {
        "type": PROOF_TYPE,
        "cryptosuite": CRYPTOSUITE,
        "verificationMethod": verification_method,
        "proofPurpose": "assertionMethod",
        "created": created,
    }
    if "@context" in unsecured:
        proof["@context"] = unsecured["@context"]
    signature = Ed25519PrivateKey.from_private_bytes(seed).sign(hash_data(proof, unsecured))
    proof["proofValue"] = "z" + base58_encode(signature)
    return {**unsecured, "proof": proof}


def verify(document: dict, public_key: Ed25519PublicKey) -> bool:
    proof = document.get("proof")
    if not isinstance(proof, dict):
        return False
    if proof.get("type") != PROOF_TYPE or proof.get("cryptosuite") != CRYPTOSUITE:
        return False
    if proof.get("proofPurpose") != "assertionMethod":
        return False
    if "@context" in proof and proof["@context"] != document.get("@context"):
        return False
    proof_value = proof.get("proofValue")
    if not isinstance(proof_value, str) or not proof_value.startswith("z"):
        return False
    signature = base58_decode(proof_value[1:])
    unsecured = {name: value for name, value in document.items() if name != "proof"}
    proof_config = {name: value for name, value in proof.items() if name != "proofValue"}
    try:
        public_key.verify(signature, hash_data(proof_config, unsecured))
    except Exception:  # cryptography raises InvalidSignature; anything else is a malformed value
        return False
    return True


# --- the W3C example, as a self-check ---------------------------------------------------------------------------

W3C_SECRET = "z3u2en7t5LR2WtQH5PfFqMqwVHBeXouLzo6haApm8XHqvjxq"
W3C_PUBLIC = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"
W3C_CREDENTIAL = {
    "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
    "id": "urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33",
    "type": ["VerifiableCredential", "AlumniCredential"],
    "name": "Alumni Credential",
    "description": "A minimum viable example of an Alumni Credential.",
    "issuer": "https://vc.example/issuers/5678",
    "validFrom": "2023-01-01T00:00:00Z",
    "credentialSubject": {"id": "did:example:abcdefgh", "alumniOf": "The School of Examples"},
}
W3C_PROOF_VALUE = "z63t83Y53KfzJ5ZosfKTnqfMcKB2dmTrfjSaQjeNNjAD5srBowQfmWqeRb8rRjmeEuCBEsddF9LsVogtuTsijJKh4"


def self_check() -> None:
    assert es_number(1e23) == "1e+23" and es_number(9.999999999999997e-7) == "9.999999999999997e-7"
    assert es_number(295147905179352830000.0) == "295147905179352830000" and es_number(1e-6) == "0.000001"
    seed = secret_from_multikey(W3C_SECRET)
    assert multikey(Ed25519PrivateKey.from_private_bytes(seed).public_key()) == W3C_PUBLIC
    signed = sign(
        W3C_CREDENTIAL,
        seed,
        "https://vc.example/issuers/5678#" + W3C_PUBLIC,
        "2023-02-24T23:36:38Z",
    )
    if signed["proof"]["proofValue"] != W3C_PROOF_VALUE:
        sys.exit("self-check failed: the W3C eddsa-jcs-2022 example does not reproduce")
    assert verify(signed, public_key_from_multikey(W3C_PUBLIC))


# --- the sample ---------------------------------------------------------------------------------------------------

# A fixed seed, so the output is reproducible (Ed25519 signatures are deterministic). Never a real key.
SAMPLE_SEED = hashlib.sha256(b"interai origin proof example key").digest()
SAMPLE_KEY_ID = "https://alpha.test/actor#key-1"
SAMPLE_CREATED_UNIX = 1_800_000_000

# An object as an origin instance publishes it, with what makes canonicalization interesting: non-ASCII text,
# member names that UTF-16 and code-point order sort differently, escapes, and numbers ECMAScript lays out
# in each of its forms.
SAMPLE_DOCUMENT = {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/data-integrity/v2"],
    "id": "https://alpha.test/o/01jexample0000000000000000",
    "type": "Note",
    "attributedTo": "https://alpha.test/actor",
    "published": "2027-01-15T08:00:00Z",
    "to": ["https://www.w3.org/ns/activitystreams#Public"],
    "content": "Grüße aus Zürich: 5 € — \"quoted\", a tab\tand a newline\n, emoji 😀",
    "tag": [{"type": "Hashtag", "name": "#jcs"}],
    "interaiScores": {"\ufb33": 1, "😀": 2, "€": 3, "z": [0.5, -0.0, 1e21, 1e-7, 333333333.33333329, 100]},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verify", metavar="FILE", help="verify the proof of the JSON object in FILE")
    parser.add_argument("--key", metavar="MULTIKEY", help="the publicKeyMultibase to verify with")
    arguments = parser.parse_args()
    self_check()
    if arguments.verify:
        with open(arguments.verify, encoding="utf-8") as file:
            document = json.load(file)
        if "document" in document and "public_key_multibase" in document:  # the fixture this script writes
            arguments.key = arguments.key or document["public_key_multibase"]
            document = document["document"]
        ok = verify(document, public_key_from_multikey(arguments.key))
        print("valid" if ok else "INVALID")
        sys.exit(0 if ok else 1)

    created = rfc3339(SAMPLE_CREATED_UNIX)
    signed = sign(SAMPLE_DOCUMENT, SAMPLE_SEED, SAMPLE_KEY_ID, created)
    public_key = Ed25519PrivateKey.from_private_bytes(SAMPLE_SEED).public_key()
    assert verify(signed, public_key)
    proof_config = {name: value for name, value in signed["proof"].items() if name != "proofValue"}
    unsecured = {name: value for name, value in signed.items() if name != "proof"}
    fixture = {
        "made_by": "docs/federation/examples/origin_proof.py (Python, cryptography for Ed25519)",
        "seed_hex": SAMPLE_SEED.hex(),
        "public_key_multibase": multikey(public_key),
        "verification_method": SAMPLE_KEY_ID,
        "created_unix": SAMPLE_CREATED_UNIX,
        "canonical_proof_config": jcs(proof_config),
        "canonical_document": jcs(unsecured),
        "hash_data_hex": hash_data(proof_config, unsecured).hex(),
        "document": signed,
    }
    print(json.dumps(fixture, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
