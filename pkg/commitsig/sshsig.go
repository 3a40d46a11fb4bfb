package commitsig

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash"

	"golang.org/x/crypto/ssh"
)

// The SSHSIG format (OpenSSH's PROTOCOL.sshsig): an armored blob
//
//	"SSHSIG" uint32(1) string(publickey) string(namespace) string(reserved)
//	string(hash_algorithm) string(signature)
//
// whose signature is the key's over
//
//	"SSHSIG" string(namespace) string(reserved) string(hash_algorithm) string(H(message)).
const (
	sigMagic   = "SSHSIG"
	sigVersion = 1
	armorBegin = "-----BEGIN SSH SIGNATURE-----"
	armorEnd   = "-----END SSH SIGNATURE-----"
)

// sshsig is a decoded signature blob.
type sshsig struct {
	Version   uint32
	PublicKey []byte
	Namespace string
	Reserved  []byte
	HashAlg   string
	Signature []byte
}

// signedData is what the key signs for a message whose digest is sum.
type signedData struct {
	Namespace string
	Reserved  []byte
	HashAlg   string
	Hash      []byte
}

// decodeArmor returns the blob inside an armored SSH signature. Only the
// armor lines and base64 lines between them are accepted.
func decodeArmor(armored []byte) ([]byte, *RefusedError) {
	text := bytes.TrimRight(armored, "\n")
	lines := bytes.Split(text, []byte("\n"))
	if len(lines) < 3 || string(lines[0]) != armorBegin || string(lines[len(lines)-1]) != armorEnd {
		return nil, refuse(BadSignature, "the signature is not an armored SSH signature (%s … %s)", armorBegin, armorEnd)
	}
	var b64 []byte
	for _, l := range lines[1 : len(lines)-1] {
		b64 = append(b64, bytes.TrimRight(l, "\r")...)
	}
	blob := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Strict().Decode(blob, b64)
	if err != nil {
		return nil, refuse(BadSignature, "the SSH signature's armor holds invalid base64: %v", err)
	}
	return blob[:n], nil
}

// verifySSHSIG checks an armored SSHSIG over message in namespace ns and
// returns the key that made it.
func verifySSHSIG(armored, message []byte, ns string) (ssh.PublicKey, *RefusedError) {
	blob, rerr := decodeArmor(armored)
	if rerr != nil {
		return nil, rerr
	}
	rest, ok := bytes.CutPrefix(blob, []byte(sigMagic))
	if !ok {
		return nil, refuse(BadSignature, "the SSH signature does not start with %q", sigMagic)
	}
	var s sshsig
	if err := ssh.Unmarshal(rest, &s); err != nil {
		return nil, refuse(BadSignature, "the SSH signature is malformed: %v", err)
	}
	if s.Version != sigVersion {
		return nil, refuse(BadSignature, "the SSH signature has version %d; only %d is known", s.Version, sigVersion)
	}
	if s.Namespace != ns {
		return nil, refuse(BadSignature, "the SSH signature is for namespace %q, not %q", printable(s.Namespace), ns)
	}
	var h hash.Hash
	switch s.HashAlg {
	case "sha512":
		h = sha512.New()
	case "sha256":
		h = sha256.New()
	default:
		return nil, refuse(BadSignature, "the SSH signature uses hash %q (want sha512 or sha256)", printable(s.HashAlg))
	}
	pub, err := ssh.ParsePublicKey(s.PublicKey)
	if err != nil {
		return nil, refuse(BadSignature, "the SSH signature's public key is malformed: %v", err)
	}
	if _, ok := pub.(*ssh.Certificate); ok {
		return nil, refuse(UnknownKey, "the commit is signed with an SSH certificate; only keys listed in the allowed-signers file are trusted")
	}
	var sig ssh.Signature
	if err := ssh.Unmarshal(s.Signature, &sig); err != nil {
		return nil, refuse(BadSignature, "the SSH signature's signature field is malformed: %v", err)
	}
	// OpenSSH refuses SHA-1 RSA signatures in SSHSIG; so do we.
	if sig.Format == ssh.KeyAlgoRSA {
		return nil, refuse(BadSignature, "the SSH signature is an ssh-rsa (SHA-1) signature; sign with rsa-sha2-512 or an ed25519 key")
	}
	h.Write(message)
	signed := append([]byte(sigMagic), ssh.Marshal(signedData{Namespace: s.Namespace, Reserved: s.Reserved, HashAlg: s.HashAlg, Hash: h.Sum(nil)})...)
	if err := pub.Verify(signed, &sig); err != nil {
		return nil, refuse(BadSignature, "the signature by %s key %s does not match the commit's content (altered after signing?)", pub.Type(), ssh.FingerprintSHA256(pub))
	}
	return pub, nil
}

// printable cuts an untrusted string to at most 64 bytes for a message
// (which quotes it with %q).
func printable(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
