package push

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkFanOut200 is push's own cost of one plan on 200 hosts: 200 SSH
// servers in this process on loopback, each answering at once with the
// 60 lines a plan of 50 containers prints, 10 hosts at a time (one
// operation is the whole fan-out, the table included). It prices the
// client and the SSH sessions, not a host's syslet, which the real-host
// figures in BENCHMARKS.md add: go test -run '^$' -bench FanOut -benchmem ./pkg/push
func BenchmarkFanOut200(b *testing.B) {
	for _, batch := range []string{"", "10%"} {
		name := "all"
		if batch != "" {
			name = "batch" + batch
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			plan := strings.Repeat("  ~ c0000.container: changed [Unit] Description\n", 58) +
				"\nPlan: 0 to create, 0 to change, 0 to reload, 50 metadata-only, 0 to remove, 0 to start, 0 to stop, 0 unchanged; 51 actions (digest 5e7b792e4a17).\n"
			handler := func(s *execSession) int {
				io.WriteString(s.Stdout, "syslet plan: 151 spec(s) from 1 source(s) against /srv/t\n\n"+plan)
				return 0
			}
			var jobs []Job
			for i := range 200 {
				srv := startServer(b, f.client.PublicKey(), handler)
				f.know(srv.addr, srv.hostKey.PublicKey())
				jobs = append(jobs, f.job(srv.addr, fmt.Sprintf("t%03d", i)))
			}
			o := f.options(nil, nil, nil)
			o.Parallel = 10
			var s Strategy
			if batch != "" {
				s.Batches, _ = ParseSizes(batch)
				s.MaxFailed = &Size{}
			}
			b.ResetTimer()
			for b.Loop() {
				rep := Rollout(context.Background(), jobs, o, s)
				if AnyFailed(rep.Results) {
					b.Fatalf("a host failed: %+v", rep.Results)
				}
				WriteTable(io.Discard, rep)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/200/1000, "ms/host")
		})
	}
}
