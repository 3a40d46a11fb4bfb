package quadletcheck_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/load/quadletcheck"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// specs200 is a 200-spec deployment shaped like a busy host: 20 networks,
// 40 volumes, 10 builds and 130 containers using them, with health checks,
// environment, ports and config files.
func specs200() []spec.Source {
	var b strings.Builder
	b.WriteString("[")
	sep := func() {
		if b.Len() > 1 {
			b.WriteString(",\n")
		}
	}
	for i := range 20 {
		sep()
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"network","name":"net%d","unit":{"Network":{"Subnet":"10.%d.0.0/24","Gateway":"10.%d.0.1"}}}`, i, i, i)
	}
	for i := range 40 {
		sep()
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"volume","name":"vol%d","reclaimPolicy":"Retain","unit":{"Volume":{"Label":"app=vol%d"}}}`, i, i)
	}
	for i := range 10 {
		sep()
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"build","name":"img%d","containerfile":"FROM docker.io/library/busybox:1.37\nRUN true\n","unit":{"Build":{"ImageTag":"localhost/img%d:latest"}}}`, i, i)
	}
	for i := range 130 {
		sep()
		image := fmt.Sprintf(`"docker.io/library/nginx:1.%d"`, i%30)
		if i%13 == 0 {
			image = fmt.Sprintf(`"img%d.build"`, i%10)
		}
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"container","name":"app%d",
		 "configFiles":[{"mountPath":"/etc/app/app.conf","content":"port = %d\n"}],
		 "unit":{"Unit":{"Description":"app %d"},"Container":{"Image":%s,"Exec":"run --port %d",
		  "Network":{"net%d.network":"alias=app%d"},"Volume":{"vol%d.volume":"/data","/srv/app%d":"/srv:ro"},
		  "Environment":{"APP_ID":"%d","APP_MODE":"production"},"PublishPort":"%d:80",
		  "HealthCmd":"wget -q -O /dev/null http://localhost/","HealthInterval":"30s","Notify":"healthy",
		  "NoNewPrivileges":"true","DropCapability":"ALL","AddCapability":"NET_BIND_SERVICE"},
		  "Service":{"TimeoutStartSec":"120"}}}`, i, 8000+i, i, image, 8000+i, i%20, i, i%40, i, i, 10000+i)
	}
	b.WriteString("]")
	return []spec.Source{{Name: "bench.json", Data: []byte(b.String())}}
}

// BenchmarkValidate200 is what `syslet validate` does for 200 specs once
// they are read: decode and pre-render checks, render, post-render checks,
// and podman's quadlet converter over the whole set. Issue 14 budgets it
// at 50 ms.
func BenchmarkValidate200(b *testing.B) {
	srcs := specs200()
	set := load.Sources(srcs)
	set.CheckPodman(unit.OldestPodman)
	specs, rep := set.Specs, set.Report
	if len(specs) != 200 || len(rep.Findings) > 0 {
		b.Fatalf("%d specs, findings:\n%s", len(specs), rep.String())
	}
	start := cpuTime()
	n := 0
	for b.Loop() {
		load.Sources(srcs).CheckPodman(unit.OldestPodman)
		n++
	}
	// CPU time (user + system, all threads, GC included) per validation:
	// unlike ns/op it does not grow when other processes share the cores.
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(n), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConverter200 is the converter step alone.
func BenchmarkConverter200(b *testing.B) {
	set := load.Sources(specs200())
	out, rep := set.Out, set.Report
	for b.Loop() {
		quadletcheck.Check(out, unit.OldestPodman, rep)
	}
}
