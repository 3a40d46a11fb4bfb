package proxy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ServerState is one server's line of HAProxy's server state file (what
// `show servers state` prints): the fields syslet reads.
type ServerState struct {
	Backend string
	Server  string
	// Admin is srv_admin_state: the maintenance and drain flags set by
	// the configuration (disabled), the runtime API or DNS.
	Admin int
	// Op is srv_op_state: 0 stopped, 1 starting, 2 running, 3 stopping.
	Op int
}

// The flags of srv_admin_state that keep a server from taking new
// requests (HAProxy's SRV_ADMF_MAINT and SRV_ADMF_DRAIN masks): forced,
// inherited and DNS-failed maintenance, forced and inherited drain. The
// configuration's "disabled" sets forced maintenance and a flag of its
// own (0x04) that remembers it: a server readied since keeps that flag
// and takes requests.
const adminNotReady = 0x01 | 0x02 | 0x20 | 0x08 | 0x10

// Ready reports whether the server takes new requests: no maintenance
// and no drain, whoever set them.
func (s ServerState) Ready() bool { return s.Admin&adminNotReady == 0 }

// State is a server state file, read.
type State []ServerState

// ParseState reads a server state file (version 1, the only one HAProxy
// writes): its header line names the columns, so a release that adds
// columns reads the same. Empty data is an empty state (no switch saved
// yet).
func ParseState(data []byte) (State, error) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	if v := strings.TrimSpace(lines[0]); v != "1" {
		return nil, fmt.Errorf("server state file version %q, want 1", v)
	}
	var cols []string
	var st State
	for n, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			cols = strings.Fields(rest)
			continue
		}
		if line == "" {
			continue
		}
		if cols == nil {
			return nil, fmt.Errorf("server state file line %d: a server before the header line", n+2)
		}
		f := strings.Fields(line)
		get := func(name string) (string, error) {
			i := slices.Index(cols, name)
			if i < 0 || i >= len(f) {
				return "", fmt.Errorf("server state file line %d: no %s", n+2, name)
			}
			return f[i], nil
		}
		var s ServerState
		var err error
		var admin, op string
		if s.Backend, err = get("be_name"); err != nil {
			return nil, err
		}
		if s.Server, err = get("srv_name"); err != nil {
			return nil, err
		}
		if admin, err = get("srv_admin_state"); err != nil {
			return nil, err
		}
		if op, err = get("srv_op_state"); err != nil {
			return nil, err
		}
		if s.Admin, err = strconv.Atoi(admin); err != nil {
			return nil, fmt.Errorf("server state file line %d: srv_admin_state: %w", n+2, err)
		}
		if s.Op, err = strconv.Atoi(op); err != nil {
			return nil, fmt.Errorf("server state file line %d: srv_op_state: %w", n+2, err)
		}
		st = append(st, s)
	}
	return st, nil
}

// Ready are the slots of backend that take new requests, in slot order:
// one after a switch, none before the first, both only while a switch
// is under way (the new slot readied, the old one not yet drained).
func (st State) Ready(backend string) []string {
	var out []string
	for _, slot := range Slots {
		for _, s := range st {
			if s.Backend == backend && s.Server == slot && s.Ready() {
				out = append(out, slot)
			}
		}
	}
	return out
}
