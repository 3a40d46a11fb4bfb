package fleet

import (
	"context"

	"github.com/syslet/syslet/pkg/forge"
)

// ForgeReader reads the hosts' commit statuses from a forge: host →
// the status context that host sets (webhookd's syslet/HOSTNAME).
type ForgeReader struct {
	Client   forge.Reader
	Contexts map[string]string
}

// Read reads the commit's statuses once (every page) and picks each
// host's context.
func (f ForgeReader) Read(ctx context.Context, commit string) (map[string]Report, error) {
	all, err := f.Client.Statuses(ctx, commit)
	if err != nil {
		return nil, err
	}
	out := map[string]Report{}
	for host, c := range f.Contexts {
		s, ok := all[c]
		if !ok {
			continue
		}
		rep := Report{Word: s.Word, Description: s.Description}
		switch s.State {
		case forge.Success:
			rep.State = Success
		case forge.Failure:
			rep.State = Failure
		}
		out[host] = rep
	}
	return out, nil
}
