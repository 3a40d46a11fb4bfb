package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/plan"
)

// stream200 is a host with 200 containers, each with a config file, on
// one network and one volume.
func stream200() string {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","type":"network","name":"net","unit":{}}` + "\n")
	b.WriteString(`{"apiVersion":"v1","type":"volume","name":"data","unit":{}}` + "\n")
	for i := range 200 {
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"container","name":"c%03d","configFiles":[{"mountPath":"/etc/c.conf","content":"n=%d\n"}],"unit":{"Container":{"Image":"registry.example/app:1","Network":"net.network","Volume":"data.volume:/data","Environment":{"N":"%d"}}}}`+"\n", i, i, i)
	}
	return b.String()
}

// BenchmarkPlanConverged200 measures the pure diff of a converged host
// with 200 containers: the work every no-op apply and --diff does after
// reading the host.
func BenchmarkPlanConverged200(b *testing.B) {
	t := &testing.T{}
	out := renderStream(t, stream200())
	h := install(t, out)
	b.ResetTimer()
	for b.Loop() {
		if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
			b.Fatal("converged host planned actions")
		}
	}
}

// BenchmarkRenderValidate200 measures load, validation and render of 200
// container specs.
func BenchmarkRenderValidate200(b *testing.B) {
	t := &testing.T{}
	s := stream200()
	for b.Loop() {
		renderStream(t, s)
	}
}
