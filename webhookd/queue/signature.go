package queue

import (
	"time"

	"github.com/syslet/syslet/pkg/commitsig"
)

// verify checks that commit is signed by a key of the repository's
// verify.allowedSigners or verify.keyring and returns who signed it; nil, nil when the
// repository asks for no check. It reads the commit object only: nothing
// is checked out. A refusal is a *commitsig.RefusedError, whose reason
// the attempt's ending records (ending.go).
func (w *Worker) verify(commit string) (*commitsig.Signer, error) {
	trust := w.cfg.Trust()
	if trust.IsZero() {
		return nil, nil
	}
	raw, err := w.co.RawCommit(commit)
	if err != nil {
		return nil, err
	}
	s, err := trust.Verify(commit, raw, time.Now())
	if err != nil {
		return nil, err
	}
	w.log.Info().Str("commit", commit).Str("principal", s.Principal).Str("key", s.Fingerprint).Msg("commit signature verified")
	return &s, nil
}
