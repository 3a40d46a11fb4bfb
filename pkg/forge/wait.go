package forge

import "context"

// Reader reads a commit's statuses: the latest of each context. Client
// reads them from a forge; a ring waits on them through package fleet.
type Reader interface {
	Statuses(ctx context.Context, commit string) (map[string]Status, error)
}
