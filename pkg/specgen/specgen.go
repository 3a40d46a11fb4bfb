package specgen

import (
	"fmt"
	"strconv"
	"strings"
)

// Options describe a spec set.
type Options struct {
	// Containers is the number of container specs.
	Containers int
	// Images are shared by the containers round-robin (default: one
	// image, registry.example/app:1).
	Images []string
	// PerVolume and PerNetwork are how many containers share one volume
	// or one network (0: no volumes / networks).
	PerVolume  int
	PerNetwork int
	// ConfigFiles is the number of config files of each container.
	ConfigFiles int
	// ConfigDirFiles is the number of files in each container's config
	// dir (0: no config dir). A config dir needs [Service] ExecReload=,
	// which the generator then sets.
	ConfigDirFiles int
	// Exec is the container's command (default: none, the image's own).
	Exec string
	// RunInit runs catatonit as the container's PID 1, so that a command
	// that ignores SIGTERM as PID 1 still stops promptly.
	RunInit bool
	// Changed lists container indexes whose environment differs from the
	// base set (REVISION=2 instead of 1): a content change that restarts
	// exactly those containers.
	Changed []int
}

// Default is the mix the benchmarks use: one volume per 10 containers,
// one network per 50, one config file each and a config dir of two files.
func Default(containers int) Options {
	return Options{Containers: containers, PerVolume: 10, PerNetwork: 50, ConfigFiles: 1, ConfigDirFiles: 2}
}

// Sized returns Default with as many containers as make at least n specs
// in all (containers, volumes and networks).
func Sized(n int) Options {
	o := Default(0)
	for o.Resources() < n {
		o.Containers++
	}
	return o
}

// Volumes is the number of volume specs.
func (o Options) Volumes() int { return groups(o.Containers, o.PerVolume) }

// Networks is the number of network specs.
func (o Options) Networks() int { return groups(o.Containers, o.PerNetwork) }

// Resources is the number of specs Generate writes.
func (o Options) Resources() int { return o.Containers + o.Volumes() + o.Networks() }

func groups(n, per int) int {
	if per <= 0 || n == 0 {
		return 0
	}
	return (n + per - 1) / per
}

// ContainerName is the name of container i ("c00007").
func ContainerName(i int) string { return fmt.Sprintf("c%05d", i) }

// Generate writes the spec set as NDJSON: networks, then volumes, then
// containers, one spec per line.
func Generate(o Options) []byte {
	images := o.Images
	if len(images) == 0 {
		images = []string{"registry.example/app:1"}
	}
	changed := make(map[int]bool, len(o.Changed))
	for _, i := range o.Changed {
		changed[i] = true
	}
	var b strings.Builder
	b.Grow(o.Containers * (400 + 80*(o.ConfigFiles+o.ConfigDirFiles)))
	for i := range o.Networks() {
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"network","name":"n%04d","unit":{"Network":{}}}`+"\n", i)
	}
	for i := range o.Volumes() {
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"volume","name":"v%04d","unit":{"Volume":{}}}`+"\n", i)
	}
	for i := range o.Containers {
		name := ContainerName(i)
		rev := 1
		if changed[i] {
			rev = 2
		}
		b.WriteString(`{"apiVersion":"v1","type":"container","name":"` + name + `"`)
		if o.ConfigFiles > 0 {
			b.WriteString(`,"configFiles":[`)
			for f := range o.ConfigFiles {
				if f > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"mountPath":"/etc/app/f%d.conf","content":"container=%s\nfile=%d\n"}`, f, name, f)
			}
			b.WriteByte(']')
		}
		if o.ConfigDirFiles > 0 {
			b.WriteString(`,"configDirs":[{"mountPath":"/etc/app.d","files":[`)
			for f := range o.ConfigDirFiles {
				if f > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"%02d.conf","content":"container=%s\npart=%d\n"}`, f, name, f)
			}
			b.WriteString(`]}]`)
		}
		b.WriteString(`,"unit":{"Container":{"Image":` + strconv.Quote(images[i%len(images)]))
		if o.PerNetwork > 0 {
			fmt.Fprintf(&b, `,"Network":"n%04d.network"`, i/o.PerNetwork)
		}
		if o.PerVolume > 0 {
			fmt.Fprintf(&b, `,"Volume":{"v%04d.volume":"/data"}`, i/o.PerVolume)
		}
		fmt.Fprintf(&b, `,"Environment":{"INDEX":"%d","REVISION":"%d"}`, i, rev)
		if o.RunInit {
			b.WriteString(`,"RunInit":"true"`)
		}
		if o.Exec != "" {
			b.WriteString(`,"Exec":` + strconv.Quote(o.Exec))
		}
		b.WriteByte('}')
		if o.ConfigDirFiles > 0 {
			b.WriteString(`,"Service":{"ExecReload":` + strconv.Quote("/usr/bin/podman kill --signal HUP "+name) + `}`)
		}
		b.WriteString("}}\n")
	}
	return []byte(b.String())
}
