package view

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/runlog"
)

// A run whose commit's signature was checked names its signer: the
// history's row says who, the run's page and JSON say which key too.
func TestHistoryNamesTheSigner(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 11, 30, 0, 0, time.UTC)
	signer := &commitsig.Signer{Principal: "alice@example.org", Fingerprint: "SHA256:abc", KeyType: "ssh-ed25519", Line: 1}
	r := &runlog.RunInfo{Intent: runlog.Record{Run: "r1", Time: t0, Source: "git infra@0123", Signer: signer},
		End: &runlog.Record{Time: t0.Add(time.Second), Result: runlog.ResultOK}}
	var b strings.Builder
	History(&b, []*runlog.RunInfo{r}, nil)
	if !strings.Contains(b.String(), "git infra@0123 (signed by alice@example.org)") {
		t.Errorf("history:\n%s", b.String())
	}
	b.Reset()
	Run(&b, Actions(r))
	if !strings.Contains(b.String(), "signed by alice@example.org (ssh-ed25519 SHA256:abc)\n") {
		t.Errorf("run:\n%s", b.String())
	}
	j, _ := json.Marshal(Summarize(r))
	if !strings.Contains(string(j), `"signer":{"principal":"alice@example.org","fingerprint":"SHA256:abc"`) {
		t.Errorf("json: %s", j)
	}
}
