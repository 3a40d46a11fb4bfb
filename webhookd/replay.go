package webhookd

import "sync"

// seenSet remembers the last max delivery ids, so a captured delivery
// cannot be replayed while its id is remembered. Memory is bounded: the
// oldest id is forgotten first. Replays of older deliveries, or after a
// restart, still cannot move a host backwards: a commit older than the
// one applied is never deployed over it (see worker).
type seenSet struct {
	mu   sync.Mutex
	max  int
	ids  map[string]struct{}
	ring []string
	next int
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, ids: make(map[string]struct{}, max), ring: make([]string, 0, max)}
}

// add records id and reports whether it was new.
func (s *seenSet) add(id string) bool { return s.addAll(id) }

// addAll records every one of ids — the several identities of one
// delivery — and reports whether all were new; when one was seen, none is
// recorded.
func (s *seenSet) addAll(ids ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, ok := s.ids[id]; ok {
			return false
		}
	}
	for _, id := range ids {
		s.record(id)
	}
	return true
}

func (s *seenSet) record(id string) {
	if len(s.ring) < s.max {
		s.ring = append(s.ring, id)
	} else {
		delete(s.ids, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.ids[id] = struct{}{}
}
