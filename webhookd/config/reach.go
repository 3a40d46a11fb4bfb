package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5"
)

// CheckRemotes says what `webhookd --check` can tell of each repository's
// remote without the network: a local one (a path or file://) must be a
// git repository on this host, or every fetch would fail; a remote one is
// not contacted (its first fetch is), and notes say so. Errors name the
// file and the field, as Parse's do.
func (c *Config) CheckRemotes(file string) (notes []string, err error) {
	var errs []error
	for i := range c.Repos {
		r := &c.Repos[i]
		field := fmt.Sprintf("repos[%d].url", i)
		switch {
		case r.endpoint == nil:
			// An invalid URL: Parse said why.
		case r.endpoint.Protocol != "file":
			notes = append(notes, fmt.Sprintf("%s: %s: %s not contacted: --check does not test that a remote is reachable; the first fetch does (its error is in /status and the journal)", file, field, r.RedactedURL()))
		default:
			if err := localRepository(r.endpoint.Path); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %s: %w", file, field, r.URL, err))
			}
		}
	}
	if len(errs) > 0 {
		return notes, fmt.Errorf("%w:\n%w", ErrConfig, errors.Join(errs...))
	}
	return notes, nil
}

// localRepository says why dir is not a git repository webhookd can fetch
// from (nil when it is one, bare or not).
func localRepository(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no such repository: %s does not exist", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("not a git repository: %s is a file", dir)
	}
	if _, err := git.PlainOpen(dir); err != nil {
		return fmt.Errorf("not a git repository: %s: %w", dir, err)
	}
	return nil
}
