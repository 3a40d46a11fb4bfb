package deploy

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// ShowSecretsEnv reveals decrypted values in the text of --diff, and
// nowhere else (not in an apply's output, not in --output json).
const ShowSecretsEnv = "SYSLET_SHOW_SECRETS"

// ErrSecrets is returned when a secret spec cannot be opened on this host;
// its message names every such spec.
var ErrSecrets = errors.New("secrets cannot be opened on this host (encrypt them for `syslet host-key`); nothing was changed")

// openSecrets decrypts every secret spec while planning, so that a wrong
// recipient, a bad MAC or a missing identity stops --diff and apply by
// spec name before anything is written. Under another root there is no
// host identity to decrypt with and no apply: nothing is opened. An apply
// (not --diff) also records the host identity in the append-only cache.
func openSecrets(req *Request, out *render.Output) (*secrets.Opened, error) {
	if req.hostless() || len(out.Secrets) == 0 {
		return nil, nil
	}
	kr, err := secrets.Load(req.Root)
	if err != nil {
		return nil, fmt.Errorf("loading the host's age identities: %w", err)
	}
	for _, w := range kr.Warnings {
		view.Printf(req.Stderr, "syslet: warning: %s\n", w)
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

// printSecretValues lists the values of the secrets the plan creates or
// replaces, for --diff with SYSLET_SHOW_SECRETS=true.
func printSecretValues(w io.Writer, req *Request, p *plan.Plan, opened *secrets.Opened) {
	if !req.Diff || req.JSON || opened == nil || os.Getenv(ShowSecretsEnv) != "true" {
		return
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
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSecret values (%s=true; shown by --diff only):\n", ShowSecretsEnv)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
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

// scrubResult and scrubGate hide the run's decrypted secret values in the
// log lines read back from failed units (a container may print its own
// secrets), before they are printed, journalled or sent anywhere.
func (r *runner) scrubResult(res *executor.Result) {
	if res == nil || r.h.secrets == nil {
		return
	}
	for i := range res.Failed {
		r.scrubLines(res.Failed[i].Log)
		res.Failed[i].Error = r.h.secrets.Scrub(res.Failed[i].Error)
	}
}

func (r *runner) scrubGate(g *gate.Report) {
	if g == nil || r.h.secrets == nil {
		return
	}
	for i := range g.Failures {
		r.scrubLines(g.Failures[i].Log)
		g.Failures[i].Reason = r.h.secrets.Scrub(g.Failures[i].Reason)
	}
}

func (r *runner) scrubLines(lines []string) {
	for i, l := range lines {
		lines[i] = r.h.secrets.Scrub(l)
	}
}
