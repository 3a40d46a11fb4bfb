package commitsig

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// The armor of a detached OpenPGP signature, as git stores it in gpgsig
// for gpg.format=openpgp (the default).
const (
	pgpSigBegin = "-----BEGIN PGP SIGNATURE-----"
	pgpSigEnd   = "-----END PGP SIGNATURE-----"
)

// verify checks an armored detached OpenPGP signature over payload (the
// commit without its gpgsig header) against the keyring: the signature
// must verify, by a signing-capable key (or subkey) of the keyring that
// is neither revoked nor expired now, nor created after the commit's
// date or the signature's.
func (k *Keyring) verify(sig, payload []byte, when, now time.Time) (Signer, *RefusedError) {
	text := bytes.TrimRight(sig, "\n")
	if !bytes.HasPrefix(text, []byte(pgpSigBegin)) || !bytes.HasSuffix(text, []byte(pgpSigEnd)) {
		return Signer{}, refuse(BadSignature, "the OpenPGP signature is not armored (%s … %s)", pgpSigBegin, pgpSigEnd)
	}
	block, err := armor.Decode(bytes.NewReader(text))
	if err != nil {
		return Signer{}, refuse(BadSignature, "the OpenPGP signature's armor is not readable: %v", err)
	}
	if block.Type != openpgp.SignatureType {
		return Signer{}, refuse(BadSignature, "the OpenPGP armor holds a %q block, not a signature", printable(block.Type))
	}
	// The armor is at most MaxSignature bytes, so is what it decodes to;
	// reading it whole also checks its checksum.
	body, err := io.ReadAll(io.LimitReader(block.Body, MaxSignature))
	if err != nil {
		return Signer{}, refuse(BadSignature, "the OpenPGP signature's armor is not readable: %v", err)
	}
	first, rerr := firstSignature(body)
	if rerr != nil {
		return Signer{}, rerr
	}
	cfg := &packet.Config{Time: func() time.Time { return now }}
	s, e, err := openpgp.VerifyDetachedSignature(k.entities, bytes.NewReader(payload), bytes.NewReader(body), cfg)
	if e == nil {
		return Signer{}, k.failure(first, err)
	}
	who := fmt.Sprintf("OpenPGP key %X (%s)", e.PrimaryKey.Fingerprint, identity(e))
	if err != nil {
		return Signer{}, k.invalid(who, s, e, err, now)
	}
	if weakHash(s.Hash) {
		return Signer{}, refuse(BadSignature, "the signature by %s uses the weak hash %v; sign with SHA-256 or stronger", who, s.Hash)
	}
	for _, t := range []struct {
		at   time.Time
		what string
	}{{when, "the commit's date"}, {s.CreationTime, "the signature's date"}} {
		if t.at.Unix() < e.PrimaryKey.CreationTime.Unix() {
			return Signer{}, refuse(NotYetValid, "%s was created %s, after %s %s", who, e.PrimaryKey.CreationTime.UTC().Format(time.RFC3339), t.what, t.at.UTC().Format(time.RFC3339))
		}
	}
	if self, _ := e.PrimarySelfSignature(); self != nil && e.PrimaryKey.KeyExpired(self, when) {
		return Signer{}, refuse(Expired, "%s had expired at the commit's date %s", who, when.UTC().Format(time.RFC3339))
	}
	return Signer{Principal: identity(e), Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint), KeyType: "openpgp"}, nil
}

// firstSignature reads the first packet of a detached signature, to name
// its issuer when no key of the keyring made it. Anything but signature
// packets is refused before the library sees it.
func firstSignature(body []byte) (*packet.Signature, *RefusedError) {
	packets := packet.NewReader(bytes.NewReader(body))
	var first *packet.Signature
	for n := 0; ; n++ {
		p, err := packets.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, refuse(BadSignature, "the OpenPGP signature is malformed: %v", err)
		}
		s, ok := p.(*packet.Signature)
		if !ok {
			return nil, refuse(BadSignature, "the OpenPGP signature holds a %T packet, not only signatures", p)
		}
		if s.SigType != packet.SigTypeBinary && s.SigType != packet.SigTypeText {
			return nil, refuse(BadSignature, "the OpenPGP signature is of type %#x, not a signature over data", s.SigType)
		}
		if first == nil {
			first = s
		}
		if n >= 8 {
			return nil, refuse(BadSignature, "the OpenPGP signature holds more than 8 signatures")
		}
	}
	if first == nil {
		return nil, refuse(BadSignature, "the OpenPGP armor holds no signature")
	}
	return first, nil
}

// failure names why no key of the keyring verified the signature.
func (k *Keyring) failure(first *packet.Signature, err error) *RefusedError {
	if errors.Is(err, pgperrors.ErrUnknownIssuer) {
		issuer := "an unnamed key"
		switch {
		case first.IssuerFingerprint != nil:
			issuer = fmt.Sprintf("OpenPGP key %X", first.IssuerFingerprint)
		case first.IssuerKeyId != nil:
			issuer = fmt.Sprintf("OpenPGP key ID %016X", *first.IssuerKeyId)
		}
		return refuse(UnknownKey, "signed by %s, which %s does not hold (or not as a signing key)", issuer, k.File)
	}
	return refuse(BadSignature, "the OpenPGP signature does not match the commit's content (altered after signing?): %v", err)
}

// invalid maps the library's verdict on a good signature by a key of the
// keyring that does not count now.
func (k *Keyring) invalid(who string, s *packet.Signature, e *openpgp.Entity, err error, now time.Time) *RefusedError {
	switch {
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return refuse(Expired, "%s is revoked (in %s): it no longer signs deploys", who, k.File)
	case errors.Is(err, pgperrors.ErrKeyExpired) && e.PrimaryKey.CreationTime.After(now):
		return refuse(NotYetValid, "%s is created in the future (%s)", who, e.PrimaryKey.CreationTime.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrKeyExpired):
		return refuse(Expired, "%s has expired (in %s)", who, k.File)
	case errors.Is(err, pgperrors.ErrSignatureExpired) && s != nil && s.CreationTime.After(now):
		return refuse(NotYetValid, "the signature by %s is dated %s, in the future", who, s.CreationTime.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrSignatureExpired):
		return refuse(Expired, "the signature by %s, or its key's binding, has expired", who)
	}
	return refuse(BadSignature, "the signature by %s is not acceptable: %v", who, err)
}

// weakHash: OpenPGP signatures over SHA-1 (or older) are forgeable
// enough that gpg itself distrusts them for new signatures.
func weakHash(h crypto.Hash) bool {
	return h == crypto.MD5 || h == crypto.SHA1 || h == crypto.RIPEMD160
}
