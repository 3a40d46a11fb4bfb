package executor

import (
	"bytes"
	"io"
)

// progressLines is where one pull's progress goes: podman writes its own
// lines ("Copying blob sha256:…"), which among the apply's log lines read
// as syslet's. Each is written indented under the pull it belongs to,
// "  podman pull REF | Copying blob sha256:…", one whole line a write.
type progressLines struct {
	w      io.Writer
	prefix string
	part   []byte // a line podman has not ended yet
}

// pullProgress is the progress writer of the pull of ref; nil when
// progress goes nowhere (the pull is quiet then).
func pullProgress(w io.Writer, ref string) *progressLines {
	if w == nil {
		return nil
	}
	return &progressLines{w: w, prefix: "  podman pull " + ref + " | "}
}

// writer is the io.Writer to hand to podman: a nil interface when p is
// nil, so that the pull is quiet.
func (p *progressLines) writer() io.Writer {
	if p == nil {
		return nil
	}
	return p
}

func (p *progressLines) Write(b []byte) (int, error) {
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexAny(p.part, "\r\n")
		if i < 0 {
			return len(b), nil
		}
		p.line(p.part[:i])
		p.part = p.part[i+1:]
	}
}

// Close writes a last line podman did not end.
func (p *progressLines) Close() {
	if p != nil {
		p.line(p.part)
		p.part = nil
	}
}

// line writes one of podman's lines under the prefix; an empty one is
// dropped (a "\r\n" ends one line, not two).
func (p *progressLines) line(l []byte) {
	if len(bytes.TrimSpace(l)) == 0 {
		return
	}
	_, _ = io.WriteString(p.w, p.prefix+string(l)+"\n")
}
