#!/usr/bin/env bash
# gen-vectors.sh — regenerate the host-key test vectors in this directory.
#
# The vectors come from implementations that are not syslet's: OpenSSH's
# ssh-keygen makes the keys, libsodium (Debian's python3-nacl:
# crypto_sign_ed25519_sk_to_curve25519 / _pk_to_curve25519) converts them
# to X25519, and age's own age-keygen (Debian's age) turns each identity
# into its recipient. The script fails unless all of them agree.
# Needs Debian's python3 (/usr/bin/python3) and: apt-get install -y openssh-client python3-nacl age
set -euo pipefail
cd "$(dirname "$0")"
rm -f hostkey-* vectors.json
for i in 1 2 3; do ssh-keygen -q -t ed25519 -N '' -C "syslet-test-$i" -f "hostkey-$i"; done
ssh-keygen -q -t ecdsa -b 256 -N '' -C syslet-test-ecdsa -f hostkey-ecdsa
ssh-keygen -q -t ed25519 -N 'a passphrase' -C syslet-test-locked -f hostkey-locked
rm -f hostkey-*.pub

/usr/bin/python3 - <<'PY' > vectors.json
import base64, hashlib, json, subprocess, struct
from nacl.bindings import crypto_sign_ed25519_sk_to_curve25519, crypto_sign_ed25519_pk_to_curve25519

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
def polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk
def bech32(hrp, data):
    acc = bits = 0; five = []
    for b in data:
        acc = (acc << 8) | b; bits += 8
        while bits >= 5:
            bits -= 5; five.append((acc >> bits) & 31)
    if bits: five.append((acc << (5 - bits)) & 31)
    exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(exp + five + [0] * 6) ^ 1
    return hrp + "1" + "".join(CHARSET[d] for d in five + [(mod >> 5 * (5 - i)) & 31 for i in range(6)])

def openssh_ed25519(path):
    body = "".join(l for l in open(path).read().splitlines() if not l.startswith("-----"))
    blob = base64.b64decode(body)
    assert blob.startswith(b"openssh-key-v1\0")
    off = len(b"openssh-key-v1\0")
    def string():
        nonlocal off
        n, = struct.unpack(">I", blob[off:off+4]); off += 4
        s = blob[off:off+n]; off += n; return s
    assert string() == b"none" and string() == b"none"; string()
    off += 4; string()            # one key; public blob
    priv = string(); off = 0; blob = priv
    off = 8                       # two check ints
    assert string() == b"ssh-ed25519"
    pk = string(); sk = string()  # sk = seed || pk
    return sk, pk

def age_keygen_y(identity):
    return subprocess.run(["age-keygen", "-y"], input=identity + "\n", capture_output=True, text=True, check=True).stdout.strip()

out = []
for i in (1, 2, 3):
    sk, pk = openssh_ed25519(f"hostkey-{i}")
    clamped = crypto_sign_ed25519_sk_to_curve25519(sk)
    unclamped = hashlib.sha512(sk[:32]).digest()[:32]
    recipient = bech32("age", crypto_sign_ed25519_pk_to_curve25519(pk))
    ident = bech32("age-secret-key-", unclamped).upper()
    ident_clamped = bech32("age-secret-key-", clamped).upper()
    for s in (ident, ident_clamped):
        got = age_keygen_y(s)
        assert got == recipient, (i, got, recipient)
    out.append({"key": f"hostkey-{i}", "identity": ident, "identityClamped": ident_clamped,
                "x25519Clamped": clamped.hex(), "recipient": recipient})
print(json.dumps(out, indent=2))
PY
echo "wrote $(pwd)/vectors.json"
