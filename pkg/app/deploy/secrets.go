package deploy

import (
	"errors"
	"fmt"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// ErrSecrets is returned when a secret spec cannot be opened on this host;
// its message names every such spec.
var ErrSecrets = errors.New("secrets cannot be opened on this host (encrypt them for `syslet host-key`); nothing was changed")

// openSecrets decrypts every secret spec while planning, so that a wrong
// recipient, a bad MAC or a missing identity stops --diff and apply by
// spec name before anything is written. Under another root there is no
// host identity to decrypt with and no apply: nothing is opened. An apply
// (not --diff) also records the host identity in the append-only cache.
func openSecrets(req *Request, v view.Operation, out *render.Output) (*secrets.Opened, error) {
	if req.hostless() || len(out.Secrets) == 0 {
		return nil, nil
	}
	kr, err := secrets.Load(req.Root)
	if err != nil {
		return nil, fmt.Errorf("loading the host's age identities: %w", err)
	}
	for _, w := range kr.Warnings {
		v.Warning(w)
	}
	sealed := make([]secrets.Sealed, len(out.Secrets))
	for i, s := range out.Secrets {
		sealed[i] = seal(s)
	}
	opened, err := secrets.OpenAll(sealed, kr)
	if err != nil {
		return nil, fmt.Errorf("%w:\n%w", ErrSecrets, err)
	}
	if !req.Diff {
		if err := kr.Remember(); err != nil {
			opened.Wipe()
			return nil, err
		}
	}
	return opened, nil
}

// secretValues lists the values of the secrets the plan creates or
// replaces, for --diff with SYSLET_SHOW_SECRETS=true.
func secretValues(p *plan.Plan, opened *secrets.Opened) []string {
	if opened == nil {
		return nil
	}
	var lines []string
	for _, a := range p.Actions {
		d := a.Data()
		if a.Op != plan.OpCreateSecret || d.Secret == nil {
			continue
		}
		if v, ok := opened.Value(seal(d.Secret), d.Key); ok {
			lines = append(lines, fmt.Sprintf("  %s = %q", a.Target, v))
		}
	}
	return lines
}

// seal is a rendered secret as pkg/secrets takes it.
func seal(s *render.Secret) secrets.Sealed {
	sd := secrets.Sealed{Name: s.Name, Keys: s.Keys, Hash: s.Hash, Ciphertext: s.Ciphertext}
	if s.Spec != nil {
		sd.Source, sd.Path = s.Spec.Source, s.Spec.Path()
	}
	return sd
}

// decrypter hands the executor the values opened while planning.
type decrypter struct{ opened *secrets.Opened }

func (d decrypter) Decrypt(s *render.Secret) (map[string][]byte, error) {
	return d.opened.Decrypt(seal(s))
}

// scrubResult and scrubGate hide the pass's decrypted secret values in
// the log lines read back from failed units (a container may print its
// own secrets), before they are shown, journalled or sent anywhere.
func scrubResult(res *executor.Result, opened *secrets.Opened) {
	if res == nil || opened == nil {
		return
	}
	for i := range res.Failed {
		scrubLines(res.Failed[i].Log, opened)
		res.Failed[i].Error = opened.Scrub(res.Failed[i].Error)
	}
}

func scrubGate(g *gate.Report, opened *secrets.Opened) {
	if g == nil || opened == nil {
		return
	}
	for i := range g.Failures {
		scrubLines(g.Failures[i].Log, opened)
		g.Failures[i].Reason = opened.Scrub(g.Failures[i].Reason)
	}
}

func scrubLines(lines []string, opened *secrets.Opened) {
	for i, l := range lines {
		lines[i] = opened.Scrub(l)
	}
}
