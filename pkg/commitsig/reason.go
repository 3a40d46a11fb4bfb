package commitsig

import (
	"errors"
	"fmt"
)

// Reason names why a commit was refused. The set is closed: /status,
// metrics labels, notifications and forge statuses show these words.
type Reason string

// The reasons, in the order a check can reach them.
const (
	// Unsigned: the commit carries no signature at all.
	Unsigned Reason = "unsigned"
	// BadSignature: a signature is there but does not verify, is not for
	// this content, or is malformed (too large, not armored, a NUL, …).
	BadSignature Reason = "bad-signature"
	// UnknownKey: a signature by a key the allowed-signers file does not
	// list for the namespace "git" or the keyring does not hold (or a kind
	// of signature no key of which is trusted, such as OpenPGP when only
	// an allowed-signers file is configured).
	UnknownKey Reason = "unknown-key"
	// NotYetValid: the key is listed, but its valid-after (an OpenPGP
	// key's creation) is later than the commit's date or than now.
	NotYetValid Reason = "key-not-yet-valid"
	// Expired: the key is listed, but its valid-before has passed (at the
	// commit's date or now); an OpenPGP key expired or revoked.
	Expired Reason = "key-expired"
)

// Reasons lists every reason, for metrics series that exist from the start.
var Reasons = []Reason{Unsigned, BadSignature, UnknownKey, NotYetValid, Expired}

// ErrRefused matches every *RefusedError.
var ErrRefused = errors.New("commit signature refused")

// RefusedError is a commit the check refused, with its reason and what
// was found.
type RefusedError struct {
	Reason Reason
	Commit string // the commit's hash, when known
	Detail string
}

func (e *RefusedError) Error() string {
	if e.Commit == "" {
		return fmt.Sprintf("%s: %s", e.Reason, e.Detail)
	}
	return fmt.Sprintf("%s: commit %s: %s", e.Reason, short(e.Commit), e.Detail)
}

func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// refuse is the one place a refusal is made.
func refuse(r Reason, format string, args ...any) *RefusedError {
	return &RefusedError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the reason of a refusal anywhere in err's chain, or "".
func ReasonOf(err error) Reason {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ""
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
